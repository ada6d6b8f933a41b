"""Fault injection through the backend interfaces every backend implements (`LanguageModel.batch`,
which the solo loop and the batcher step, and `Vocoder.decode`), so the same faults reach the torch
reference and the compiled backends."""

from __future__ import annotations

import threading


class _FailingBatch:
    """Passes every call through to the real batch; the row of the `at`-th `method` call overall
    ("prefill", "step": a row's talker call; "predict") gets the error as its result, as a row that
    fails alone does."""

    def __init__(self, inner, method, counter):
        self._inner, self._method, self._counter = inner, method, counter

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def _hit(self, out: list, kinds: list[str]) -> list:
        for i, kind in enumerate(kinds):
            if kind != self._method:
                continue
            with self._counter["lock"]:
                self._counter["n"] += 1
                hit = self._counter["n"] == self._counter["at"]
            if hit:
                out[i] = self._counter["error"]
        return out

    def talker(self, rows, embeds, prefill):
        return self._hit(self._inner.talker(rows, embeds, prefill), ["prefill" if p else "step" for p in prefill])

    def predict(self, rows, cb0):
        return self._hit(self._inner.predict(rows, cb0), ["predict"] * len(rows))


def failing_rows(engine, monkeypatch, method: str, at: int, error: BaseException) -> dict:
    """From now on, the `at`-th call of `method` ("prefill", "step" or "predict") over all rows of
    the batches `engine` makes (its solo loop's and its batchers') fails that row with `error`."""
    counter = {"n": 0, "at": at, "error": error, "lock": threading.Lock()}
    make = engine.lm.batch
    monkeypatch.setattr(engine.lm, "batch", lambda *a, **k: _FailingBatch(make(*a, **k), method, counter))
    return counter


def failing_vocoder(engine, monkeypatch, at: int, error: BaseException) -> dict:
    """From now on, the `at`-th vocoder decode call raises."""
    counter = {"n": 0}
    real = engine.vocoder.decode

    def decode(codes, state):
        counter["n"] += 1
        if counter["n"] == at:
            raise error
        return real(codes, state)

    monkeypatch.setattr(engine.vocoder, "decode", decode)
    return counter
