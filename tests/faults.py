"""Fault injection through the backend interfaces every backend implements (`LanguageModel.session`,
`Vocoder.decode`), so the same faults reach the torch reference and the OpenVINO fast path."""

from __future__ import annotations

import threading


class _FailingSession:
    """Passes every call through to the real session, except the `at`-th call of `method` overall."""

    def __init__(self, inner, method, counter):
        self._inner, self._method, self._counter = inner, method, counter

    def __getattr__(self, name):
        real = getattr(self._inner, name)
        if name != self._method:
            return real

        def call(*args):
            with self._counter["lock"]:
                self._counter["n"] += 1
                hit = self._counter["n"] == self._counter["at"]
            if hit:
                raise self._counter["error"]
            return real(*args)

        return call


def failing_sessions(engine, monkeypatch, method: str, at: int, error: BaseException) -> dict:
    """From now on, the `at`-th call of `method` ("prefill", "step" or "predict") over all sessions raises."""
    counter = {"n": 0, "at": at, "error": error, "lock": threading.Lock()}
    make = engine.lm.session
    monkeypatch.setattr(engine.lm, "session", lambda *a, **k: _FailingSession(make(*a, **k), method, counter))
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
