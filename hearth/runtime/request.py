"""A request and what its consumer sees: sentences, chunks, failures, and its audio channel.

A `Request` is what `Scheduler.submit` and `Scheduler.open` return: iterate it (or `async for`)
for its `RequestChunk`s, `cancel()` it, `push()` text into an open one. Its `channel` carries its
sentences and audio from the scheduler to its consumer.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from hearth.errors import InputError
from hearth.options import SpeechOptions
from hearth.text.prompt import Speaker

if TYPE_CHECKING:
    from hearth.engine import Engine
    from hearth.streaming.pacing import SpeechRate


class Owner(Protocol):
    """The scheduler a request belongs to, as the request sees it (`hearth.runtime.scheduler.Scheduler`)."""

    engine: Engine
    rate: SpeechRate  # audio per wall second, lately

    def push(self, request: Request, text: str) -> None: ...  # more text for an open request

    def end_input(self, request: Request) -> None: ...  # no more text for it


class TextFeed(Protocol):
    """An open request's text so far, as the request sees it (`hearth.runtime.text_feed.TextFeed`)."""

    @property
    def partial(self) -> str: ...  # the certain start of the sentence being written

    @property
    def owed(self) -> object | None: ...  # the running sentence the next text belongs to

    def push(self, text: str) -> list[str]: ...  # the sentences this piece completed

    def end(self) -> list[str]: ...  # what remains, as sentences

    def startable(self) -> bool: ...  # the sentence being written may start now

__all__ = ["Busy", "Channel", "Request", "RequestChunk", "SentenceFailed", "SentenceFailure", "SentenceResult"]


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
class RequestChunk:
    """A piece of a request's audio, in order over its sentences (an engine stream's `AudioChunk`,
    which is one utterance's, placed in its request). `sentence_end` marks a sentence's last piece (it may
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


class Channel:
    """A request's channel: the sentences it has still to start, the audio (and failures) made for
    its consumer, in order, and the counts that bound how far generation runs ahead of the consumer.

    The scheduler calls the producer's methods (under its lock, which the channel's condition
    shares); the request's consumer takes from it (`take`). Nothing else touches its fields.
    """

    def __init__(self, lock: threading.RLock | None = None, scheduler_cond: threading.Condition | None = None):
        self.texts: deque[str] = deque()  # sentences not started yet
        self._items: deque[RequestChunk | SentenceFailure] = deque()  # for the consumer, in order
        self.outstanding = 0  # sentences started, not yet wholly taken
        self._taken = 0  # sentences wholly taken by the consumer
        self._release_next = False  # the chunk just taken ended a sentence
        self.generated = False  # no sentence left to start or running
        self.feed: TextFeed | None = None  # an open request's text as it arrives
        self.input_done = True  # no more text will come
        self.run: Any = None  # its sentence being generated (the scheduler's `SentenceRun`)
        self._chunks = 0
        self.ended = threading.Event()
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None  # an awaiting consumer
        # The request's own condition, on the scheduler's lock: its consumer waits on it, so only this
        # request's changes wake that consumer; the scheduler's thread waits on `scheduler_cond`.
        self.cond = threading.Condition(lock) if lock is not None else threading.Condition()
        self._scheduler_cond = scheduler_cond

    # -- the producer's side (the scheduler, under its lock) ---------------------------------------

    def notify(self) -> None:
        """Something changed: the request's consumer looks again (also one that awaits), and so does
        the scheduler."""
        self.cond.notify_all()
        if self._scheduler_cond is not None:
            self._scheduler_cond.notify_all()
        if self._waiter is not None:
            loop, waiter = self._waiter
            with contextlib.suppress(RuntimeError):  # its loop is closed: nobody awaits it any more
                loop.call_soon_threadsafe(_wake, waiter)

    def add(self, texts: list[str]) -> None:
        """Sentences to speak, after those already queued."""
        self.texts.extend(texts)
        self.notify()

    def open_feed(self, feed: TextFeed) -> None:
        """Its text comes later, through `feed` (`push`, then `end_input`)."""
        self.feed, self.input_done = feed, False

    def push(self, text: str) -> None:
        """More text of an open request: the sentences it completes are queued."""
        if self.feed is None or self.input_done:
            raise InputError("this request takes no more text (push needs a request from open(), before end())",
                             "text")
        self.add(self.feed.push(text))

    def end_input(self) -> bool:
        """No more text: what the feed holds is queued. False when the input had already ended."""
        if self.input_done:
            return False
        self.input_done = True
        if self.feed is not None:
            self.texts.extend(self.feed.end())
        return True

    def startable(self) -> bool:
        """A sentence could start now: none is running and one is queued (or, still being written,
        may start early)."""
        if self.run is not None:
            return False
        return bool(self.texts) or (self.feed is not None and self.feed.startable())

    def begin(self, run: Any) -> tuple[str, bool]:  # noqa: ANN401 - the scheduler's `SentenceRun`
        """`run` generates the next sentence: (its text, whether it is still being written)."""
        partial = not self.texts
        text = self.feed.partial if partial and self.feed is not None else self.texts.popleft()
        self.outstanding += 1
        self.run = run
        return text, partial and self.feed is not None

    def deliver(self, samples: np.ndarray, sample_rate: int, sentence: int, frames: int, codes: np.ndarray,
                sentence_end: bool) -> None:
        """A piece of the running sentence's audio, for the consumer."""
        self._items.append(RequestChunk(samples, sample_rate, self._chunks, sentence, frames, codes, sentence_end))
        self._chunks += 1
        self.notify()

    def sentence_failed(self, sentence: int, error: BaseException, *, drop_rest: bool = False) -> None:
        """In place of a failed sentence's remaining audio; `drop_rest`: and no sentence after it."""
        self._items.append(SentenceFailure(sentence, error))
        if drop_rest:
            self.texts.clear()
        self.notify()

    def run_ended(self, cancelled: bool) -> None:
        """The running sentence's stream has ended (its last chunk or failure is in)."""
        self.run = None
        if cancelled:
            self.outstanding = 0

    def settle(self, live: bool) -> None:
        """A `live` request (waiting or active) with nothing left to start or running is generated:
        the consumer drains what is made, then the request ends."""
        if (live and self.input_done and not self.texts and self.run is None
                and (self.feed is None or self.feed.owed is None)):
            self.generated = True

    @property
    def retired(self) -> bool:
        """Generated, with no sentence running: out of the scheduler's rotation."""
        return self.generated and self.run is None

    def abort(self, sentence: int, error: BaseException) -> Any:  # noqa: ANN401
        """End with `error` in place of what remains (the scheduler's thread died). Returns the
        running sentence, its turns stopped, for the caller to stop outside the lock (or None)."""
        self.texts.clear()
        self.input_done = True
        run = self.run
        self.sentence_failed(sentence, error)
        if run is not None:
            run.stop_turns()
        return run

    def drop(self) -> Any:  # noqa: ANN401
        """Cancelled: queued text and audio go; the running sentence's turns are stopped and it is returned (to be
        stopped outside the lock), or None."""
        self._items.clear()
        self.texts.clear()
        self.input_done = True
        if self.run is not None:
            self.run.stop_turns()
        return self.run

    def close(self) -> None:
        """The request is over for its consumer."""
        self.generated = True
        self.ended.set()
        self.notify()

    # -- the consumer's side -------------------------------------------------------------------------

    @property
    def taken(self) -> int:
        """Sentences wholly taken by the consumer."""
        return self._taken

    def take(self, deadline: float | None) -> RequestChunk | SentenceFailure | bool:
        """Under the lock: the next chunk or failure; True at the end (all taken), False when the
        deadline (a `time.monotonic()`) passes first. A failure counts its sentence as taken."""
        if self._release_next:
            self._release_next = False
            self._sentence_taken()
        while True:
            if self._items:
                item = self._items.popleft()
                if isinstance(item, RequestChunk):
                    self._release_next = item.sentence_end
                else:
                    self._sentence_taken()
                return item
            if self.ended.is_set() or self.generated and not self.outstanding:
                return True
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            self.cond.wait(remaining)

    def _sentence_taken(self) -> None:
        self.outstanding -= 1
        self._taken += 1
        self.notify()

    def watch(self, loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[None] | None) -> None:
        """An awaiting consumer: `waiter` is woken at the next change (None: nobody awaits)."""
        with self.cond:
            self._waiter = None if waiter is None else (loop, waiter)


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
    scheduler: Owner | None = field(default=None, repr=False)  # whose channel this is
    channel: Channel = field(default_factory=Channel, repr=False)  # its sentences and audio

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
        """The speaking rate (`hearth.streaming.stretch`), applied as each chunk lands (on the vocoder's thread)."""
        return self.options.speed

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"

    @property
    def total_sentences(self) -> int:
        """Sentences started so far plus those still to start."""
        return len(self.sentences) + len(self.channel.texts)

    @property
    def finished(self) -> bool:
        return self.channel.ended.is_set()

    @property
    def errors(self) -> list[SentenceResult]:
        return [s for s in self.sentences if s.status == "failed"]

    def wait(self, timeout: float | None = None) -> bool:
        """True once the request has ended (all taken, cancelled or failed)."""
        return self.channel.ended.wait(timeout)

    def cancel(self) -> None:
        """Stop this request now: generation stops within a frame, queued audio is dropped, and the
        consumer's iteration ends. Other requests are untouched."""
        with self.channel.cond:
            if self.finished:
                return
            run = self.channel.drop()
            for s in self.sentences[self.channel.taken :]:  # made or making, but not wholly taken
                if s.status != "failed":
                    s.status = "cancelled"
            self.finish("cancelled")  # (wakes the consumer and the scheduler)
        if run is not None:
            run.cancel_stream()  # generation stops within a frame

    def finish(self, status: str) -> None:
        """Under the lock (the scheduler's): the request is over for its consumer."""
        self.status = status
        self.after = None  # a finished request ends its chain (and old ones can be collected)
        self.channel.close()

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
        with self.channel.cond:
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

    def get(self, timeout: float | None = None) -> RequestChunk | None:
        """The next chunk; None at the end (or when `timeout` passes first: check `finished`).
        With `on_failure="raise"`, a failed sentence raises `SentenceFailed` and ends the request."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.channel.cond:
            while True:
                item = self.channel.take(deadline)
                if isinstance(item, RequestChunk):
                    return item
                if isinstance(item, SentenceFailure):  # a failed sentence: its end, for the consumer
                    if self.on_failure == "raise":
                        self.finish("failed")
                        raise SentenceFailed(f"sentence {item.sentence + 1} failed: {item.error}") from item.error
                    continue
                if item and not self.finished:
                    self.finish("done")
                return None

    def __iter__(self) -> Iterator[RequestChunk]:
        while (chunk := self.get()) is not None:
            yield chunk

    async def aget(self) -> RequestChunk | None:
        """`get` for asyncio: the next chunk, or None at the end, awaited without holding a thread
        (the scheduler wakes the loop when a chunk lands or the request ends)."""
        loop = asyncio.get_running_loop()
        while True:
            waiter = loop.create_future()
            self.channel.watch(loop, waiter)  # watched before looking, so no wake-up is missed
            try:
                chunk = self.get(timeout=0)
                if chunk is not None or self.finished:
                    return chunk
                await waiter
            finally:
                self.channel.watch(loop, None)

    async def __aiter__(self) -> AsyncIterator[RequestChunk]:
        while (chunk := await self.aget()) is not None:
            yield chunk


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
