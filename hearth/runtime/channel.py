"""A request's audio channel: the sentences it has still to start, the audio (and failures) made
for its consumer, in order, and the counts that bound how far generation runs ahead of the
consumer (`hearth.runtime.request.Request` owns one; the scheduler feeds it)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from hearth.errors import InputError
from hearth.runtime.words import SentenceWords

__all__ = ["Channel", "RequestChunk", "SentenceFailure", "TextFeed"]


class TextFeed(Protocol):
    """An open request's text so far, as the request sees it (`hearth.runtime.text_feed.TextFeed`)."""

    @property
    def partial(self) -> str: ...  # the certain start of the sentence being written

    @property
    def owed(self) -> object | None: ...  # the running sentence the next text belongs to

    def push(self, text: str) -> list[str]: ...  # the sentences this piece completed

    def end(self) -> list[str]: ...  # what remains, as sentences

    def startable(self) -> bool: ...  # the sentence being written may start now

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
        self._items: deque[RequestChunk | SentenceFailure | SentenceWords] = deque()  # for the consumer, in order
        self.outstanding = 0  # sentences started, not yet wholly taken
        self.words_pending = 0  # sentences whose words are being timed: the request ends after them
        self.samples = 0  # audio samples delivered so far
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
        self.samples += len(samples)
        self.notify()

    def deliver_words(self, words: SentenceWords) -> None:
        """A sentence's words (`words_pending` counted it), for the consumer after what it has."""
        self.words_pending -= 1
        if not self.ended.is_set():
            self._items.append(words)
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

    def take(self, deadline: float | None) -> RequestChunk | SentenceFailure | SentenceWords | bool:
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
                elif isinstance(item, SentenceFailure):
                    self._sentence_taken()
                return item
            if self.ended.is_set() or self.generated and not self.outstanding and not self.words_pending:
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


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
