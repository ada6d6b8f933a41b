"""A failure stays with its request, in this process: the scheduler and the batcher over the torch
reference (whose batch computes each row alone, so every other request's codes must equal its solo
codes), with faults injected at each stage (`hearth.reliability.faults`) for one request of four.

Also the defect that stopped `hearth serve` for everybody: a live sentence's text rows are final by
a rule measured from the machine's kernels (`BatchInvariance`), and a rule with `block` 0 (which
Sapphire Rapids measures) divided by zero in the batcher's thread. Every rule a CPU can measure is
checked here, and live text must be exact under each.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from threads import at_once

import hearth
from hearth.reliability import faults
from hearth.reliability.health import Health, Supervisor
from hearth.runtime.scheduler import Scheduler
from hearth.streaming.live import BatchInvariance

# -- the rule, for every value a machine can measure ---------------------------------------------------


@pytest.mark.parametrize("threshold", [None, 1, 2, 3, 5, 8, 12, 13, 40, 64, 256])
def test_batch_invariance_rule_for_every_measurable_value(threshold):
    for block in range(0, (threshold or 4) + 2):
        rule = BatchInvariance(threshold, block)
        # every batch size below the threshold, where the rule depends on the block, and a stretch
        # above it (from the threshold on every row is final whatever the size: 300 took 20 s)
        for known in range(0, (threshold or 4) + 12):
            for row in range(0, known + 1):
                safe = rule.safe(row, known)
                if threshold is None:
                    assert not safe
                elif known >= threshold:
                    assert safe
                elif block == 0:
                    assert not safe, (threshold, block, row, known)
                else:
                    assert safe == (row < block * (known // block))
                if safe:  # the batch only grows: a final row stays final
                    assert rule.safe(row, known + 1)


def test_batch_invariance_values_are_checked():
    assert BatchInvariance.parse("none") == BatchInvariance(None, 0)
    assert BatchInvariance.parse("12") == BatchInvariance(12, 0)
    assert BatchInvariance.parse(" 12 , 4 ") == BatchInvariance(12, 4)
    for bad in ["", "x", "0", "-3", "12,-1", "1,2,3"]:
        with pytest.raises(ValueError, match="HEARTH_TEXT_INVARIANCE|threshold"):
            BatchInvariance.parse(bad)


def _projection(differs):
    """A text projection whose row k of an m-row batch is off by one ulp-ish where `differs(m, k)`,
    the way CPU kernels round rows by the batch they are computed in."""

    def embed_text(ids):
        m = len(ids)
        out = np.repeat(np.array(ids, np.float32)[None, :, None], 4, axis=2) / np.float32(7.0)
        for k in range(m):
            if differs(m, k):
                out[0, k] = np.nextafter(out[0, k], np.float32(1e9))
        return out

    return embed_text


@pytest.mark.parametrize(("differs", "expected"), [
    (lambda m, k: False, BatchInvariance(1, 1)),  # exact kernels
    (lambda m, k: m < 12 and k >= 4 * (m // 4), BatchInvariance(12, 4)),  # blocks of 4 below 12 rows
    (lambda m, k: m < 12, BatchInvariance(12, 0)),  # no row of a small batch (Sapphire Rapids' AMX)
    (lambda m, k: m < 48 and k % 2 == 1, BatchInvariance(48, 0)),  # a pattern that is not a block
    (lambda m, k: m < 64, BatchInvariance(64, 0)),
    (lambda m, k: m < 256, BatchInvariance(None, 0)),  # live rows come in batches of 64: they never qualify
    (lambda m, k: k == m - 1, BatchInvariance(None, 0)),  # never final before the end
])
def test_measure_reads_each_kind_of_kernel(differs, expected):
    measured = BatchInvariance.measure(_projection(differs), vocab=1000)
    # The same rule (a block as large as the threshold says what block 0 says).
    assert all(measured.safe(row, known) == expected.safe(row, known) for known in range(300)
               for row in range(known)), measured


def _live_codes(engine, text, pieces_at, seed=8, frames=24):
    with engine.open("ryan", "english", seed=seed, max_new_tokens=frames) as live:
        def writer():
            last = 0
            for cut in [*pieces_at, len(text)]:
                live.push(text[last:cut])
                last = cut
                time.sleep(0.002)
            live.end()

        t = threading.Thread(target=writer)
        t.start()
        codes = [c.codes for c in live]
        t.join(timeout=60)
    return np.concatenate(codes)


@pytest.mark.parametrize("rule", ["measured", "threshold-only", "none", "256"])
def test_live_text_is_exact_whatever_the_machine_measures(tiny_dir, monkeypatch, rule):
    """Rules no bolder than the real one (the measured rule, its threshold with block 0 as
    Sapphire Rapids measures, none, the largest batch) all give the whole text's codes, alone and
    with four live requests batched (where the division by zero was)."""
    measured = hearth.load(tiny_dir, backend="torch")
    real = measured.batch_invariance()
    measured.close()
    given = {"measured": None, "threshold-only": f"{real.threshold or 256},0", "none": "none", "256": "256,0"}[rule]
    if given is not None:
        monkeypatch.setenv("HEARTH_TEXT_INVARIANCE", given)
    engine = hearth.load(tiny_dir, backend="torch")
    try:
        texts = ["Well, the 3rd train to Zürich leaves at 7:45, so grab your coat 🧥 now.",
                 "你好，欢迎回家。", "Hi.", "Numbers 3.14 and 1,000 then words and more words to read aloud here."]
        whole = [engine.generate_codes(t, "ryan", "english", text_mode="interleaved", seed=8 + i,
                                       max_new_tokens=24).codes for i, t in enumerate(texts)]
        assert np.array_equal(_live_codes(engine, texts[0], [5, 9, 30, 31, 60]), whole[0])
        with Scheduler(engine, max_batch=4) as scheduler:
            requests = [scheduler.open("ryan", "english", seed=8 + i, max_new_tokens=24, text_mode="interleaved",
                                       keep_codes=True) for i in range(len(texts))]
            writers = [threading.Thread(target=_write, args=(r, t)) for r, t in zip(requests, texts, strict=True)]
            for w in writers:
                w.start()
            for r in requests:
                list(r)
            for w in writers:
                w.join(timeout=60)
        for i, r in enumerate(requests):
            assert r.status == "done" and not r.errors, r.errors
            assert len(r.sentences) == 1 and np.array_equal(r.sentences[0].codes, whole[i]), i
    finally:
        engine.close()


def _write(request, text, piece=7, delay=0.01):
    """`text` in pieces of `piece` characters; a pause after the first, so that the batcher asks for
    text rows while few are known (where the rule's small batches matter)."""
    for k in range(0, len(text), piece):
        request.push(text[k : k + piece])
        time.sleep(0.2 if k == 0 else delay)
    request.end()


# -- a fault at each stage, for one request of four ----------------------------------------------------

CLEAN = [  # (text, voice, language, seed, frames, live)
    ("The first stream. It says two things.", "ryan", "english", 11, 12, False),
    ("Zweiter Strom hier, live geschrieben. Noch ein Satz.", "aiden", "german", 22, 9, True),
    ("第三个。很短。", "vivian", "chinese", 33, 10, False),
]
MARKED_SEED, MARKED_FRAMES = 44, 14


def _marked_text(stage):
    return f"A fourth voice says {faults.marker(stage)} right here. Then it goes on, unharmed."


def _solo(engine, text, voice, language, seed, frames, live):
    from hearth.text.sentences import split_sentences

    mode = "interleaved" if live else "whole"
    return [engine.generate_codes(t, voice, language, seed=seed + i, max_new_tokens=frames, text_mode=mode).codes
            for i, t in enumerate(split_sentences(text))]


def _run(scheduler, specs):
    """Every request at once (live ones written in pieces), each taken by a consumer of its own."""
    requests = []
    for text, voice, language, seed, frames, live in specs:
        if live:
            r = scheduler.open(voice, language, seed=seed, max_new_tokens=frames, text_mode="interleaved",
                               keep_codes=True)
            threading.Thread(target=_write, args=(r, text), daemon=True).start()
        else:
            r = scheduler.submit(text, voice, language, seed=seed, max_new_tokens=frames, keep_codes=True)
        requests.append(r)
    taken = at_once([lambda r=r: list(r) for r in requests], timeout=120)
    errors = {k: e for k, e in enumerate(taken) if isinstance(e, BaseException)}
    return requests, errors


def _assert_exact(engine, request, spec):
    text, voice, language, seed, frames, live = spec
    assert request.status == "done" and not request.errors, (spec, request.errors)
    want = _solo(engine, text, voice, language, seed, frames, live)
    assert len(request.sentences) == len(want)
    for s, codes in zip(request.sentences, want, strict=True):
        assert np.array_equal(s.codes, codes), (spec, s.index)


@pytest.mark.parametrize("stage", ["text_feed", "embedding", "talker", "predictor", "vocoder", "channel"])
def test_a_fault_at_each_stage_fails_that_sentence_alone(engine, stage):
    """The torch reference's batch computes each row by itself, so a fault fails the marked
    sentence only: the marked request goes on with its next sentence, the three others and the
    next request give their solo codes, and the health counts one failure at that stage."""
    marked = (_marked_text(stage), "serena", "english", MARKED_SEED, MARKED_FRAMES, True)
    second = _solo(engine, *marked)[1]  # (the marked sentence's marker does nothing while no fault is armed)
    with faults.inject(stage), Scheduler(engine, max_batch=4) as scheduler:
        requests, errors = _run(scheduler, [*CLEAN[:2], marked, CLEAN[2]])
        assert not errors, errors
        for k in (0, 1, 3):
            _assert_exact(engine, requests[k], [*CLEAN[:2], marked, CLEAN[2]][k])
        hit = requests[2]
        assert hit.status == "done"
        assert [s.status for s in hit.sentences] == ["failed", "done"]
        assert f"injected fault at stage '{stage}'" in hit.sentences[0].error
        assert np.array_equal(hit.sentences[1].codes, second)
        report = scheduler.health.report()
        assert report["status"] == "ok" and report["failures"] == {stage: 1} and report["restarts"] == {}
        after, errors = _run(scheduler, [CLEAN[0]])
        assert not errors
        _assert_exact(engine, after[0], CLEAN[0])


def test_a_shared_call_failure_fails_the_rows_of_that_call_only(fast_engine):
    """OpenVINO's batch computes every row in one call: a failure of that call fails the rows
    stepped in it, and the requests that come after are served (their audio exact, as alone)."""
    marked = (_marked_text("talker"), "serena", "english", MARKED_SEED, MARKED_FRAMES, False)
    with faults.inject("talker"), Scheduler(fast_engine, max_batch=4) as scheduler:
        requests, errors = _run(scheduler, [CLEAN[0], marked, CLEAN[2]])
        assert not errors, errors
        assert requests[1].sentences[0].status == "failed"
        for r in requests:  # any sentence that failed failed in that call
            assert r.status == "done"
            for s in r.sentences:
                assert s.status == "done" or "stage 'talker'" in s.error, s
        assert scheduler.health.report()["failures"]["talker"] >= 1
        after, errors = _run(scheduler, [CLEAN[0]])
        assert not errors
        _assert_exact(fast_engine, after[0], CLEAN[0])


# -- worker threads that die anyway: restarted, their requests failed, the next ones served -------------


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # (the thread that dies)
@pytest.mark.parametrize("stage", ["batcher", "scheduler", "vocoder_thread"])
def test_a_dead_worker_is_started_again(engine, stage):
    marked = (_marked_text(stage), "serena", "english", MARKED_SEED, MARKED_FRAMES, False)
    replaced = engine.workers.replaced
    with faults.inject(stage), Scheduler(engine, max_batch=4) as scheduler:
        requests, errors = _run(scheduler, [CLEAN[0], marked])
        hit = requests[1]
        assert hit.status in ("failed", "done") and (1 in errors or hit.errors), (hit.status, errors)
        # Others in flight when a thread died may fail with it; none is left waiting (`_run`).
        after, errors = _run(scheduler, [CLEAN[0], CLEAN[2]])
        assert not errors, errors
        _assert_exact(engine, after[0], CLEAN[0])
        _assert_exact(engine, after[1], CLEAN[2])
        report = scheduler.health_report()
        assert report["status"] == "ok", report
        if stage == "vocoder_thread":
            assert engine.workers.replaced > replaced
            assert report["restarts"]["stream_threads"] >= 1
            assert report["failures"] == {"vocoder_thread": 1}
        else:
            # (The engine's vocoder threads replaced before, by another test on this engine, are reported too.)
            earlier = {"stream_threads": replaced} if replaced else {}
            assert report["restarts"] == {stage: 1, **earlier} and report["failures"].get(stage, 0) >= 1


def test_a_worker_that_keeps_dying_is_given_up_and_the_service_told():
    health = Health()
    told: list[str] = []
    health.on_fatal = told.append
    deaths: list[BaseException] = []
    seen_down = threading.Event()

    def body():
        if health.down:
            seen_down.set()
        raise RuntimeError("a bug")

    supervisor = Supervisor("test", body, health, deaths.append, backoff_s=0.001, max_restarts=3, window_s=60)
    supervisor.start()
    supervisor.thread.join(timeout=10)
    assert not supervisor.thread.is_alive()
    assert len(deaths) == 4 and health.restarts["test"] == 3
    assert told and "died too often" in told[0]
    report = health.report()
    assert report["status"] == "degraded" and "test" in report["fatal"] and "RuntimeError: a bug" in report["reason"]


def test_a_restarting_worker_is_reported_down_until_it_runs_again():
    health = Health()
    started = threading.Event()
    release = threading.Event()
    runs = []

    def body():
        runs.append(1)
        if len(runs) == 1:
            raise RuntimeError("first run dies")
        started.set()
        release.wait(10)

    supervisor = Supervisor("test", body, health, lambda e: None, backoff_s=0.3)
    supervisor.start()
    time.sleep(0.1)
    report = health.report()
    assert report["status"] == "degraded" and "restarting after RuntimeError: first run dies" in report["reason"]
    assert started.wait(5)
    assert health.report()["status"] == "ok" and health.report()["restarts"] == {"test": 1}
    supervisor.stop()
    release.set()
    supervisor.thread.join(timeout=5)


def test_no_test_module_skips_itself_for_a_missing_dependency():
    """A missing dependency must fail the suite (CI installs everything), not turn a module into skips."""
    from pathlib import Path

    offenders = [p.name for p in Path(__file__).parent.glob("*.py")
                 if "importorskip(" in p.read_text(encoding="utf-8") and p.name != Path(__file__).name]
    assert offenders == []
