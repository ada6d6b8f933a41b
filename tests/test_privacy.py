"""Nothing leaves the machine, and nothing Hearth starts outlives it.

Every command that loads a model runs as a user runs it, under audit (tests/audited.py): HOME at a
folder of its own, and an audit hook in each of its processes. One HOME starts empty, so that the
first command converts the checkpoint (`hearth chat` does, while it reads stdin: the case where
OpenVINO's telemetry fork used to hang); the module's other commands start with the run's
conversions in theirs. Then: no fork without exec, no connection or name lookup for
anything but loopback, nothing under HOME but Hearth's cache, and no process of the command left.
`hearth cluster` (Ray's processes) is audited the same way in test_cluster.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from audited import Audited
from fake_llm import FakeLLM
from servers import free_port


@pytest.fixture(scope="module")
def audited(tmp_path_factory, fast_engine) -> Audited:
    """One HOME for the module's tests, its cache holding the run's conversions of the tiny checkpoint
    (made for `fast_engine` if no test had made them yet): converting into an empty HOME is audited
    once, by the chat test, in a HOME of its own."""
    audited = Audited(tmp_path_factory.mktemp("privacy"))
    audited.seed_cache(Path(os.environ["HEARTH_CACHE"]))
    return audited


def test_the_audit_sees_a_sender_a_fork_and_a_stray_process(audited, tmp_path):
    """The hook and the checks catch what they are meant to: a lookup of a public name, a fork
    without exec, and a child left behind (so the tests below cannot pass by seeing nothing)."""
    probe = Audited(tmp_path)
    code = ("import os, socket, subprocess, sys\n"
            "try:\n    socket.getaddrinfo('telemetry.example.com', 443)\nexcept OSError:\n    pass\n"
            "pid = os.fork()\n"
            "if pid == 0:\n    os._exit(0)\n"
            "os.waitpid(pid, 0)\n"
            "open(os.path.expanduser('~/stray'), 'w').close()\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n")
    subprocess.run([sys.executable, "-c", code], env=probe.env(), check=True, timeout=60)
    events = {r["event"] for r in probe.records()}
    assert events == {"socket.getaddrinfo", "os.fork"}
    assert probe.outside_cache() == ["stray"]
    stray = probe.left_over(grace_s=0)
    assert len(stray) == 1
    os.kill(int(stray[0].split(":")[0]), signal.SIGKILL)


def test_chat_converting_while_it_reads_stdin(tmp_path, tiny_dir):
    """The first start with a checkpoint (conversion) while `hearth chat` reads stdin on a thread: it
    answers, ends when stdin does, and leaves nothing behind. A `hearth say` started while chat
    converts the vocoder waits for that conversion instead of making its own. (A HOME of its own,
    empty: the module's holds the run's conversions.)"""
    audited = Audited(tmp_path)
    log = audited.work / "chat.err"
    with FakeLLM(["Hello from the fake model."], rate=400) as llm, open(log, "w", encoding="utf-8") as err_file:
        proc = audited.popen("chat", "--llm", llm.url, "--model", str(tiny_dir), "--voice", "ryan",
                             "--language", "english", "--seed", "3", "--out", "chat.wav",
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err_file, text=True)
        try:
            deadline = time.monotonic() + 120
            while "converting the vocoder" not in log.read_text(encoding="utf-8") and proc.poll() is None:
                assert time.monotonic() < deadline, log.read_text(encoding="utf-8")
                time.sleep(0.05)
            said = audited.run("say", "Hello there.", "--model", str(tiny_dir), "--seed", "1",
                               "--max-new-tokens", "8", "--out", "say.wav")
            out, _ = proc.communicate("Say hello.\n", timeout=300)
        finally:
            proc.kill()
    err = log.read_text(encoding="utf-8")
    assert proc.returncode == 0, err
    assert "waiting for it" in said.stderr and "converting the vocoder" not in said.stderr, said.stderr
    assert (audited.work / "say.wav").stat().st_size > 44
    lines = [line for line in err.splitlines() if line.strip()]
    assert any("converting the vocoder" in line for line in lines), err  # the first start: it converted here
    # and said only Hearth's own lines: no warning of torch's export or of a converter
    assert all(line.startswith("hearth: ") for line in lines), err
    assert "Hello from the fake model." in out
    assert (audited.work / "chat.wav").stat().st_size > 44
    audited.check("hearth chat, and hearth say beside it")


def test_codes_speak_voice_add(audited, tiny_dir, base_dir):
    import soundfile as sf

    codes = json.loads(audited.run("codes", "Hello.", "--model", str(tiny_dir), "--seed", "1",
                                   "--max-new-tokens", "4").stdout)
    assert codes
    audited.run("speak", "--model", str(tiny_dir), "--voice", "serena", "--language", "english", "--sink", "null",
                "--max-new-tokens", "6", stdin="One line.\nAnother line.\n")
    rng = np.random.default_rng(5)
    sf.write(audited.work / "ref.wav", (0.1 * rng.standard_normal(24000 * 2)).astype(np.float32), 24000)
    # Without priming: that would convert a second vocoder (the Base checkpoint's) in this home, 20 s
    # more of what chat's conversion above already audits; priming itself is test_clone's.
    voice = audited.run("voice", "add", "neighbour", "--audio", "ref.wav", "--text", "A reference recording.",
                        "--model", str(base_dir), "--no-prime")
    assert voice.returncode == 0 and (audited.home / ".cache/hearth/voices/neighbour.safetensors").is_file()
    audited.check("codes, speak, voice add")


def test_onnx_runtime_alone_records_nothing(tmp_path, tiny_dir):
    """`--small` runs on ONNX Runtime alone, whose import records a usage event to upload (a device
    ID, the OS, the Python path) under ~/.cache/Microsoft unless told not to (hearth.platform.privacy): the
    same run with ONNX Runtime's own switch set to "0" by the user writes there, ours nothing."""
    (tmp_path / "told").mkdir(), (tmp_path / "user").mkdir()
    probe = Audited(tmp_path / "told", keep_cache=True)  # (the session's conversions: HOME stays empty)
    probe.run("say", "Small.", "--model", str(tiny_dir), "--small", "--seed", "1", "--max-new-tokens", "4",
              "--out", str(probe.work / "small.wav"))
    probe.check("say --small")
    user = Audited(tmp_path / "user")
    r = subprocess.run([sys.executable, "-c", "import hearth, onnxruntime"],
                       env={**user.env(), "ORT_DISABLE_TELEMETRY": "0"}, cwd=user.work, capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert any(p.startswith(".cache/Microsoft") for p in user.outside_cache())  # (the audit would see it)


def test_serve_and_wyoming_until_sigterm(audited, tiny_dir):
    port = free_port()
    serve = audited.popen("serve", "--model", str(tiny_dir), "--port", str(port), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    try:
        _wait_http(f"http://127.0.0.1:{port}/health", serve)
        body = json.dumps({"model": "tts-1", "input": "Hi.", "voice": "ryan", "response_format": "pcm",
                           "max_new_tokens": 4, "seed": 1}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/audio/speech", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as r:
            assert len(r.read()) > 0
    finally:
        serve.send_signal(signal.SIGTERM)
        _, err = serve.communicate(timeout=60)
    assert serve.returncode == 0, err

    wy_port = free_port()
    wyoming = audited.popen("wyoming", "--model", str(tiny_dir), "--uri", f"tcp://127.0.0.1:{wy_port}",
                            "--max-new-tokens", "4", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        audio = asyncio.run(_wyoming_synthesize(wy_port, wyoming))
        assert audio > 0
    finally:
        wyoming.send_signal(signal.SIGTERM)
        _, err = wyoming.communicate(timeout=60)
    assert wyoming.returncode == 0, err
    audited.check("serve, wyoming")


def test_tune_its_bench_processes_and_accuracy(audited, tiny_dir):
    # Tune's candidates are `hearth bench --json` processes, audited as its children. One setting:
    # each candidate is a process of its own, and all of them take a minute here.
    tuned = json.loads(audited.run("tune", "--model", str(tiny_dir), "--frames", "4", "--runs", "1", "--only",
                                   "max_batch", "--json").stdout)
    assert {e["variable"] for e in tuned["experiments"]} == {"plan", "max_batch"}
    assert tuned["best"]["max_batch"] in (1, 2, 4, 8)
    audited.run("accuracy", "--model", str(tiny_dir), "--frames", "4", "--json")
    audited.check("tune (and its bench processes), accuracy")


def test_sigterm_stops_a_command_and_its_children(audited, tiny_dir):
    """SIGTERM in the middle of `hearth bench`: the command ends (143) and so does every process it
    started (its conversion subprocess among them); Ctrl-C (SIGINT) the same, with 130."""
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        # With Python's fault handler on, a bench that outlives the signal can be made to show where
        # each of its threads is (SIGABRT) before the test fails (it did once, in a fresh venv).
        # A shell that runs the suite in the background ignores SIGINT, and a child inherits that (as
        # it should: the bench then outlived its SIGINT, twice in fresh runs). A terminal's Ctrl-C is
        # what is tested, so the child starts from a process that does not ignore it.
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            proc = audited.popen("bench", "--model", str(tiny_dir), "--frames", "200", "--runs", "20",
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, extra_env={"PYTHONFAULTHANDLER": "1"})
        finally:
            signal.signal(signal.SIGINT, previous)
        deadline = time.monotonic() + 120
        while not [p for p in audited.left_over(grace_s=0) if not p.startswith(f"{proc.pid}:")]:
            assert proc.poll() is None and time.monotonic() < deadline, "bench started no child process"
            time.sleep(0.02)
        proc.send_signal(sig)  # to the command alone (a terminal's Ctrl-C would reach the child too)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            _, err = proc.communicate(timeout=30)
            pytest.fail(f"bench still running 60 s after {signal.Signals(sig).name}; its threads:\n"
                        f"{err.decode(errors='replace')[-6000:]}")
        assert proc.returncode == code, err
        audited.check(f"bench ended by {signal.Signals(sig).name}")


def _wait_http(url: str, proc: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not become ready")


async def _wyoming_synthesize(port: int, proc: subprocess.Popen, timeout: float = 300) -> int:
    from wyoming.audio import AudioChunk, AudioStop
    from wyoming.client import AsyncTcpClient
    from wyoming.tts import Synthesize, SynthesizeVoice

    deadline = time.monotonic() + timeout
    while True:  # it answers describe while it loads, and holds a synthesis until it is ready
        assert proc.poll() is None
        try:
            client = AsyncTcpClient("127.0.0.1", port)
            await client.connect()
            break
        except OSError:
            assert time.monotonic() < deadline, "hearth wyoming did not listen"
            await asyncio.sleep(0.2)
    received = 0
    try:
        await client.write_event(Synthesize(text="Hi.", voice=SynthesizeVoice(name="ryan")).event())
        while True:
            event = await asyncio.wait_for(client.read_event(), timeout=max(1.0, deadline - time.monotonic()))
            assert event is not None
            if AudioChunk.is_type(event.type):
                received += len(AudioChunk.from_event(event).audio)
            elif AudioStop.is_type(event.type):
                return received
    finally:
        await client.disconnect()
