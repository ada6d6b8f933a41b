"""A request and what its consumer sees: sentences, chunks, failures, and its audio channel.

A `Request` is what `Scheduler.submit` and `Scheduler.open` return: iterate it (or `async for`)
for its `RequestChunk`s, `cancel()` it, `push()` text into an open one. Its `channel` carries its
sentences and audio from the scheduler to its consumer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from hearth.options import SpeechOptions
from hearth.runtime.channel import Channel, RequestChunk, SentenceFailure
from hearth.runtime.words import SentenceWords, TimedWord
from hearth.text.normalize import Normalized
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


__all__ = ["Busy", "Channel", "Request", "RequestChunk", "SentenceFailed", "SentenceFailure", "SentenceResult",
           "SentenceWords", "TimedWord"]


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
    words: tuple[TimedWord, ...] | None = None  # with word_timestamps, once aligned (after its audio)
    words_error: str | None = None  # why it has none, if it has none


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
    # Sentence i's options (an SSML part's) and the silence before it, `runtime.sentence_plan`'s;
    # its SSML marks (name, sentence, offset); each part's spoken text with its span map.
    plan: list[tuple[SpeechOptions, float]] = field(default_factory=list, repr=False)
    marks: list[tuple[str, int, int]] = field(default_factory=list)
    spoken: list[Normalized] = field(default_factory=list, repr=False)
    part_of: list[int] = field(default_factory=list, repr=False)  # sentence i's part in `spoken`
    spoken_map: object = field(default=None, repr=False)  # where its sentences stand (`words.SpokenMap`)

    def sentence_options(self, index: int) -> SpeechOptions:
        """Sentence `index`'s options for the engine, for its text as it stands (made speakable at
        admission; its words are timed here, not by the engine)."""
        said = (self.plan[index][0] if index < len(self.plan) else self.options).as_spoken().sentence(index)
        return replace(said, word_timestamps=False) if said.word_timestamps else said

    def chain_outstanding(self) -> int:
        """Sentences made but not taken, of this request and those it follows (`after`)."""
        total: int = 0
        r: Request | None = self
        while r is not None and not r.finished:
            total += r.channel.outstanding
            r = r.after
        return total

    @property
    def words(self) -> tuple[TimedWord, ...]:
        """With word_timestamps: every word aligned so far, in order (all of them once the request
        has ended); times from the start of its audio, places in its text."""
        return tuple(w for s in self.sentences for w in s.words or ())

    def pause_before(self, index: int) -> float:
        return self.plan[index][1] if index < len(self.plan) else 0.0

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
        event = self.next_event(timeout, words=False)
        assert not isinstance(event, SentenceWords)
        return event

    def next_event(self, timeout: float | None = None, words: bool = True) -> RequestChunk | SentenceWords | None:
        """`get`, with each sentence's words (word_timestamps) as a `SentenceWords` event among the
        chunks: after the sentence's last chunk, as soon as they are aligned."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.channel.cond:
            while True:
                item = self.channel.take(deadline)
                if isinstance(item, RequestChunk):
                    return item
                if isinstance(item, SentenceWords):
                    if words:
                        return item
                    continue
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

    def events(self) -> Iterator[RequestChunk | SentenceWords]:
        """Its chunks, and each sentence's words after them (`next_event`)."""
        while (event := self.next_event()) is not None:
            yield event

    async def aget(self, words: bool = False) -> RequestChunk | SentenceWords | None:
        """`get` for asyncio (`next_event` with `words`): the next chunk, or None at the end, awaited
        without holding a thread (the scheduler wakes the loop when a chunk lands or the request ends)."""
        loop = asyncio.get_running_loop()
        while True:
            waiter = loop.create_future()
            self.channel.watch(loop, waiter)  # watched before looking, so no wake-up is missed
            try:
                event = self.next_event(timeout=0, words=words)
                if event is not None or self.finished:
                    return event
                await waiter
            finally:
                self.channel.watch(loop, None)

    async def __aiter__(self) -> AsyncIterator[RequestChunk]:
        while (chunk := await self.aget()) is not None:
            assert isinstance(chunk, RequestChunk)
            yield chunk

    async def aevents(self) -> AsyncIterator[RequestChunk | SentenceWords]:
        """`events` for asyncio."""
        while (event := await self.aget(words=True)) is not None:
            yield event


