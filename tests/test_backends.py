"""The backend contract: sessions and vocoder states are independent on every backend, so utterances
interleaved frame by frame, or run on several threads at once, give exactly their solo codes and audio."""

from __future__ import annotations

import numpy as np
import torch
from conftest import DEFAULT_BACKEND
from solo import solo_codes
from threads import at_once

import hearth

TEXTS = [("Interleaved with another one.", "ryan", "english", 3), ("和另一个交替进行。", "vivian", "chinese", 4),
         ("A third, greedy.", "sohee", "auto", None)]


def test_sessions_interleaved_frame_by_frame_equal_solo_runs(any_engine):
    engine = any_engine
    generators = []
    for text, voice, language, seed in TEXTS:
        options = engine.sampling(greedy=seed is None, max_new_tokens=14)
        generators.append(iter(engine.frames(text, voice, language, options=options, seed=seed, budget=None)))
    frames: list[list[torch.Tensor]] = [[] for _ in generators]
    live = list(range(len(generators)))
    while live:  # one frame of each in turn: every session's state must survive the others' steps
        for k in list(live):
            frame = next(generators[k], None)
            if frame is None:
                live.remove(k)
            else:
                frames[k].append(frame)
    for k, (text, voice, language, seed) in enumerate(TEXTS):
        assert np.array_equal(np.stack(frames[k]), solo_codes(engine, text, voice, language, seed, 14, budget=None))


def test_streams_on_several_threads_equal_solo_runs(any_engine):
    engine = any_engine
    expected = [engine.synthesize(t, v, lang, seed=s, greedy=s is None, max_new_tokens=14, budget=None)
                for t, v, lang, s in TEXTS]
    got = at_once([lambda k=k, t=t, v=v, lang=lang, s=s: engine.synthesize(
        t, v, lang, seed=s, greedy=s is None, max_new_tokens=14, budget=None, chunk_frames=2 + k)
        for k, (t, v, lang, s) in enumerate(TEXTS)], timeout=300)
    for k, want in enumerate(expected):
        assert isinstance(got[k], hearth.Audio), got[k]
        assert np.array_equal(got[k].codes, want.codes)
        assert np.abs(got[k].samples - want.samples).max() < 1e-4  # vocoder states are independent too


def test_the_default_backend_and_its_parts(fast_engine, engine):
    """int8 weights on this machine's default runtime (OpenVINO with AVX-512, else ONNX Runtime's
    language model), beside OpenVINO's bf16 vocoder, whose first chunk is a single frame."""
    assert fast_engine.options.backend == DEFAULT_BACKEND and fast_engine.options.weights == "int8"
    assert fast_engine.backend.describe()["vocoder"] == "bf16" and fast_engine.default_first_chunk == 1
    assert engine.backend.describe()["vocoder"] == "torch" and engine.default_first_chunk == 2
    for e in (fast_engine, engine):
        parts = e.backend.weights_mb()
        assert parts and all(p["stored_mb"] > 0 for p in parts.values())
