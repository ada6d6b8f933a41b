"""A request and what its consumer sees: sentences, chunks, failures, and its audio channel.

A `Request` is what `Scheduler.submit` and `Scheduler.open` return: iterate it (or `async for`)
for its `SpeechChunk`s, `cancel()` it, `push()` text into an open one. Its methods are the front
of the scheduler's request channel; its `state` is the scheduler's bookkeeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .options import SpeechOptions
from .prompt import Speaker

if TYPE_CHECKING:
    from .scheduler import Scheduler
    from .text_feed import TextFeed

__all__ = ["Busy", "Request", "RequestState", "SentenceFailed", "SentenceFailure", "SentenceResult", "SpeechChunk"]


class Busy(RuntimeError):
    """The scheduler is full: try again shortly (`retry_after_s` is an estimate)."""

    def __init__(self, message: str, retry_after_s: float):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class SentenceFailed(RuntimeError):
    """A sentence of a request with `on_failure="raise"` failed; `__cause__` is the original error."""


@dataclass
class SentenceResult:
    index: int
    text: str
    seed: int | None
    status: str = "pending"  # "generating", then "done", "failed" or "cancelled"
    error: str | None = None
    frames: int = 0
    stop_reason: str = ""
    ttfa_s: float | None = None  # from the start of this sentence's generation to its first audio
    codes: np.ndarray | None = None  # kept when the request asks for them


@dataclass(frozen=True)
class SpeechChunk:
    """A piece of a request's audio, in order. `sentence_end` marks a sentence's last piece (it may
    hold no samples when the sentence ended on a chunk boundary)."""

    samples: np.ndarray  # float32 mono in [-1, 1]
    sample_rate: int
    index: int  # 0, 1, 2, ... over the whole request
    sentence: int
    frames: int
    codes: np.ndarray  # [frames, 16]
    sentence_end: bool

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate


@dataclass
class SentenceFailure:
    """In a request's channel in place of a failed sentence's remaining chunks."""

    sentence: int
    error: BaseException


@dataclass(eq=False)
class RequestState:
    """A request's bookkeeping, owned by its scheduler and guarded by the scheduler's lock."""

    texts: deque[str] = field(default_factory=deque)  # sentences not started yet
    items: deque[SpeechChunk | SentenceFailure] = field(default_factory=deque)  # for the consumer, in order
    outstanding: int = 0  # sentences started, not yet taken
    taken: int = 0  # sentences wholly taken by the consumer
    release_next: bool = False  # the chunk just taken ended a sentence
    generated: bool = False  # no sentence left to start or running
    feed: TextFeed | None = None  # an open request's text as it arrives
    input_done: bool = True  # no more text will come
    run: Any = None  # its sentence being generated (the scheduler's)
    chunks: int = 0
    ended: threading.Event = field(default_factory=threading.Event)
    waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None  # an awaiting consumer (aget)
    # The request's own condition, on the scheduler's lock: its consumer waits on it, so only this
    # request's changes wake that consumer; the scheduler's thread waits on `scheduler_cond`.
    cond: threading.Condition = field(default_factory=threading.Condition)
    scheduler_cond: threading.Condition | None = None

    def notify(self) -> None:
        """Under the lock: something changed; the request's consumer looks again (also one that
        awaits, `aget`), and so does the scheduler."""
        self.cond.notify_all()
        if self.scheduler_cond is not None:
            self.scheduler_cond.notify_all()
        if self.waiter is not None:
            loop, waiter = self.waiter
            with contextlib.suppress(RuntimeError):  # its loop is closed: nobody awaits it any more
                loop.call_soon_threadsafe(_wake, waiter)


@dataclass(eq=False)  # identity, not field-wise equality
class Request:
    """One submitted text: its sentences, its state, and its audio channel (iterate it for chunks).

    status: "waiting" (admitted, nothing generated yet), "active", then "done" (the consumer took
    the last chunk), "cancelled" or "failed" (on_failure="raise" only).
    """

    id: int
    text: str
    options: SpeechOptions  # checked at submission; sentence i is spoken with `options.sentence(i)`
    keep_codes: bool = False
    on_failure: str = "skip"
    after: Request | None = None
    submitted: float = field(default_factory=time.monotonic)
    sentences: list[SentenceResult] = field(default_factory=list)
    status: str = "waiting"
    first_chunk_s: float | None = None  # submit to the first chunk ready for the consumer
    max_ahead: int = 0  # the most sentences made but not taken at once (its chain's, with `after`)
    scheduler: Scheduler | None = field(default=None, repr=False)  # whose channel this is
    state: RequestState = field(default_factory=RequestState, repr=False)  # the scheduler's

    @property
    def voice(self) -> Speaker:
        return self.options.voice

    @property
    def language(self) -> str:
        return self.options.language

    @property
    def seed(self) -> int | None:
        """The first sentence's seed (sentence i: seed + i); None when greedy."""
        return self.options.seed

    @property
    def speed(self) -> float:
        """The speaking rate (`hearth.stretch`), applied as each chunk lands (on the vocoder's thread)."""
        return self.options.speed

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"

    @property
    def total_sentences(self) -> int:
        """Sentences started so far plus those still to start."""
        return len(self.sentences) + len(self.state.texts)

    @property
    def finished(self) -> bool:
        return self.state.ended.is_set()

    @property
    def errors(self) -> list[SentenceResult]:
        return [s for s in self.sentences if s.status == "failed"]

    def wait(self, timeout: float | None = None) -> bool:
        """True once the request has ended (all taken, cancelled or failed)."""
        return self.state.ended.wait(timeout)

    def cancel(self) -> None:
        """Stop this request now: generation stops within a frame, queued audio is dropped, and the
        consumer's iteration ends. Other requests are untouched."""
        state = self.state
        with state.cond:
            if self.finished:
                return
            state.items.clear()
            state.texts.clear()
            state.input_done = True
            for s in self.sentences[state.taken :]:  # made or making, but not wholly taken
                if s.status != "failed":
                    s.status = "cancelled"
            run = state.run
            if run is not None:
                run.halt()
            self.finish("cancelled")  # (wakes the consumer and the scheduler)
        if run is not None:
            run.stop()  # generation stops within a frame

    def finish(self, status: str) -> None:
        """Under the lock (the scheduler's): the request is over for its consumer."""
        self.status = status
        self.state.generated = True
        self.after = None  # a finished request ends its chain (and old ones can be collected)
        self.state.ended.set()
        self.state.notify()

    def push(self, text: str) -> None:
        """More text for an open request (`Scheduler.open`): each sentence is generated as soon as
        it is complete. Ignored once the request is cancelled."""
        assert self.scheduler is not None
        self.scheduler.push(self, text)

    def end(self) -> None:
        """No more text for an open request: what remains is spoken, then the request ends."""
        assert self.scheduler is not None
        self.scheduler.end_input(self)

    def fail_sentence(self, index: int, error: str) -> None:
        """Mark a sentence failed by its consumer (a sink that broke while playing it)."""
        with self.state.cond:
            self.sentences[index].status, self.sentences[index].error = "failed", error

    def text_taken(self, sentence: int, frames: int | None = None) -> str:
        """The text of sentence `sentence` the model had taken in by its frame `frames` (None: by the
        frames made so far). In the interleaved mode each frame takes in one more text token, so
        this is where the speech had got to in the text (a little ahead of the audio); otherwise
        the whole sentence is in the prompt from the start."""
        assert self.scheduler is not None
        s = self.sentences[sentence]
        frames = s.frames if frames is None else frames
        if frames <= 0:
            return ""
        if self.options.text_mode != "interleaved":
            return s.text
        engine = self.scheduler.engine
        ids = engine.prompt(s.text).text
        return s.text if frames >= len(ids) else engine.tokenizer.decode(ids[:frames]).strip()

    def get(self, timeout: float | None = None) -> SpeechChunk | None:
        """The next chunk; None at the end (or when `timeout` passes first: check `finished`)."""
        return self._take(timeout)

    def _take(self, timeout: float | None) -> SpeechChunk | None:
        state = self.state
        deadline = None if timeout is None else time.monotonic() + timeout
        with state.cond:
            if state.release_next:
                state.release_next = False
                state.outstanding -= 1
                state.taken += 1
                state.notify()
            while True:
                if state.items:
                    item = state.items.popleft()
                    if isinstance(item, SpeechChunk):
                        state.release_next = item.sentence_end
                        return item
                    # A failed sentence: its end, as far as the consumer is concerned.
                    state.outstanding -= 1
                    state.taken += 1
                    state.notify()
                    if self.on_failure == "raise":
                        self.finish("failed")
                        raise SentenceFailed(f"sentence {item.sentence + 1} failed: {item.error}") from item.error
                    continue
                if self.finished or state.generated and not state.outstanding:
                    if not self.finished:
                        self.finish("done")
                    return None
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                state.cond.wait(remaining)

    def __iter__(self) -> Iterator[SpeechChunk]:
        while (chunk := self.get()) is not None:
            yield chunk

    async def aget(self) -> SpeechChunk | None:
        """`get` for asyncio: the next chunk, or None at the end, awaited without holding a thread
        (the scheduler wakes the loop when a chunk lands or the request ends)."""
        state = self.state
        loop = asyncio.get_running_loop()
        while True:
            waiter = loop.create_future()
            with state.cond:  # watched before looking, so no wake-up is missed
                state.waiter = (loop, waiter)
            try:
                chunk = self.get(timeout=0)
                if chunk is not None or self.finished:
                    return chunk
                await waiter
            finally:
                with state.cond:
                    state.waiter = None

    async def __aiter__(self) -> AsyncIterator[SpeechChunk]:
        while (chunk := await self.aget()) is not None:
            yield chunk


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
