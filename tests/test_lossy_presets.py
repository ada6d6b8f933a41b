"""The lossy presets keep the determinism contract (docs/determinism.md) end to end, and stay near fp32.

For each compiled preset that rounds (OpenVINO int8, the default, and int4; `--fast`, `--small`,
ONNX Runtime's int8 and mix), one request's codes must be the same generated alone, again, streamed,
batched by the scheduler beside other requests (whose rows join and leave), and with its text pushed
in pieces. Their drift from fp32 is bounded by teacher-forced logits (the same codes fed to both): on
random weights that measures rounding, not quality, which needs the real weights (docs/performance.md).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from solo import solo_codes
from threads import at_once

import hearth
from hearth.runtime.scheduler import Scheduler
from hearth.text.prompt import embed_prompt
from hearth.tools.accuracy import compare_formats, teacher_forced_logits

pytestmark = pytest.mark.slow

PRESETS = {
    "openvino-int8": {},
    "openvino-int4": {"weights": "int4"},
    "fast": {"fast": True},
    "small": {"small": True},
    "onnxruntime-int8": {"backend": "onnxruntime", "weights": "int8"},
    "onnxruntime-mix": {"backend": "onnxruntime", "weights": "mix"},
}

TEXT, VOICE, LANGUAGE, SEED, FRAMES = "The same words, the same seed.", "ryan", "english", 17, 18
OTHERS = [("Another voice beside it, longer than the first one.", "aiden", "english", 3, 24),
          ("Kurz.", "vivian", "german", 5, 6)]


@pytest.fixture(scope="module", params=list(PRESETS))
def lossy(request, tiny_dir):
    engine = hearth.load(tiny_dir, batch_rows=3, **PRESETS[request.param])
    yield request.param, engine
    engine.close()


def _pushed_in_pieces(engine, text, **options):
    with engine.open(VOICE, LANGUAGE, **options) as live:
        def writer():
            for start in range(0, len(text), 4):
                live.push(text[start : start + 4])
            live.end()

        t = threading.Thread(target=writer)
        t.start()
        chunks = list(live)
        t.join(timeout=60)
    return np.concatenate([c.codes for c in chunks])


def test_one_request_gives_the_same_codes_every_way(lossy):
    name, engine = lossy
    alone = solo_codes(engine, TEXT, VOICE, LANGUAGE, SEED, FRAMES)
    assert alone.shape[0] > 0
    assert np.array_equal(solo_codes(engine, TEXT, VOICE, LANGUAGE, SEED, FRAMES), alone), name
    with engine.stream(TEXT, VOICE, LANGUAGE, seed=SEED, max_new_tokens=FRAMES) as stream:
        streamed = np.concatenate([c.codes for c in stream])
    assert np.array_equal(streamed, alone), name

    with Scheduler(engine, max_batch=3) as scheduler:
        requests = [scheduler.submit(text, voice, language, seed=seed, max_new_tokens=frames, keep_codes=True)
                    for text, voice, language, seed, frames in [(TEXT, VOICE, LANGUAGE, SEED, FRAMES), *OTHERS]]
        outcomes = at_once([lambda r=r: list(r) for r in requests], timeout=300)
        assert not [e for e in outcomes if isinstance(e, BaseException)], outcomes
        batcher = scheduler.batcher
        assert batcher is not None and batcher.rows_stepped > batcher.calls  # they really shared calls
    for request, (text, voice, language, _seed, frames) in zip(requests, [(TEXT, VOICE, LANGUAGE, SEED, FRAMES),
                                                                         *OTHERS], strict=True):
        assert request.status == "done" and not request.errors, (name, request.errors)
        for s in request.sentences:
            assert np.array_equal(s.codes, solo_codes(engine, s.text, voice, language, s.seed, frames)), (name, text)

    whole = engine.generate_codes(TEXT, VOICE, LANGUAGE, text_mode="interleaved", seed=SEED,
                                  max_new_tokens=FRAMES).codes
    assert np.array_equal(_pushed_in_pieces(engine, TEXT, seed=SEED, max_new_tokens=FRAMES), whole), name


# The least SNR (dB) of any codebook's teacher-forced logits against fp32 on the tiny random
# checkpoint, per weight format and runtime. Measured on 2026-12-04 (AMX): int8 29.3 (OpenVINO) and
# 28.3 (ONNX Runtime), int4 7.5 and 8.5, mix 8.6; the floors leave a margin for other CPUs' rounding.
DRIFT_FLOOR_DB = {("openvino", "int8"): 20.0, ("openvino", "int4"): 5.0, ("onnxruntime", "int8"): 20.0,
                  ("onnxruntime", "int4"): 5.0, ("onnxruntime", "mix"): 5.0}


@pytest.mark.parametrize(("backend", "weights"), list(DRIFT_FLOOR_DB))
def test_drift_from_fp32_is_bounded(engine, backend, weights):
    text = "Drift is measured against fp32."
    codes = engine.generate_codes(text, VOICE, LANGUAGE, greedy=True, max_new_tokens=12, budget=None).codes
    prompt = engine.prompt(text)
    with torch.inference_mode():
        embeds = embed_prompt(engine.lm, engine.config, prompt, VOICE, LANGUAGE, "whole")
        ref = teacher_forced_logits(engine.checkpoint, "fp32", embeds, codes, engine.lm.embed_codec, backend=backend)
        got = teacher_forced_logits(engine.checkpoint, weights, embeds, codes, engine.lm.embed_codec, backend=backend)
    t = engine.config.talker
    rows = compare_formats(ref, got, [t.stack.vocab_size] + [t.predictor.vocab_size] * (t.num_code_groups - 1))
    worst = min(r.snr_db for r in rows)
    assert worst > DRIFT_FLOOR_DB[(backend, weights)], (backend, weights, [round(r.snr_db, 1) for r in rows])
