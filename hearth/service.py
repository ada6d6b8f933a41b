"""The resident speaker: one loaded engine, a queue of requests, sentences spoken back to back.

    service = Service(engine, sink)          # warms up, starts two threads
    job = service.say("First sentence. Second one.", voice="ryan", language="english")
    job.wait()                               # or service.cancel() to stop now
    service.close()

Two threads besides the caller's:

    synthesis thread: request queue -> sentences -> engine.stream() -> playback queue
    playback thread:  playback queue -> sink, in 40 ms blocks (so a cancel is heard within a frame)

The playback queue holds at most one sentence beyond the one playing: the next sentence is
generated while the current one plays, never more. A failure in generation, vocoding or the sink
fails that sentence only (recorded on the job); the next sentence starts from fresh caches, a
fresh vocoder stream and its own seed, so its codes equal a clean run of the same text, voice and
seed. `cancel()` fades the current audio out over 10 ms, stops generation within one frame, drops
everything queued, and leaves the service ready.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch

from .engine import Engine, InputError
from .sentences import clean_text, split_sentences

__all__ = ["Sink", "Service", "Job", "SentenceResult", "MAX_REQUEST_CHARS"]

log = logging.getLogger(__name__)

MAX_REQUEST_CHARS = 100_000  # per request; longer texts are sent in parts
_BLOCK_S = 0.04  # playback granularity: a cancel is heard within one block
_FADE_S = 0.01
_POLL_S = 0.05


def _trimmer():
    """glibc's malloc_trim, or None elsewhere. Each sentence frees tens of megabytes of caches and
    activations from several threads' malloc arenas; glibc keeps such memory unless asked, which
    shows as resident growth in a process that runs for days (+95 MB over 50 sentences at 0.6B)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = _trimmer()


def _release_freed_memory() -> None:
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


class Sink(Protocol):
    sample_rate: int
    realtime: bool

    def write(self, samples: np.ndarray) -> bool: ...  # True if the output ran dry before this write

    def drain(self) -> None: ...


@dataclass
class SentenceResult:
    index: int
    text: str
    seed: int | None
    status: str = "pending"  # "done", "failed", "cancelled"
    error: str | None = None
    frames: int = 0
    ttfa_s: float | None = None  # from the request's start of this sentence's synthesis to its first audio
    codes: torch.Tensor | None = None  # kept when the service keeps codes


@dataclass
class Job:
    """One request. `wait()` returns once all its audio has been played (or it was cancelled)."""

    id: int
    text: str
    voice: str
    language: str
    seed: int | None
    instruct: str | None
    submitted: float = field(default_factory=time.monotonic)
    sentences: list[SentenceResult] = field(default_factory=list)
    status: str = "queued"  # "speaking", "done", "cancelled"
    first_audio_s: float | None = None  # submit to first sample handed to the sink
    underruns: int = 0
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    _epoch: int = field(default=0, repr=False)  # the service's cancel count when submitted

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    @property
    def errors(self) -> list[SentenceResult]:
        return [s for s in self.sentences if s.status == "failed"]


@dataclass
class _Chunk:
    job: Job
    sentence: SentenceResult
    samples: np.ndarray


@dataclass
class _SentenceEnd:
    job: Job
    sentence: SentenceResult


@dataclass
class _JobEnd:
    job: Job


class Service:
    def __init__(
        self,
        engine: Engine,
        sink: Sink,
        *,
        voice: str = "vivian",
        language: str = "auto",
        chunk_frames: int = 5,
        first_chunk_frames: int | None = None,  # None: the engine's default
        keep_codes: bool = False,
        max_new_tokens: int | None = None,
        warm_up: bool = True,
        max_queued: int = 64,
    ):
        self.engine = engine
        self.sink = sink
        self.voice = engine.check_voice(voice)
        self.language = engine.check_language(language)
        self.chunk_frames = chunk_frames
        self.first_chunk_frames = first_chunk_frames
        self.keep_codes = keep_codes
        self.max_new_tokens = max_new_tokens  # per sentence; None: the checkpoint's default and the guard
        self.underruns = 0
        self.max_sentences_buffered = 0  # sentences generated or generating but not yet played out
        self._buffered = 0
        self._ids = 0
        self._epoch = 0
        self._jobs: queue.Queue[Job | None] = queue.Queue(maxsize=max_queued)
        self._playback: queue.Queue[_Chunk | _SentenceEnd | _JobEnd] = queue.Queue()
        self._slots = threading.Semaphore(2)  # the sentence playing + the one being generated
        self._current: Job | None = None
        self._closed = threading.Event()
        self._lock = threading.Lock()
        if warm_up:
            engine.synthesize("Hello.", self.voice, "auto", greedy=True, max_new_tokens=4)
        self._synth = threading.Thread(target=self._synthesis_loop, name="hearth-service-synth", daemon=True)
        self._play = threading.Thread(target=self._playback_loop, name="hearth-service-play", daemon=True)
        self._synth.start()
        self._play.start()

    # -- API -------------------------------------------------------------------------------------

    def say(self, text: str, voice: str | None = None, language: str | None = None, *, seed: int | None = None,
            instruct: str | None = None) -> Job:
        """Queue a text; returns its job at once. Bad input raises InputError; the service stays up."""
        if self._closed.is_set():
            raise RuntimeError("the service is closed")
        if not isinstance(text, str):
            raise InputError("the text must be a string")
        if len(text) > MAX_REQUEST_CHARS:
            raise InputError(
                f"the text is {len(text):,} characters; one request takes at most {MAX_REQUEST_CHARS:,}. "
                "Send it in parts (for example paragraph by paragraph)"
            )
        v = self.engine.check_voice(voice or self.voice)
        lang = self.engine.check_language(language or self.language)
        cleaned = clean_text(text)
        if not cleaned.strip():
            raise InputError("the text is empty; give some words to speak")
        if next(split_sentences(cleaned), None) is None:
            raise InputError("nothing to speak: the text has no letters or digits (only punctuation or symbols)")
        with self._lock:
            self._ids += 1
            job = Job(self._ids, cleaned, v, lang, seed, instruct, _epoch=self._epoch)
        try:
            self._jobs.put_nowait(job)
        except queue.Full:
            raise InputError(f"the request queue is full ({self._jobs.maxsize} waiting); try again later") from None
        return job

    def cancel(self) -> None:
        """Silence now: stop the current sentence and drop every queued request and sentence.

        Every request submitted before this call counts as cancelled, including one the synthesis
        thread is just taking up (the epoch check closes that window).
        """
        with self._lock:
            self._epoch += 1
            current = self._current
        if current is not None:
            current._cancel.set()
        closing = False
        while True:
            try:
                pending = self._jobs.get_nowait()
            except queue.Empty:
                break
            if pending is None:
                closing = True
                continue
            pending.status = "cancelled"
            pending._cancel.set()
            pending._done.set()
        if closing:
            self._jobs.put(None)

    def idle(self) -> bool:
        return self._current is None and self._jobs.empty() and self._playback.empty()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self.cancel()
        self._closed.set()
        self._jobs.put(None)
        self._synth.join()
        self._play.join()

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- synthesis thread ------------------------------------------------------------------------

    def _sentences(self, job: Job) -> Iterator[SentenceResult]:
        for i, text in enumerate(split_sentences(job.text)):
            seed = None if job.seed is None else job.seed + i
            result = SentenceResult(i, text, seed)
            job.sentences.append(result)
            yield result

    def _synthesis_loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            with self._lock:
                if job._epoch < self._epoch:
                    job._cancel.set()  # cancelled while it was being taken from the queue
                self._current = job
            if job._cancel.is_set():
                job.status = "cancelled"
                self._current = None
                job._done.set()
                continue
            job.status = "speaking"
            for sentence in self._sentences(job):
                if job._cancel.is_set():
                    sentence.status = "cancelled"
                    break
                # Wait for a slot: at most one sentence ahead of the one playing.
                while not self._slots.acquire(timeout=_POLL_S):
                    if job._cancel.is_set():
                        break
                else:
                    with self._lock:
                        self._buffered += 1
                        self.max_sentences_buffered = max(self.max_sentences_buffered, self._buffered)
                    self._synthesize(job, sentence)
                    _release_freed_memory()
                    self._playback.put(_SentenceEnd(job, sentence))
                    continue
                sentence.status = "cancelled"
                break
            self._playback.put(_JobEnd(job))

    def _synthesize(self, job: Job, sentence: SentenceResult) -> None:
        t0 = time.monotonic()
        codes = []
        try:
            with self.engine.stream(
                sentence.text, job.voice, job.language, instruct=job.instruct, seed=sentence.seed,
                max_new_tokens=self.max_new_tokens, chunk_frames=self.chunk_frames,
                first_chunk_frames=self.first_chunk_frames, paced=self.sink.realtime,
            ) as stream:
                for chunk in stream:
                    if job._cancel.is_set():
                        break  # leaving the with-block stops generation within one frame
                    if sentence.ttfa_s is None and chunk.frames:
                        sentence.ttfa_s = time.monotonic() - t0
                    if self.keep_codes:
                        codes.append(chunk.codes)
                    sentence.frames += chunk.frames
                    self._playback.put(_Chunk(job, sentence, chunk.samples))
            if sentence.seed is None:
                sentence.seed = stream.seed
        except Exception as e:  # noqa: BLE001 - isolation: this sentence fails, the next one runs
            sentence.status, sentence.error = "failed", f"{type(e).__name__}: {e}"
            log.warning("sentence %d of request %d failed: %s", sentence.index, job.id, sentence.error)
            return
        if job._cancel.is_set():
            sentence.status = "cancelled"
        if self.keep_codes and codes:
            sentence.codes = torch.cat(codes)

    # -- playback thread -------------------------------------------------------------------------

    def _playback_loop(self) -> None:
        block = max(1, int(_BLOCK_S * self.sink.sample_rate))
        playing: Job | None = None
        while True:
            try:
                item = self._playback.get(timeout=_POLL_S)
            except queue.Empty:
                if self._closed.is_set() and not self._synth.is_alive():
                    return
                continue
            job = item.job
            if isinstance(item, _SentenceEnd):
                with self._lock:
                    self._buffered -= 1
                self._slots.release()
                if item.sentence.status == "pending":
                    item.sentence.status = "cancelled" if job._cancel.is_set() else "done"
                continue
            if isinstance(item, _JobEnd):
                self._finish(job)
                playing = None
                continue
            if job._cancel.is_set() or item.sentence.status == "failed":
                continue  # drained: a cancelled job's audio, or the rest of a sentence the sink failed
            if playing is not job:
                playing = job
            samples = item.samples
            for start in range(0, len(samples), block):
                if job._cancel.is_set():
                    self._fade_out(samples[start : start + int(_FADE_S * self.sink.sample_rate)])
                    break
                try:
                    starved = self.sink.write(samples[start : start + block])
                except Exception as e:  # noqa: BLE001 - isolation: the sink failed this sentence only
                    item.sentence.status, item.sentence.error = "failed", f"sink: {type(e).__name__}: {e}"
                    log.warning("sink failed in request %d: %s", job.id, item.sentence.error)
                    break
                if job.first_audio_s is None:
                    job.first_audio_s = time.monotonic() - job.submitted
                elif starved:
                    job.underruns += 1
                    self.underruns += 1

    def _fade_out(self, samples: np.ndarray) -> None:
        if len(samples):
            ramp = np.linspace(1.0, 0.0, len(samples), dtype=np.float32)
            # A sink failing during a cancel has nothing left to fail.
            with contextlib.suppress(Exception):
                self.sink.write(samples * ramp)

    def _finish(self, job: Job) -> None:
        try:
            self.sink.drain()
        except Exception as e:  # noqa: BLE001
            log.warning("sink failed while draining request %d: %s", job.id, e)
        job.status = "cancelled" if job._cancel.is_set() else "done"
        if self._current is job:
            self._current = None
        job._done.set()
