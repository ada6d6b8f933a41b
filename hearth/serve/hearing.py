"""A server's listening models (Qwen3-ASR, Qwen3-ForcedAligner), resident beside its speech model,
and the bound on transcriptions at once.

Transcribing runs on the server's thread pool, never on the event loop: at most `max_active`
recordings at once (each decodes in its own session), `max_waiting` more wait their turn, and
beyond that a request is refused at once as busy (`Busy`, a 503 with Retry-After). A bad
recording is refused before it takes a turn.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from hearth.listen import Aligner, Listener, ListenOptions, Transcript, TranscriptPiece
from hearth.runtime.request import Busy

__all__ = ["Hearing", "HearingModels", "not_loaded"]

log = logging.getLogger("hearth")
T = TypeVar("T")


@dataclass(frozen=True)
class HearingModels:
    """What the command line asked for: `--listen`, `--aligner`, `--listen-backend`, `--listen-dtype`,
    `--listen-weights`."""

    listen: str | None = None
    aligner: str | None = None
    backend: str | None = None
    dtype: str | None = None
    weights: str | None = None

    def load(self) -> Hearing | None:
        if self.listen is None and self.aligner is None:
            return None
        how = (self.backend, self.dtype or "float32")
        t0 = time.perf_counter()
        aligner = Aligner.load(self.aligner, *how, self.weights) if self.aligner is not None else None
        listener = Listener.load(self.listen, *how, aligner, self.weights) if self.listen is not None else None
        log.info("listening models loaded in %.1f s: %s", time.perf_counter() - t0,
                 ", ".join(str(m.checkpoint.path) for m in (listener, aligner) if m is not None))
        return Hearing(listener, aligner)


def not_loaded(what: str) -> str:
    """The message for a route or program whose model the server was not started with."""
    flag = "--aligner Qwen/Qwen3-ForcedAligner-0.6B" if what == "aligner" else "--listen Qwen/Qwen3-ASR-0.6B"
    kind = "word timestamps need a Qwen3-ForcedAligner" if what == "aligner" else \
        "transcribing needs a Qwen3-ASR model"
    return f"{kind}, which this server was not started with: start it with {flag} (docs/listen.md)"


class Hearing:
    """The loaded listening models and the turns at them (see the module)."""

    def __init__(self, listener: Listener | None, aligner: Aligner | None, max_active: int = 1,
                 max_waiting: int = 8):
        self.listener = listener
        self.aligner = aligner
        self.max_active, self.max_waiting = max_active, max_waiting
        self._turns = threading.BoundedSemaphore(max_active)
        self._lock = threading.Lock()
        self._in = 0  # recordings being transcribed or waiting

    def check_room(self) -> None:
        """Busy now if a recording would be refused (a streamed answer asks before it starts)."""
        with self._lock:
            self._full()

    def _full(self) -> None:
        if self._in >= self.max_active + self.max_waiting:
            raise Busy(f"busy: {self._in} recordings are being transcribed or waiting, the most this server "
                       "takes; try again shortly", retry_after_s=5.0)

    def _enter(self) -> None:
        with self._lock:
            self._full()
            self._in += 1

    def _leave(self) -> None:
        with self._lock:
            self._in -= 1

    async def run(self, pool: concurrent.futures.Executor, fn: Callable[..., T], *args: Any) -> T:  # noqa: ANN401
        """`fn(*args)` on `pool` in its turn (Busy at once when too many wait)."""
        self._enter()

        def turn() -> T:
            with self._turns:
                return fn(*args)

        try:
            return await asyncio.get_running_loop().run_in_executor(pool, turn)
        finally:
            self._leave()

    def transcribe(self, samples: np.ndarray, rate: int, options: ListenOptions) -> Transcript:
        assert self.listener is not None
        return self.listener.transcribe(samples, options, rate)

    def pieces(self, samples: np.ndarray, rate: int, options: ListenOptions) -> Iterator[TranscriptPiece]:
        """The pieces one by one (options and audio checked now); take them in turn (`run`)."""
        assert self.listener is not None
        return self.listener.pieces(samples, options, rate)
