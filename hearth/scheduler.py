"""The scheduler: one engine, many clients, each with an audio channel of its own.

    scheduler = Scheduler(engine)
    request = scheduler.submit("First sentence. Second one.", voice="ryan", language="english", seed=7)
    for chunk in request:            # in any thread, at the consumer's own pace
        sink.write(chunk.samples)
    request.cancel()                 # this request only; the others go on

A request's text is split into sentences; the scheduler starts sentence after sentence for
whichever request may have one, in turn (round robin), so a short request is never stuck behind a
long one. Each sentence is a fresh utterance (fresh caches, vocoder state and seeded generator), so
its codes equal a clean single run of that sentence whatever came before: a cancel, a fault,
another client's request.

Text that is still being written (`open` with `text_mode="interleaved"`) is spoken before its
sentences end: a sentence starts as soon as its first words are certain (`SentenceSplitter.pending`)
and takes in the rest as it comes (`Engine.open`). Such a sentence can wait for text, and while it
waits it computes nothing, so the CPU goes to others: sentences take turns frame by frame, the
earliest started first, and one that waits for text gives its turn to the next (`hearth.turns`). The
next sentence starts only when every running one waits for text; so with whole texts one
sentence runs at a time, as before.

Batched (`max_batch` above 1): up to that many sentences of different requests are generated
together, stepped frame by frame as one batch by a `FrameBatcher` (one talker call and one
predictor call per frame for all of them); the next sentence starts while fewer than `max_batch`
compute, and a sentence waiting for text sits out without holding the batch.

Backpressure, per consumer: a request never has more than two sentences made but not taken by its
consumer (the one being taken, and the next one), so a slow consumer costs the others nothing and
holds at most two sentences of audio. A sentence counts as taken once the consumer asks for what
comes after its last chunk. `after=` chains requests that one consumer takes in order (a local
player): the chain shares that bound, and a request starts only once its predecessor is generated.

Admission is bounded: at most `max_active` requests are generated in turn, `max_waiting` more
wait, and `submit` raises `Busy` at once beyond that. Failures are isolated: a sentence that fails
(generation or vocoder) is reported on its `SentenceResult`, and the request goes on with the next
sentence (or, with `on_failure="raise"`, ends with the error raised to its consumer).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from .batch import FrameBatcher
from .engine import Engine, InputError, LiveUtterance
from .options import SpeechOptions
from .prompt import ClonedVoice, Speaker
from .sampling import DEFAULT_BUDGET, FrameBudget
from .sentences import SentenceSplitter, clean_text, is_speakable, split_sentences
from .settings import trim_heap
from .stream import AudioChunk, AudioStream, StreamEnd
from .stretch import Stretcher
from .turns import Turn, Turns

__all__ = ["MAX_REQUEST_CHARS", "Busy", "Request", "Scheduler", "SentenceFailed", "SentenceResult", "SpeechChunk"]

log = logging.getLogger(__name__)

MAX_REQUEST_CHARS = 100_000  # per request; longer texts are sent in parts
_AHEAD = 2  # sentences made but not yet taken, per consumer: the one being taken and the next


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
    codes: torch.Tensor | None = None  # kept when the request asks for them


@dataclass(frozen=True)
class SpeechChunk:
    """A piece of a request's audio, in order. `sentence_end` marks a sentence's last piece (it may
    hold no samples when the sentence ended on a chunk boundary)."""

    samples: np.ndarray  # float32 mono in [-1, 1]
    sample_rate: int
    index: int  # 0, 1, 2, ... over the whole request
    sentence: int
    frames: int
    codes: torch.Tensor  # [frames, 16]
    sentence_end: bool

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate


@dataclass
class _SentenceFailure:
    sentence: int
    error: BaseException


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
    _scheduler: Scheduler | None = field(default=None, repr=False)
    _texts: deque[str] = field(default_factory=deque, repr=False)  # sentences not started yet
    _items: deque[SpeechChunk | _SentenceFailure] = field(default_factory=deque, repr=False)
    _outstanding: int = field(default=0, repr=False)  # sentences started, not yet taken
    _taken: int = field(default=0, repr=False)  # sentences wholly taken by the consumer
    _release_next: bool = field(default=False, repr=False)  # the chunk just taken ended a sentence
    _generated: bool = field(default=False, repr=False)  # no sentence left to start or running
    _splitter: SentenceSplitter | None = field(default=None, repr=False)  # an open request's text so far
    _input_done: bool = field(default=True, repr=False)  # no more text will come
    _live: bool = field(default=False, repr=False)  # open and interleaved: sentences start before they end
    _partial: str = field(default="", repr=False)  # the certain start of the sentence being written
    _run: _Running | None = field(default=None, repr=False)  # its sentence being generated
    _owed: _Running | None = field(default=None, repr=False)  # started on a sentence still being written
    _chars: int = field(default=0, repr=False)
    _chunks: int = field(default=0, repr=False)
    _ended: threading.Event = field(default_factory=threading.Event, repr=False)
    _stretcher: tuple[int, Stretcher] | None = field(default=None, repr=False)  # (sentence, its stretcher)
    _waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = field(default=None, repr=False)  # aget

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
        """The speaking rate (`hearth.stretch`), applied as the consumer takes each chunk."""
        return self.options.speed

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"

    @property
    def total_sentences(self) -> int:
        """Sentences started so far plus those still to start."""
        return len(self.sentences) + len(self._texts)

    @property
    def finished(self) -> bool:
        return self._ended.is_set()

    @property
    def errors(self) -> list[SentenceResult]:
        return [s for s in self.sentences if s.status == "failed"]

    def wait(self, timeout: float | None = None) -> bool:
        """True once the request has ended (all taken, cancelled or failed)."""
        return self._ended.wait(timeout)

    def cancel(self) -> None:
        """Stop this request now: generation stops within a frame, queued audio is dropped, and the
        consumer's iteration ends. Other requests are untouched."""
        if self._scheduler is not None:
            self._scheduler._cancel(self)

    def push(self, text: str) -> None:
        """More text for an open request (`Scheduler.open`): each sentence is generated as soon as
        it is complete. Ignored once the request is cancelled."""
        assert self._scheduler is not None
        self._scheduler._push(self, text)

    def end(self) -> None:
        """No more text for an open request: what remains is spoken, then the request ends."""
        assert self._scheduler is not None
        self._scheduler._end_input(self)

    def fail_sentence(self, index: int, error: str) -> None:
        """Mark a sentence failed by its consumer (a sink that broke while playing it)."""
        assert self._scheduler is not None
        with self._scheduler._cond:
            self.sentences[index].status, self.sentences[index].error = "failed", error

    def text_taken(self, sentence: int, frames: int | None = None) -> str:
        """The text of sentence `sentence` the model had taken in by its frame `frames` (None: by the
        frames made so far). In the interleaved mode each frame takes in one more text token, so
        this is where the speech had got to in the text (a little ahead of the audio); otherwise
        the whole sentence is in the prompt from the start."""
        assert self._scheduler is not None
        s = self.sentences[sentence]
        frames = s.frames if frames is None else frames
        if frames <= 0:
            return ""
        if self.options.text_mode != "interleaved":
            return s.text
        engine = self._scheduler.engine
        ids = engine.prompt(s.text).text
        return s.text if frames >= len(ids) else engine.tokenizer.decode(ids[:frames]).strip()

    def get(self, timeout: float | None = None) -> SpeechChunk | None:
        """The next chunk; None at the end (or when `timeout` passes first: check `finished`)."""
        assert self._scheduler is not None
        chunk = self._scheduler._take(self, timeout)
        if chunk is None or self.speed == 1.0:
            return chunk
        return self._stretched(chunk)

    def _stretched(self, chunk: SpeechChunk) -> SpeechChunk:
        """`chunk` at the request's speed. Each sentence is stretched as one stream (its chunks join
        without seams) and flushed at its end, so a chunk still holds only its sentence's audio
        and a sentence lasts exactly its samples / speed."""
        if self._stretcher is None or self._stretcher[0] != chunk.sentence:  # (a failed sentence's is dropped)
            self._stretcher = (chunk.sentence, Stretcher(self.speed, chunk.sample_rate))
        stretcher = self._stretcher[1]
        samples = stretcher.feed(chunk.samples)
        if chunk.sentence_end:
            samples = np.concatenate([samples, stretcher.finish()])
            self._stretcher = None
        return replace(chunk, samples=samples)

    def __iter__(self) -> Iterator[SpeechChunk]:
        while (chunk := self.get()) is not None:
            yield chunk

    async def aget(self) -> SpeechChunk | None:
        """`get` for asyncio: the next chunk, or None at the end, awaited without holding a thread
        (the scheduler wakes the loop when a chunk lands or the request ends)."""
        assert self._scheduler is not None
        loop = asyncio.get_running_loop()
        while True:
            waiter = self._scheduler._watch(self, loop)  # watched before looking, so no wake-up is missed
            try:
                chunk = self.get(timeout=0)
                if chunk is not None or self.finished:
                    return chunk
                await waiter
            finally:
                self._scheduler._unwatch(self)

    async def __aiter__(self) -> AsyncIterator[SpeechChunk]:
        while (chunk := await self.aget()) is not None:
            yield chunk


class Scheduler:
    """Owns an engine's generation: requests in, one audio channel per request out."""

    def __init__(self, engine: Engine, *, max_active: int = 4, max_waiting: int = 16, max_batch: int = 1):
        if max_active < 1 or max_waiting < 0 or max_batch < 1:
            raise ValueError("max_active and max_batch must be at least 1, and max_waiting at least 0")
        self.engine = engine
        self.max_active = max_active
        self.max_waiting = max_waiting
        self.max_batch = max_batch
        # More than one: up to max_batch sentences (of different requests) are generated together,
        # stepped frame by frame as one batch (`hearth.batch`).
        self._batcher = FrameBatcher(engine.lm, max_batch) if max_batch > 1 else None
        self._cond = threading.Condition()
        self._requests: list[Request] = []  # admitted, not yet generated; round-robin order
        self._turn = 0
        self._ids = 0
        self._closed = False
        self._turns = Turns(self._wake)  # the running sentences' frame turns
        self._thread = threading.Thread(target=self._loop, name="hearth-scheduler", daemon=True)
        self._thread.start()

    # -- clients ---------------------------------------------------------------------------------

    def submit(self, text: str, voice: Speaker, language: str = "auto", *, seed: int | None = None,
               instruct: str | None = None, text_mode: str | None = None, greedy: bool = False,
               max_new_tokens: int | None = None, budget: FrameBudget | None = DEFAULT_BUDGET,
               chunk_frames: int | None = None, first_chunk_frames: int | None = None, paced: bool = False,
               keep_codes: bool = False, split: bool = True, on_failure: str = "skip",
               after: Request | None = None, speed: float = 1.0) -> Request:
        """Admit a text; returns its request at once. Bad input raises InputError, a full scheduler
        Busy; neither disturbs anything already admitted.

        Sentence i is sampled with `seed + i`; without a seed (and not greedy) one is drawn here, so
        `request.seed` always says how to hear the same again. `split=False` speaks the text as one
        prompt (as the official package does), `max_new_tokens` and `budget` bound each sentence.
        `speed` (0.25 to 4.0) changes the speaking rate and keeps the pitch; 1.0 leaves the audio
        untouched."""
        if not isinstance(text, str):
            raise InputError("the text must be a string", "text")
        if len(text) > MAX_REQUEST_CHARS:
            raise InputError(f"the text is {len(text):,} characters; one request takes at most "
                             f"{MAX_REQUEST_CHARS:,}. Send it in parts (for example paragraph by paragraph)", "text")
        cleaned = clean_text(text)
        if not cleaned.strip():
            raise InputError("the text is empty; give some words to speak", "text")
        texts = list(split_sentences(cleaned)) if split else [cleaned.strip()]
        if not texts:
            raise InputError("nothing to speak: the text has no letters or digits (only punctuation or symbols)",
                             "text")
        options = self.engine.speech_options(
            voice, language, seed=seed, instruct=instruct, text_mode=text_mode, greedy=greedy,
            max_new_tokens=max_new_tokens, budget=budget, chunk_frames=chunk_frames,
            first_chunk_frames=first_chunk_frames, paced=paced, speed=speed)
        request = self._request(cleaned, options, keep_codes, on_failure, after)
        return self._admit(request, texts)

    def open(self, voice: Speaker, language: str = "auto", *, seed: int | None = None, instruct: str | None = None,
             text_mode: str | None = None, greedy: bool = False, max_new_tokens: int | None = None,
             budget: FrameBudget | None = DEFAULT_BUDGET, chunk_frames: int | None = None,
             first_chunk_frames: int | None = None, paced: bool = False, keep_codes: bool = False,
             on_failure: str = "skip", speed: float = 1.0) -> Request:
        """Admit a request whose text comes later, in pieces: `request.push(text)` any number of
        times, then `request.end()`. Sentences are found as the text arrives (`SentenceSplitter`:
        the same sentences as `submit` of the whole text, so the same audio for the same seed), and
        each is generated as soon as it is complete. The request holds its place (and, once it has
        spoken, an active slot) until it ends or is cancelled.

        With `text_mode="interleaved"` a sentence starts before it ends: as soon as its first words
        are certain, then it takes in its text as it arrives (the codes are still those of the
        whole sentence)."""
        engine = self.engine
        options = engine.speech_options(
            voice, language, seed=seed, instruct=instruct, text_mode=text_mode, greedy=greedy,
            max_new_tokens=max_new_tokens, budget=budget, chunk_frames=chunk_frames,
            first_chunk_frames=first_chunk_frames, paced=paced, speed=speed)
        request = self._request("", options, keep_codes, on_failure, None)
        request._splitter, request._input_done = SentenceSplitter(), False
        # An in-context clone's prompt lays the reference's frames beside the transcript and the
        # text, so it holds the sentence's first (reference frames + 1) text tokens: usually the
        # whole sentence. Its sentences start when they are complete (the same codes either way).
        in_context = isinstance(request.voice, ClonedVoice) and request.voice.in_context
        request._live = options.text_mode == "interleaved" and not in_context
        if request._live:
            engine.batch_invariance()  # measured once per engine, before any sentence needs it
        return self._admit(request, [])

    def _request(self, text: str, options: SpeechOptions, keep_codes: bool, on_failure: str,
                 after: Request | None) -> Request:
        """A request (not yet admitted) for options already checked."""
        if on_failure not in ("skip", "raise"):
            raise InputError(f"on_failure must be 'skip' or 'raise', got {on_failure!r}", "on_failure")
        after = after if after is not None and not after.finished else None
        return Request(id=0, text=text, options=options, keep_codes=keep_codes, on_failure=on_failure, after=after,
                       _scheduler=self)

    def _admit(self, request: Request, texts: list[str]) -> Request:
        with self._cond:
            if self._closed:
                raise RuntimeError("the scheduler is closed")
            if len(self._requests) >= self.max_active + self.max_waiting:
                active = self._active()
                raise Busy(f"busy: {active} requests are being spoken and {len(self._requests) - active} are "
                           "waiting, the most this server takes; try again shortly", retry_after_s=2.0)
            self._ids += 1
            request.id = self._ids
            request.submitted = time.monotonic()
            request._texts.extend(texts)
            self._requests.append(request)
            self._notify(request)
        return request

    def idle(self) -> bool:
        with self._cond:
            return not self._requests and not self._turns.running()

    def counts(self) -> dict[str, int]:
        """Requests being generated in turn, and requests waiting for a turn."""
        with self._cond:
            active = self._active()
            return {"active_streams": active, "queue_depth": len(self._requests) - active}

    def batched_steps(self) -> tuple[int, int]:
        """(calls, rows stepped) of the frame batcher so far: their ratio is the mean batch; (0, 0)
        when the scheduler does not batch."""
        return (self._batcher.calls, self._batcher.rows_stepped) if self._batcher is not None else (0, 0)

    def close(self) -> None:
        """Cancel every request and stop the scheduler thread."""
        with self._cond:
            self._closed = True
            pending = list(self._requests)
        for request in pending:
            self._cancel(request)
        with self._cond:
            self._cond.notify_all()  # the scheduler thread sees it is closed (each cancel woke its consumer)
        self._thread.join(timeout=30)
        if self._batcher is not None:
            self._batcher.close()

    def __enter__(self) -> Scheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the channel (called by Request) ---------------------------------------------------------

    def _push(self, request: Request, text: str) -> None:
        if not isinstance(text, str):
            raise InputError("the text must be a string")
        with self._cond:
            if request.finished:
                return  # cancelled (or failed): the text has nowhere to go
            if request._splitter is None or request._input_done:
                raise InputError("this request takes no more text (push needs a request from open(), before end())")
            if request._chars + len(text) > MAX_REQUEST_CHARS:
                raise InputError(f"one request takes at most {MAX_REQUEST_CHARS:,} characters; end this one and "
                                 "open another")
            request._chars += len(text)
            request.text += text
            self._route(request, request._splitter.push(text))

    def _route(self, request: Request, sentences: list[str]) -> None:
        """Under the lock: sentences the splitter completed, and the start of the one being written."""
        splitter = request._splitter
        assert splitter is not None
        if sentences and request._owed is not None:  # the first completes a sentence already started
            request._owed.text_complete(sentences.pop(0))
            request._owed = None
        request._texts.extend(sentences)
        if request._live and not request._input_done:
            request._partial = splitter.pending()
            if request._owed is not None:
                request._owed.text_grew(request._partial)
        else:
            request._partial = ""
            if request._owed is not None:  # cannot happen (what `pending` promised comes); end it anyway
                request._owed.text_complete(request._owed.fed)
                request._owed = None
        self._notify(request)

    def _end_input(self, request: Request) -> None:
        with self._cond:
            if request.finished or request._input_done:
                return
            request._input_done = True
            if request._splitter is not None:
                self._route(request, request._splitter.finish())
            self._settle(request)
            self._notify(request)

    def _settle(self, request: Request) -> None:
        """Under the lock: a request with nothing left to start or running is generated (the consumer
        drains what is made, then the request ends)."""
        if (request.status in ("waiting", "active") and request._input_done and not request._texts
                and request._run is None and request._owed is None):
            request._generated = True
        if request._generated and request._run is None and request in self._requests:
            self._requests.remove(request)

    def _wake(self) -> None:
        """A running sentence started or stopped waiting for text: the next one may start."""
        with self._cond:
            self._cond.notify_all()

    def _notify(self, request: Request | None = None) -> None:
        """Under the lock: something changed; blocked threads look again, and so does `request`'s
        consumer if it awaits (`aget`: only its own request's changes wake it)."""
        self._cond.notify_all()
        if request is not None and request._waiter is not None:
            loop, waiter = request._waiter
            with contextlib.suppress(RuntimeError):  # its loop is closed: nobody awaits it any more
                loop.call_soon_threadsafe(_wake, waiter)

    def _watch(self, request: Request, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        waiter = loop.create_future()
        with self._cond:
            request._waiter = (loop, waiter)
        return waiter

    def _unwatch(self, request: Request) -> None:
        with self._cond:
            request._waiter = None

    def _take(self, request: Request, timeout: float | None) -> SpeechChunk | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            if request._release_next:
                request._release_next = False
                request._outstanding -= 1
                request._taken += 1
                self._notify(request)
            while True:
                if request._items:
                    item = request._items.popleft()
                    if isinstance(item, SpeechChunk):
                        request._release_next = item.sentence_end
                        return item
                    # A failed sentence: its end, as far as the consumer is concerned.
                    request._outstanding -= 1
                    request._taken += 1
                    self._notify(request)
                    if request.on_failure == "raise":
                        self._end(request, "failed")
                        raise SentenceFailed(f"sentence {item.sentence + 1} failed: {item.error}") from item.error
                    continue
                if request.finished or request._generated and not request._outstanding:
                    if not request.finished:
                        self._end(request, "done")
                    return None
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(remaining)

    def _cancel(self, request: Request) -> None:
        with self._cond:
            if request.finished:
                return
            request._items.clear()
            request._texts.clear()
            request._input_done = True
            for s in request.sentences[request._taken :]:  # made or making, but not wholly taken
                if s.status != "failed":
                    s.status = "cancelled"
            self._end(request, "cancelled")
            run = request._run
            if run is not None:
                run.stopped = True
                run.turn.stop()
            self._notify(request)
        if run is not None:
            run.stop()  # generation stops within a frame

    def _end(self, request: Request, status: str) -> None:
        """Under the lock: the request is over for its consumer."""
        request.status = status
        request._generated = True
        request.after = None  # a finished request ends its chain (and old ones can be collected)
        if request._run is None and request in self._requests:  # else it goes when its sentence ends
            self._requests.remove(request)
        request._ended.set()

    # -- the scheduler thread --------------------------------------------------------------------

    def _active(self) -> int:
        return sum(1 for r in self._requests if r.status == "active")

    @staticmethod
    def _chain_outstanding(request: Request) -> int:
        total: int = 0
        r: Request | None = request
        while r is not None and not r.finished:
            total += r._outstanding
            r = r.after
        return total

    def _eligible(self, request: Request) -> bool:
        if request.status not in ("waiting", "active") or request._run is not None:
            return False
        if not request._texts and not (request._owed is None and is_speakable(request._partial)):
            return False
        before = request.after
        if before is not None and not before.finished and not before._generated:
            return False  # a chained request starts once its predecessor is generated
        if self._chain_outstanding(request) >= _AHEAD:
            return False
        return request.status == "active" or self._active() < self.max_active

    def _pick(self) -> Request | None:
        n = len(self._requests)
        for k in range(n):
            request = self._requests[(self._turn + k) % n]
            if self._eligible(request):
                self._turn = (self._turn + k + 1) % max(n, 1)
                return request
        return None

    def _loop(self) -> None:
        try:
            self._serve()
        except BaseException as e:  # a bug here must not leave consumers waiting forever
            log.exception("the scheduler stopped")
            with self._cond:
                self._closed = True
                for request in list(self._requests):
                    if not request.finished:
                        request._items.append(_SentenceFailure(len(request.sentences), e))
                        request.on_failure = "raise"
                    self._requests.remove(request)
                    self._notify(request)

    def _serve(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._closed:
                        return
                    # The next sentence starts when every running one waits for text, or, batched,
                    # while fewer than max_batch compute.
                    busy = self._turns.computing()
                    request = self._pick() if busy < self.max_batch else None
                    if request is not None:
                        break
                    self._cond.wait()
                run = self._begin(request)
            self._start(run)

    def _begin(self, request: Request) -> _Running:
        """Under the lock: the request's next sentence, registered as running."""
        index = len(request.sentences)
        seed = request.options.sentence(index).seed
        partial = not request._texts  # a sentence still being written
        text = request._partial if partial else request._texts.popleft()
        sentence = SentenceResult(index, text, seed, status="generating")
        request.sentences.append(sentence)
        request.status = "active"
        request._outstanding += 1
        request.max_ahead = max(request.max_ahead, self._chain_outstanding(request))
        run = _Running(self, request, sentence, self._turns.join())
        request._run = run
        if partial:
            request._owed = run
            try:  # under the lock, so that no text can come between its start and its first push
                run.open_live()
            except Exception as e:  # noqa: BLE001 - isolation: this sentence fails, the next one runs
                run.failed_to_start = e
        return run

    def _start(self, run: _Running) -> None:
        """Start a whole sentence's stream (outside the lock). Its chunks land in the request's
        channel from the vocoder's own thread (`_landed`): no thread relays them."""
        if run.stream is None and run.failed_to_start is None:
            request, sentence = run.request, run.sentence
            try:
                stream = self.engine.stream_with(sentence.text, request.options.sentence(sentence.index), turn=run.turn,
                                                 batcher=self._batcher, deliver=run.landed)
            except Exception as e:  # noqa: BLE001 - isolation: this sentence fails, the next one runs
                run.failed_to_start = e
            else:
                with self._cond:
                    run.stream = stream
                    stopped = run.stopped
                if stopped:
                    stream.stop()  # its end still lands (stopped), and ends the sentence
        if run.failed_to_start is not None:
            self._landed(run, StreamEnd(error=run.failed_to_start))

    def _landed(self, run: _Running, item: AudioChunk | StreamEnd) -> None:
        """A sentence's chunk, or its end, arriving on its vocoder's thread: into the request's
        channel at once. Never blocks on the consumer (a request holds at most two sentences ahead,
        by the bound above)."""
        request, sentence = run.request, run.sentence
        if isinstance(item, AudioChunk):
            with self._cond:
                if request.cancelled:
                    return
                if sentence.ttfa_s is None and item.frames:
                    sentence.ttfa_s = time.monotonic() - run.started
                if request.first_chunk_s is None:
                    request.first_chunk_s = time.monotonic() - request.submitted
                sentence.frames += item.frames
                if request.keep_codes:
                    run.codes.append(item.codes)
                request._items.append(SpeechChunk(item.samples, item.sample_rate, request._chunks, sentence.index,
                                                  item.frames, item.codes, item.is_last))
                request._chunks += 1
                self._notify(request)
            return
        error = item.error
        if item.stopped and not request.cancelled:
            error = RuntimeError("the sentence's stream stopped before its end (is the engine closing?)")
        try:
            with self._cond:
                if item.stats is not None:
                    sentence.stop_reason = item.stats.stop_reason
                if error is not None:
                    sentence.status, sentence.error = "failed", f"{type(error).__name__}: {error}"
                    if not request.cancelled:
                        request._items.append(_SentenceFailure(sentence.index, error))
                        if request.on_failure == "raise":
                            request._texts.clear()
                elif sentence.status == "generating":
                    sentence.status = "cancelled" if request.cancelled else "done"
                if request.keep_codes and run.codes and error is None:
                    sentence.codes = torch.cat(run.codes)
            if error is not None:
                log.warning("sentence %d of request %d failed: %s", sentence.index + 1, request.id, sentence.error)
        finally:
            run.stop()
            trim_heap()
            self._turns.leave(run.turn)
            with self._cond:
                run.stopped = True
                request._run = None
                if request.cancelled:
                    request._outstanding = 0
                self._settle(request)
                self._notify(request)


class _Running:
    """A sentence being generated: its stream, its text so far when it is spoken as it is written,
    and its turns at the CPU (`turns.Turn`). Fields are guarded by the scheduler's lock."""

    def __init__(self, scheduler: Scheduler, request: Request, sentence: SentenceResult, turn: Turn):
        self.scheduler = scheduler
        self.request = request
        self.sentence = sentence
        self.turn = turn
        self.stream: AudioStream | LiveUtterance | None = None
        self.live: LiveUtterance | None = None
        self.fed = ""  # text pushed into the live utterance so far
        self.stopped = False
        self.failed_to_start: Exception | None = None
        self.started = time.monotonic()
        self.codes: list[torch.Tensor] = []  # kept with keep_codes

    def landed(self, item: AudioChunk | StreamEnd) -> None:
        """The stream's `deliver`: called on its vocoder's thread."""
        self.scheduler._landed(self, item)

    def open_live(self) -> None:
        self.live = self.scheduler.engine.open_with(
            self.request.options.sentence(self.sentence.index), turn=self.turn, batcher=self.scheduler._batcher,
            deliver=self.landed)
        self.stream = self.live
        self.text_grew(self.sentence.text)

    def text_grew(self, start: str) -> None:
        """The sentence is known to begin with `start` (it only grows)."""
        if len(start) > len(self.fed) and start.startswith(self.fed):
            self._push(start[len(self.fed) :])
            self.fed = start
            self.sentence.text = start

    def text_complete(self, text: str) -> None:
        """The sentence's whole text: the rest is pushed and the live utterance's text ends."""
        self.sentence.text = text
        if not text.startswith(self.fed):  # cannot happen (`pending` is never taken back); be loud
            log.error("sentence %r does not continue the text already spoken (%r)", text, self.fed)
        else:
            self._push(text[len(self.fed) :])
        self.fed = text
        if self.live is not None and not self.stopped:
            self.live.end()

    def _push(self, text: str) -> None:
        if text and self.live is not None and not self.stopped:
            self.live.push(text)

    def stop(self) -> None:
        """Stop generating (outside the lock): within a frame, also while waiting for text."""
        stream = self.stream
        if isinstance(stream, LiveUtterance):
            stream.cancel()
        elif stream is not None:
            stream.stop()


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
