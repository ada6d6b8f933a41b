"""Batched streams: the scheduler steps several sentences together (`Scheduler(max_batch=B)`).

With the torch reference every stream's codes, greedy or seeded, must equal its solo codes however
the batch changes around it: rows joining and leaving mid-batch, a neighbour cancelled, a
neighbour failing. On OpenVINO the batched talker runs over a paged KV cache: with fp32 weights
(and so an fp32 cache) each row's logits must follow its solo session's to float rounding, which
checks the block tables and positions. Codes are not compared there: a rounding difference can flip
a sample. How often int8's batched rows differ from solo is measured (`hearth bench --streams`).
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest
from faults import failing_rows, failing_vocoder
from solo import solo_codes
from threads import at_once

import hearth
from hearth.backends import ov_paged
from hearth.backends.row_pairs import paired
from hearth.generation.batch import FrameBatcher
from hearth.runtime.scheduler import Scheduler

# Different lengths and sentence counts, so rows end at different frames and others join mid-batch.
REQUESTS = [
    ("The first stream. It says two things.", "ryan", "english", 11, 12),
    ("Zweiter Strom hier. Noch ein Satz. Und ein dritter.", "aiden", "german", 22, 7),
    ("第三个。很短。", "vivian", "chinese", None, 10),  # greedy
    ("A fourth voice joins later, once a place is free.", "serena", "english", 44, 16),
    ("Cinquième flux. Fin.", "eric", "french", 55, 5),
]


def run_all(scheduler, requests, delays=(0.0, 0.01, 0.0, 0.02, 0.005), received=None):
    """Submit every request at once, each taken by its own consumer at its own pace (its chunks
    appended to `received[k]` when a dict is given)."""
    submitted = [scheduler.submit(text, voice, language, seed=seed, greedy=seed is None, max_new_tokens=frames,
                                  keep_codes=True) for text, voice, language, seed, frames in requests]

    def take(request, delay):
        for chunk in request:
            if received is not None:
                received.setdefault(submitted.index(request), []).append(chunk)
            time.sleep(delay)

    outcomes = at_once([lambda r=r, d=d: take(r, d) for r, d in zip(submitted, delays, strict=False)], timeout=300)
    assert not [e for e in outcomes if isinstance(e, BaseException)], outcomes
    return submitted


def assert_solo(engine, submitted, requests, skip=()):
    for k, (request, (_, voice, language, _seed, frames)) in enumerate(zip(submitted, requests, strict=True)):
        if k in skip:
            continue
        assert request.status == "done" and not request.errors, (k, request.errors)
        for s in request.sentences:
            assert np.array_equal(s.codes, solo_codes(engine, s.text, voice, language, s.seed, frames)), (k, s.text)


def test_each_batched_stream_equals_its_solo_codes(engine):
    with Scheduler(engine, max_batch=3) as scheduler:
        submitted = run_all(scheduler, REQUESTS)
        batcher = scheduler.batcher
        assert batcher is not None
        assert batcher.rows_stepped / batcher.calls > 1.5  # the rows really were stepped together
        assert batcher.joined_mid_batch > 0  # and some joined while others were mid-sentence
    assert_solo(engine, submitted, REQUESTS)


def test_cancelling_one_batched_stream_leaves_the_others_untouched(engine):
    with Scheduler(engine, max_batch=3) as scheduler:
        doomed = scheduler.submit("One. Two. Three. Four. Five.", "dylan", seed=5, max_new_tokens=40)
        first = doomed.get(timeout=120)
        assert first is not None
        others = [scheduler.submit(text, voice, language, seed=seed, greedy=seed is None, max_new_tokens=frames,
                                   keep_codes=True) for text, voice, language, seed, frames in REQUESTS[:2]]
        for _ in range(2):  # the others are under way beside it
            assert others[0].get(timeout=120) is not None
        t0 = time.monotonic()
        doomed.cancel()
        assert doomed.get(timeout=5) is None and time.monotonic() - t0 < 2.0
        assert doomed.status == "cancelled"
        for request in others:
            list(request)
    assert_solo(engine, others, REQUESTS[:2])


def test_a_fault_in_one_batched_stream_fails_that_sentence_only(engine, monkeypatch):
    failing_rows(engine, monkeypatch, "step", at=25, error=RuntimeError("injected fault"))
    with Scheduler(engine, max_batch=3) as scheduler:
        submitted = run_all(scheduler, REQUESTS[:3])
    failed = [(k, s) for k, r in enumerate(submitted) for s in r.sentences if s.status == "failed"]
    assert len(failed) == 1 and "injected fault" in failed[0][1].error
    k, sentence = failed[0]
    for i, (request, (_, voice, language, _seed, frames)) in enumerate(zip(submitted, REQUESTS[:3], strict=True)):
        assert request.status == "done"
        for s in request.sentences:
            if (i, s.index) != (k, sentence.index):  # every other sentence, on every stream, is whole
                assert s.status == "done"
                assert np.array_equal(s.codes, solo_codes(engine, s.text, voice, language, s.seed, frames))


@pytest.mark.parametrize("other_steps", [True, False])
def test_a_held_row_rides_along_only_while_another_row_steps(engine, other_steps):
    """A row whose consumer wants no frames now (`hold_until`, while it decodes) makes none while
    it is alone, and is stepped with a row that goes (a step reads the weights once), up to the
    batcher's look-ahead."""
    batcher = FrameBatcher(engine.lm, max_rows=2, ahead_frames=4)
    held = engine.frames("The held one has a long way to go here.", "ryan", "english", batcher=batcher)
    other = engine.frames("The other one goes on and on and on.", "aiden", "english", batcher=batcher)
    held.hold_until(1)
    first, frames = iter(held), iter(other)
    try:
        next(first)  # its one frame, then it is held
        calls, rows = batcher.calls, batcher.rows_stepped
        if other_steps:
            for _ in range(8):
                next(frames)
        else:
            time.sleep(0.3)
        rode = (batcher.rows_stepped - rows) - (batcher.calls - calls)  # the steps with both rows in
        assert rode == (4 if other_steps else 0), (rode, batcher.calls - calls)
        assert held.utterance.held
    finally:
        first.close()  # (generators: their rows leave the batch)
        frames.close()
        batcher.close()


def test_batched_live_request_waits_for_text_without_holding_up_the_batch(engine):
    """A live sentence waiting for text sits out; the others are stepped meanwhile; its codes equal
    the whole text's in the interleaved mode."""
    text = "Let us walk down to the river and back before the rain comes in."
    kwargs = dict(seed=4, max_new_tokens=14, text_mode="interleaved")
    expected = solo_codes(engine, text, "ryan", "english", 4, 14, text_mode="interleaved")
    with Scheduler(engine, max_batch=2) as scheduler:
        live = scheduler.open("ryan", "english", keep_codes=True, **kwargs)
        live.push("Let us walk down to the")
        deadline = time.monotonic() + 60
        while not live.sentences and time.monotonic() < deadline:
            time.sleep(0.01)
        others = run_all(scheduler, REQUESTS[:2])  # done while the live one waits for its text
        assert live.sentences[0].status == "generating"
        live.push(text[len("Let us walk down to the") :])
        live.end()
        list(live)
    assert np.array_equal(live.sentences[0].codes, expected)
    assert_solo(engine, others, REQUESTS[:2])


@pytest.mark.parametrize(("backend", "rows"), [("openvino", 1), ("openvino", 3), ("onnxruntime", 1)])
def test_compiled_batch_follows_each_rows_solo_session(tiny_dir, monkeypatch, backend, rows):
    """A compiled backend's batch bookkeeping against each row's solo session on the same inputs:
    OpenVINO's paged talker (blocks, positions, prompts joining beside single steps), ONNX Runtime's
    slots (a row that sits a frame out between others that step, prompts in calls of their own).
    In both the cache grows while rows run. fp32 weights and cache, so only summation order
    differs: the logits must agree to float rounding, where a wrong block, slot or position would
    change them completely. The predictor's rows must give the solo codes and summed embeddings:
    OpenVINO's predictor compiled for a pair of rows when asked for one (four rows: two calls) and
    for four when asked for three (rows come in pairs: `lm_rows.paired`)."""
    if backend == "openvino":
        monkeypatch.setattr(ov_paged, "START_BLOCKS_PER_ROW", 1)  # so the cache must grow mid-batch
    else:
        from hearth.backends import ort

        monkeypatch.setattr(ort, "START_CAPACITY", 16)
    engine = hearth.load(tiny_dir, backend=backend, weights="fp32", batch_rows=rows)
    try:
        lm = engine.lm
        assert backend != "openvino" or [p.get_partial_shape()[0].get_length() for p in lm.predictor.inputs
                                          if p.get_partial_shape().rank.get_length()] == [paired(rows)] * 5
        hidden = engine.config.talker.stack.hidden_size
        options = engine.sampling()
        gen = np.random.default_rng(3)
        batch = lm.batch(4)
        starts, prompts = [0, 0, 5, 40], [3, 17, 9, 60]  # frame at which each row joins, prompt length
        rows: dict[int, tuple] = {}
        for frame in range(90):
            for k, start in enumerate(starts):
                if start == frame:
                    rows[k] = (batch.open(options, k, prompts[k]), lm.session(options, k, prompts[k]), True)
            # Row 1 sits out every third frame (waiting for text or its consumer).
            live = [k for k in sorted(rows) if not (k == 1 and frame % 3 == 2 and not rows[k][2])]
            inputs = [gen.standard_normal((1, prompts[k] if rows[k][2] else 1, hidden), np.float32) for k in live]
            got = batch.talker([rows[k][0] for k in live], inputs, [rows[k][2] for k in live])
            for k, x, logits in zip(live, inputs, got, strict=True):
                paged, solo_session, first = rows[k]
                want = solo_session.prefill(x) if first else solo_session.step(x)
                assert not isinstance(logits, BaseException), logits
                np.testing.assert_allclose(logits, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
                rows[k] = (paged, solo_session, False)
            cb0 = [int(gen.integers(0, 2048)) for _ in live]
            predicted = batch.predict([rows[k][0] for k in live], cb0)
            for k, code, result in zip(live, cb0, predicted, strict=True):
                solo_codes, solo_summed = rows[k][1].predict(code)
                codes, summed = result
                assert codes == solo_codes
                np.testing.assert_allclose(summed, solo_summed, rtol=1e-4, atol=1e-4)
            if frame == 70:  # a row leaves; its place serves the others
                rows.pop(1)[0].close()
        assert batch.capacity > (4 if backend == "openvino" else 16)  # it grew while rows ran
    finally:
        engine.close()


@pytest.fixture(scope="module")
def openvino_int8(tiny_dir):
    """OpenVINO with int8 weights, whatever this machine's default (ONNX Runtime's language model on
    a CPU without AVX-512): what these tests are about."""
    engine = hearth.load(tiny_dir, backend="openvino", weights="int8")
    yield engine
    engine.close()


def test_openvino_int8_batched_streams_isolate_a_vocoder_fault(openvino_int8, monkeypatch):
    """Every other sentence is whole, and each consumer heard exactly its own codes: its chunks are
    what the vocoder makes of that sentence's codes, chunk by chunk, on a fresh state."""
    fast_engine = openvino_int8
    vocoder = fast_engine.vocoder
    real_decode = vocoder.decode
    failing_vocoder(fast_engine, monkeypatch, at=4, error=RuntimeError("injected vocoder fault"))
    received: dict[int, list] = {}
    with Scheduler(fast_engine, max_batch=3) as scheduler:
        submitted = run_all(scheduler, REQUESTS[:3], received=received)
    failed = [s for r in submitted for s in r.sentences if s.status == "failed"]
    assert len(failed) == 1 and "injected vocoder fault" in failed[0].error
    assert all(r.status == "done" for r in submitted)
    checked = 0
    for k, (r, (_, _, _, _, frames)) in enumerate(zip(submitted, REQUESTS[:3], strict=True)):
        for s in r.sentences:
            if s.status == "failed":
                continue
            assert s.status == "done" and s.codes.shape[0] == s.frames <= frames - 1
            chunks = [c for c in received[k] if c.sentence == s.index]
            assert np.array_equal(np.concatenate([c.codes for c in chunks]), s.codes)
            state = vocoder.start()
            for c in chunks:
                expected = real_decode(c.codes, state) if c.frames else c.samples[:0]
                assert c.samples.shape == expected.shape and abs(c.samples - expected).max() <= 1e-4, (k, s.index)
            checked += 1
    assert checked >= 3


@pytest.mark.parametrize("bad", [0, -1])
def test_max_batch_must_be_positive(engine, bad):
    with pytest.raises(ValueError, match="max_batch"):
        Scheduler(engine, max_batch=bad)


def test_a_scheduler_wider_than_the_compiled_predictor_says_how_to_load(openvino_int8, caplog):
    """An engine loaded for lone rows still serves batches (its predictor steps them a pair at a
    time), and says how to load it for them; a batch of two fits its pair."""
    fast_engine = openvino_int8
    assert fast_engine.options.batch_rows == 1
    with caplog.at_level(logging.WARNING, logger="hearth.runtime.scheduler"), Scheduler(fast_engine, max_batch=3):
        pass
    assert "load it with batch_rows=3" in caplog.text
    caplog.clear()
    for fits in (1, 2):
        with (caplog.at_level(logging.WARNING, logger="hearth.runtime.scheduler"),
              Scheduler(fast_engine, max_batch=fits)):
            pass
    assert "batch_rows" not in caplog.text
