"""`hearth chat` against a fake OpenAI-compatible LLM (tests/fake_llm.py) that streams at set rates.

The command runs as a user runs it (a subprocess, lines on stdin, speech to a WAV file): answers are
spoken while they stream (the audio equals each sentence's interleaved audio, seed + i), the
history carries what was said, and a line typed while it speaks stops the speech, closes the LLM
stream and puts only the spoken part into the history.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import soundfile as sf  # noqa: E402
from fake_llm import FakeLLM

from hearth.runtime.agent import ChatStream, chat_url
from hearth.text.sentences import split_sentences


class Chat:
    """A `hearth chat` process; stderr lines collected as they come."""

    def __init__(self, tiny_dir, llm, out, *extra):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hearth.cli", "chat", "--llm", llm.url, "--model", str(tiny_dir), "--backend",
             "torch", "--voice", "ryan", "--language", "english", "--out", str(out), *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.err: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.err.append(line)

    def wait_for(self, fragment, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(fragment in line for line in self.err):
                return next(line for line in self.err if fragment in line)
            assert self.proc.poll() is None, "".join(self.err)
            time.sleep(0.02)
        raise AssertionError(f"no {fragment!r} in:\n{''.join(self.err)}")

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def finish(self):
        self.proc.stdin.close()
        out = self.proc.stdout.read()
        self.proc.wait(timeout=60)
        self._reader.join(timeout=10)
        return self.proc.returncode, out, "".join(self.err)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()


def test_chat_speaks_answers_and_keeps_the_history(tiny_dir, engine, tmp_path):
    answers = ["Sure thing. The river is calm tonight, and the fire is warm.", "Goodbye, my friend!"]
    out = tmp_path / "chat.wav"
    with FakeLLM(answers, rate=50) as llm:
        chat = Chat(tiny_dir, llm, out, "--seed", "5", "--max-new-tokens", "8", "--system", "Be brief.")
        try:
            chat.wait_for("ready:")
            chat.send("Hello?")
            report = chat.wait_for("turn 1:")
            chat.send("")  # an empty line between turns is nothing
            chat.send("And bye?")
            chat.wait_for("turn 2:")
            code, stdout, err = chat.finish()
        finally:
            chat.kill()
    assert code == 0, err
    assert "first LLM token to first audio" in report and "barge-in" not in report
    assert answers[0] in stdout and answers[1] in stdout  # the text, as it streamed
    assert [c.body["model"] for c in llm.calls] == ["fake-llm", "fake-llm"]  # from GET /v1/models
    assert all(c.body["stream"] is True for c in llm.calls)
    assert llm.calls[1].body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello?"},
        {"role": "assistant", "content": answers[0]},
        {"role": "user", "content": "And bye?"},
    ]
    samples, rate = sf.read(out, dtype="float32")
    assert rate == 24000
    parts = [engine.synthesize(s, "ryan", "english", seed=5 + i, max_new_tokens=8, text_mode="interleaved").samples
             for answer in answers for i, s in enumerate(split_sentences(answer))]
    expected = np.concatenate(parts)
    assert len(samples) == len(expected)
    assert np.allclose(samples, expected, atol=1 / 32768 + 1e-6)  # s16 in the file


def test_barge_in_stops_speech_closes_the_llm_and_keeps_what_was_said(tiny_dir, tmp_path):
    long = ("Once upon a time there was a little house by a river where an old man lived with his cat and his "
            "books and he read to the cat every single evening until the candles burned down to nothing at all.")
    out = tmp_path / "chat.wav"
    with FakeLLM([long, "Yes."], rate=5) as llm:  # a slow LLM: the answer is far from written when we speak
        chat = Chat(tiny_dir, llm, out, "--seed", "2", "--max-new-tokens", "300", "--llm-model", "m")
        try:
            chat.wait_for("ready:")
            chat.send("Tell me a story.")
            part = tmp_path / "chat.wav.part"  # the WAV is written under this name until it is complete
            deadline = time.monotonic() + 120
            while (not part.exists() or part.stat().st_size < 44 + 4 * 1920 * 2) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert part.stat().st_size >= 44 + 4 * 1920 * 2, "".join(chat.err)
            t_barge = time.monotonic()
            chat.send("Stop. Are you there?")
            report = chat.wait_for("turn 1:")
            chat.wait_for("turn 2:")
            code, _, err = chat.finish()
        finally:
            chat.kill()
    assert code == 0, err
    first = llm.calls[0]
    assert first.done.wait(10) and first.closed_early_at is not None, "the LLM stream was not closed"
    assert first.sent < first.total and first.closed_early_at - t_barge < 2.0
    assert "barge-in" in report, err
    stop_s = float(report.split("silent after ")[1].split(" s")[0])
    assert stop_s < 0.2  # within a block or so of playback
    history = llm.calls[1].body["messages"]
    assert history[1:3][0] == {"role": "user", "content": "Tell me a story."}
    said = history[2]
    assert said["role"] == "assistant" and said["content"] and long.startswith(said["content"])
    assert len(said["content"]) < len(long)
    assert history[3] == {"role": "user", "content": "Stop. Are you there?"}


def test_llm_errors_are_reported_and_the_chat_goes_on(tiny_dir, tmp_path):
    with FakeLLM(["Fine."], rate=50) as llm:
        chat = Chat(tiny_dir, llm, tmp_path / "c.wav", "--llm-model", "m", "--max-new-tokens", "3")
        try:
            chat.wait_for("ready:")
            llm.close()  # the LLM goes away
            chat.send("Anyone?")
            line = chat.wait_for("turn 1")
            code, _, err = chat.finish()
        finally:
            chat.kill()
    assert code == 0, err
    assert "cannot reach the LLM" in line, line
    assert "hearth: 1 turn\n" in err  # the chat went on to the end of its input


def test_chat_url_and_stream_parsing():
    assert chat_url("http://h:1/v1") == "http://h:1/v1/chat/completions"
    assert chat_url("http://h:1") == "http://h:1/v1/chat/completions"
    assert chat_url("h:1/v1/chat/completions") == "http://h:1/v1/chat/completions"
    with pytest.raises(ValueError, match="http"):
        chat_url("ftp://h/v1")
    with FakeLLM(["Hello there, friend."], rate=200) as llm:
        assert "".join(ChatStream(llm.url, "m", [{"role": "user", "content": "hi"}])) == "Hello there, friend."
