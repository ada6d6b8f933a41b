"""The streaming pipeline: chunked audio equals the whole decode, codes are unchanged, failures
reach the caller, and closing or abandoning a stream stops generation."""

from __future__ import annotations

import concurrent.futures
import gc
import time

import numpy as np
import pytest
from faults import failing_rows, failing_vocoder

import hearth
from hearth.streaming.chunks import ChunkPlan
from hearth.streaming.sinks import snr_db
from hearth.tools.random_checkpoint import tiny_configs, write_checkpoint


@pytest.fixture(scope="module")
def window_engine(tmp_path_factory):
    """A tiny model whose vocoder attends over only 12 frames, so long streams cross it many times."""
    config, codec = tiny_configs("0b6", hidden=32, layers=1, window=12)
    return hearth.load(write_checkpoint(tmp_path_factory.mktemp("win12"), config, codec, seed=77), backend="torch")


@pytest.fixture(scope="module")
def long_codes(window_engine):
    return window_engine.generate_codes("A long utterance for the stream.", "vivian", seed=1, max_new_tokens=171,
                                        budget=None)


@pytest.mark.parametrize("chunk", [1, 5, 8])  # one frame, the default, longer than the first chunk
def test_streamed_audio_equals_whole_decode(window_engine, long_codes, chunk):
    assert long_codes.codes.shape[0] == 170
    whole = window_engine.decode(long_codes.codes)
    with window_engine.stream("A long utterance for the stream.", "vivian", seed=1, max_new_tokens=171, budget=None,
                              chunk_frames=chunk, first_chunk_frames=min(2, chunk)) as stream:
        chunks = list(stream)
    codes = np.concatenate([c.codes for c in chunks])
    assert np.array_equal(codes, long_codes.codes)  # streaming does not change generation
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert [c.start_frame for c in chunks] == [sum(x.frames for x in chunks[:i]) for i in range(len(chunks))]
    assert all(len(c.samples) == 1920 * c.frames for c in chunks)
    assert chunks[-1].is_last and not any(c.is_last for c in chunks[:-1])
    plan = ChunkPlan(chunk, min(2, chunk))
    assert [c.frames for c in chunks[:-1]] == [plan.length(i) for i in range(len(chunks) - 1)]
    assert chunks[-1].frames <= plan.length(len(chunks) - 1)
    assert snr_db(whole, np.concatenate([c.samples for c in chunks])) >= 100


@pytest.mark.parametrize("text_mode", ["whole", "interleaved"])
def test_streamed_codes_equal_plain_codes(engine, text_mode):
    plain = engine.generate_codes("Same codes either way.", "ono_anna", "japanese", seed=12, max_new_tokens=23,
                                  text_mode=text_mode)
    audio = engine.synthesize("Same codes either way.", "ono_anna", "japanese", seed=12, max_new_tokens=23,
                              text_mode=text_mode, chunk_frames=4, first_chunk_frames=1)
    assert np.array_equal(audio.codes, plain.codes)
    assert audio.seed == 12


def test_first_chunk_is_small_then_sizes_ramp_up(engine):
    with engine.stream("Early audio.", "aiden", seed=2, max_new_tokens=30, chunk_frames=6,
                       first_chunk_frames=2) as stream:
        sizes = [c.frames for c in stream]
    assert sizes == [2, 4, 6, 6, 6, 5]


def test_end_on_a_chunk_boundary_gives_empty_last_chunk(engine):
    with engine.stream("Boundary.", "aiden", seed=2, max_new_tokens=7, chunk_frames=5, first_chunk_frames=2) as s:
        chunks = list(s)
    assert [c.frames for c in chunks] == [2, 4, 0]
    assert chunks[-1].is_last and len(chunks[-1].samples) == 0


def test_vocoder_failure_reaches_caller_and_engine_recovers(any_engine, monkeypatch):
    engine = any_engine
    clean = engine.synthesize("After a failure.", "sohee", seed=5, max_new_tokens=16)
    failing_vocoder(engine, monkeypatch, at=2, error=RuntimeError("injected vocoder fault"))
    received = []
    fault = pytest.raises(RuntimeError, match="injected vocoder fault")
    with fault, engine.stream("Doomed.", "sohee", seed=5, max_new_tokens=40) as stream:
        for chunk in stream:
            received.append(chunk.index)
    assert received == [0]  # nothing after the failed chunk
    monkeypatch.undo()
    again = engine.synthesize("After a failure.", "sohee", seed=5, max_new_tokens=16)
    assert np.array_equal(again.codes, clean.codes)
    assert np.array_equal(again.samples, clean.samples)


def test_generation_failure_reaches_caller(any_engine, monkeypatch):
    failing_rows(any_engine, monkeypatch, "step", at=4, error=ValueError("injected talker fault"))
    fault = pytest.raises(ValueError, match="injected talker fault")
    with fault, any_engine.stream("Doomed.", "eric", seed=1, max_new_tokens=40) as stream:
        list(stream)


def test_close_stops_generation(engine):
    stream = engine.stream("Stop me early.", "ryan", seed=3, max_new_tokens=2000, budget=None)
    first = next(stream)
    assert first.index == 0
    stream.close()
    frames_at_close = stream.generation.frames
    time.sleep(0.3)
    assert stream.generation.frames == frames_at_close
    # At most the bounded queues' worth of frames beyond what was consumed: nowhere near 2000.
    assert frames_at_close < 2 + 5 * 8
    assert stream.generation.stop_reason == "closed"
    assert all(task.done() for task in stream.tasks)


def test_abandoned_iterator_stops_generation(engine):
    stream = engine.stream("Abandon me.", "ryan", seed=3, max_new_tokens=2000, budget=None)
    next(stream)
    stats = stream.generation
    tasks = stream.tasks
    del stream
    gc.collect()
    done, _ = concurrent.futures.wait(tasks, timeout=10)
    assert len(done) == 2
    assert stats.stop_reason == "closed"
    assert stats.frames < 2 + 5 * 8


def test_bad_chunk_sizes(engine):
    with pytest.raises(hearth.InputError):
        engine.stream("x", "ryan", chunk_frames=0)


def test_paced_lengths():
    plan = ChunkPlan(5, 2, paced=True)
    assert plan.paced_length(0, 0.0, 0.02, 0.01) == 2
    assert plan.paced_length(1, 0.16, 0.025, 0.015) == 3  # (0.6 * 0.16 - 0.015) / 0.025 = 3.2
    assert plan.paced_length(1, 0.5, 0.025, 0.015) == 4  # capped by the ramp
    assert plan.paced_length(2, 0.5, 0.025, 0.015) == 5  # and by the size
    assert plan.paced_length(2, 0.05, 0.06, 0.01) == 1  # tight: one frame at a time
    assert plan.paced_length(3, -1.0, 0.6, 0.2) == 5  # behind real time: efficiency wins
    assert ChunkPlan(5, 2).paced_length(1, 0.16, 0.025, 0.015) == 4  # not paced: the fixed ramp


def test_paced_stream_keeps_codes_and_audio(engine):
    plain = engine.synthesize("Paced chunks.", "ryan", seed=8, max_new_tokens=30)
    with engine.stream("Paced chunks.", "ryan", seed=8, max_new_tokens=30, paced=True) as stream:
        chunks = list(stream)
    assert np.array_equal(np.concatenate([c.codes for c in chunks]), plain.codes)
    assert all(1 <= c.frames <= 5 for c in chunks[:-1])
    assert snr_db(plain.samples, np.concatenate([c.samples for c in chunks])) >= 100


def _record_overlap(engine, monkeypatch):
    """Wrap the engine's language-model session and vocoder to record when each one computes."""
    steps: list[tuple[float, float]] = []
    decodes: list[tuple[float, float]] = []
    make_session, decode = engine.lm.session, engine.vocoder.decode

    class Timed:
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def step(self, embeds):
            t = time.perf_counter()
            try:
                return self.inner.step(embeds)
            finally:
                steps.append((t, time.perf_counter()))

    def slow_decode(codes, stream):
        t = time.perf_counter()
        time.sleep(0.03)  # long enough that a concurrent generator would produce frames meanwhile
        try:
            return decode(codes, stream)
        finally:
            decodes.append((t, time.perf_counter()))

    monkeypatch.setattr(engine.lm, "session", lambda *a, **k: Timed(make_session(*a, **k)))
    monkeypatch.setattr(engine.vocoder, "decode", slow_decode)
    return steps, decodes


def _overlapping(steps, decodes) -> int:
    return sum(1 for s0, s1 in steps for d0, d1 in decodes if s0 < d1 and d0 < s1)


@pytest.mark.parametrize("overlap", [True, False])
def test_overlap_off_means_generation_and_vocoding_take_turns(engine, monkeypatch, overlap):
    plain = engine.generate_codes("Taking turns.", "ryan", seed=3, max_new_tokens=24, budget=None)
    steps, decodes = _record_overlap(engine, monkeypatch)
    monkeypatch.setattr(engine, "overlap", overlap)
    with engine.stream("Taking turns.", "ryan", seed=3, max_new_tokens=24, budget=None, chunk_frames=3,
                       first_chunk_frames=1) as stream:
        chunks = list(stream)
    assert np.array_equal(np.concatenate([c.codes for c in chunks]), plain.codes)
    assert len(decodes) >= 5 and len(steps) >= 20
    if overlap:
        assert _overlapping(steps, decodes) > 0  # the recorder does see concurrency when it happens
    else:
        assert _overlapping(steps, decodes) == 0


def test_overlap_option_reaches_the_engine(tiny_dir):
    assert hearth.load(tiny_dir, backend="torch", overlap=False).overlap is False
    assert hearth.load(tiny_dir, backend="torch").overlap is True  # the torch reference overlaps
