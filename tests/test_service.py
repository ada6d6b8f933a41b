"""The resident speaker (a player over its own scheduler): voices without reload, cancel, fault
isolation on every backend, bounded buffering, bad input."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from faults import failing_rows, failing_vocoder

from hearth import InputError
from hearth.runtime.service import Service
from hearth.streaming.sinks import NullSink


class RecordingSink(NullSink):
    """A real-time null sink that also records when each block was written (and can fail once)."""

    def __init__(self, sample_rate, realtime=True, fail_on_write=None):
        super().__init__(sample_rate, realtime=realtime, buffer_s=0.04)
        self.times: list[float] = []
        self.audio: list[np.ndarray] = []
        self.fail_on_write = fail_on_write
        self.writes = 0

    def write(self, samples):
        self.writes += 1
        if self.writes == self.fail_on_write:
            raise OSError("injected sink fault")
        self.times.append(time.monotonic())
        self.audio.append(np.array(samples))
        return super().write(samples)


def baseline(engine, text, voice, language, seed, max_new_tokens=13):
    return engine.generate_codes(text, voice, language, seed=seed, max_new_tokens=max_new_tokens).codes


def test_voices_switch_without_reload(engine):
    lm, vocoder = engine.lm, engine.vocoder
    with Service(engine, NullSink(engine.sample_rate), keep_codes=True, max_new_tokens=13) as service:
        jobs = [service.say("Hello there.", voice=v, language=lang, seed=7)
                for v, lang in [("ryan", "english"), ("vivian", "chinese"), ("eric", "auto"), ("sohee", "korean")]]
        for job in jobs:
            assert job.wait(120)
    assert engine.lm is lm and engine.vocoder is vocoder
    for job in jobs:
        assert job.status == "done" and len(job.sentences) == 1
        s = job.sentences[0]
        assert np.array_equal(s.codes, baseline(engine, "Hello there.", job.voice, job.language, 7))


def test_long_mixed_text_is_spoken_sentence_by_sentence(engine):
    text = "First sentence here. 第二句话。Third one, in English! 四番目の文です。"
    with Service(engine, NullSink(engine.sample_rate), keep_codes=True, max_new_tokens=13) as service:
        job = service.say(text, voice="serena", seed=100)
        assert job.wait(120)
    assert [s.text for s in job.sentences] == ["First sentence here.", "第二句话。", "Third one, in English!",
                                               "四番目の文です。"]
    for s in job.sentences:
        assert s.status == "done"
        assert np.array_equal(s.codes, baseline(engine, s.text, "serena", "auto", s.seed))
    assert [s.seed for s in job.sentences] == [100, 101, 102, 103]


def test_buffering_is_bounded(engine):
    """With a real-time sink, generation runs at most one sentence ahead of playback."""
    text = " ".join(f"Sentence number {i} is here." for i in range(6))
    with Service(engine, RecordingSink(engine.sample_rate), max_new_tokens=11) as service:
        job = service.say(text, voice="aiden", seed=1)
        assert job.wait(300)
        assert job.status == "done" and len(job.sentences) == 6
        assert service.max_sentences_buffered == 2  # the one playing and the next one


def test_cancel_is_quick_and_clean(engine):
    sink = RecordingSink(engine.sample_rate)
    with Service(engine, sink, keep_codes=True, max_new_tokens=13) as service:
        job = service.say(" ".join(["A long sentence that keeps going for a while."] * 8), voice="ryan", seed=3)
        queued = service.say("This one is queued behind it.", voice="ryan", seed=4)
        deadline = time.monotonic() + 60
        while job.first_audio_s is None:
            assert time.monotonic() < deadline and job.status not in ("done", "failed", "cancelled"), job.status
            time.sleep(0.01)
        time.sleep(0.3)
        t_cancel = time.monotonic()
        service.cancel()
        assert job.wait(10) and queued.wait(10)
        last_write = sink.times[-1]
        assert job.status == "cancelled" and queued.status == "cancelled"
        assert last_write - t_cancel < 0.08  # audio stops within one frame time
        if last_write >= t_cancel:  # written after the cancel: only a short fade to silence
            faded = sink.audio[-1]
            assert len(faded) <= int(0.011 * engine.sample_rate)
            if len(faded) > 1:
                assert abs(faded[-1]) <= abs(faded[0]) + 1e-6  # fade-out ends at silence
        # (else nothing was written after it: playback had caught up with generation, a slow machine)
        assert service.idle()
        after = service.say("After the cancel.", voice="vivian", language="english", seed=9)
        assert after.wait(60) and after.status == "done"
        assert np.array_equal(after.sentences[0].codes, baseline(engine, "After the cancel.", "vivian", "english", 9))


def test_sink_fault_fails_one_sentence(engine):
    sink = RecordingSink(engine.sample_rate, realtime=False, fail_on_write=2)
    with Service(engine, sink, keep_codes=True, max_new_tokens=13) as service:
        job = service.say("This sentence meets a broken sink. This one plays fine.", voice="dylan", seed=11)
        assert job.wait(60)
    first, second = job.sentences
    assert first.status == "failed" and "injected sink fault" in first.error
    assert second.status == "done"
    assert np.array_equal(second.codes, baseline(engine, second.text, "dylan", "auto", 12))


@pytest.mark.parametrize("stage", ["generation", "vocoder"])
def test_engine_fault_fails_one_sentence(any_engine, monkeypatch, stage):
    engine = any_engine
    error = RuntimeError(f"injected {stage} fault")
    if stage == "generation":
        failing_rows(engine, monkeypatch, "predict", at=3, error=error)
    else:
        failing_vocoder(engine, monkeypatch, at=2, error=error)
    with Service(engine, NullSink(engine.sample_rate), keep_codes=True, max_new_tokens=13) as service:
        job = service.say("Broken in the middle. Then all is well.", voice="uncle_fu", seed=21)
        assert job.wait(60)
    monkeypatch.undo()
    first, second = job.sentences
    assert first.status == "failed" and f"injected {stage} fault" in first.error
    assert second.status == "done"
    assert np.array_equal(second.codes, baseline(engine, second.text, "uncle_fu", "auto", 22))


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("", "empty"),
        ("   \n\t ", "empty"),
        ("?!... —", "nothing to speak"),
        ("😀🎉👍", "nothing to speak"),
        ("x" * 1_000_001, "at most"),
    ],
)
def test_bad_input_keeps_service_up(engine, text, fragment):
    with Service(engine, NullSink(engine.sample_rate), max_new_tokens=6) as service:
        with pytest.raises(InputError, match=fragment):
            service.say(text)
        with pytest.raises(InputError, match="vivian"):
            service.say("Hello.", voice="nobody")
        job = service.say("Still \x00 here\x07.", seed=1)  # control characters are spoken around
        assert job.wait(60) and job.status == "done"
        assert job.sentences[0].text == "Still here."


def test_close_while_speaking(engine):
    service = Service(engine, RecordingSink(engine.sample_rate), max_new_tokens=30)
    job = service.say(" ".join(["Keep talking."] * 20), seed=1)
    while job.first_audio_s is None:
        time.sleep(0.01)
    service.close()
    assert job.wait(5) and job.status == "cancelled"
    assert not [t for t in threading.enumerate() if t.name.startswith("hearth-service")]


def test_cancel_right_after_submit_never_lets_a_request_through(engine):
    """A request submitted before cancel() is cancelled, even while it is being taken off the queue."""
    sink = RecordingSink(engine.sample_rate, realtime=False)
    with Service(engine, sink, max_new_tokens=4) as service:
        for i in range(25):
            job = service.say(f"Request number {i}.", seed=i)
            if i % 5:
                time.sleep(0.001 * i)  # vary where the synthesis thread is when the cancel lands
            service.cancel()
            assert job.wait(30)
            assert job.status == "cancelled"
            assert all(s.status == "cancelled" for s in job.sentences)
        after = service.say("And then one that plays.", seed=1)
        assert after.wait(30) and after.status == "done"
