"""The word timer: sentences of Hearth's speech aligned with a Qwen3-ForcedAligner, on a thread of
its own, after their audio is out.

The scheduler hands over a sentence once its last chunk is in its request's channel
(`Scheduler._landed`); nothing waits for the alignment but the request's end (its consumer gets
the sentence's words as a `SentenceWords` event, then the end). So alignment never holds audio
back and never puts a gap into it: it only competes for the CPU. It runs on one thread at a lower
priority (nice +10 where the system allows it), one sentence at a time, first come first served;
at most `max_waiting` sentences wait, and a sentence beyond that gets an event saying the aligner
is behind instead of words. What it costs a streamed sentence is in docs/listen.md.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hearth.errors import InputError
from hearth.listen.aligner import MAX_ALIGN_SECONDS, Aligner
from hearth.listen.audio import SAMPLE_RATE, prepare_audio
from hearth.listen.languages import canonical_language
from hearth.listen.resample import resample
from hearth.runtime.words import SentenceWords, SpokenMap, TimedWord, as_written
from hearth.text.normalize import language_of
from hearth.text.normalize.spans import Normalized

__all__ = ["WordJob", "WordTimer", "aligner_language", "time_words", "words_unavailable"]

log = logging.getLogger(__name__)


def aligner_language(language: str, sentence: str) -> str | None:
    """The aligner's name for a speech language ("english" -> "English"; "auto": by the sentence's
    script), or None (units cut at spaces and CJK characters) for one it does not name."""
    name = language_of(sentence) if language == "auto" else language
    try:
        return canonical_language(name)
    except InputError:
        return None


@dataclass
class WordJob:
    """One sentence to align: its audio as its consumer received it, and where its text stands."""

    sentence: int
    text: str  # as spoken
    language: str | None  # the aligner's name
    samples: np.ndarray  # float32 mono, as delivered (a pause before it and its speed included)
    sample_rate: int
    offset: float  # seconds of the request's audio before it
    part: int  # which of the request's spoken parts it belongs to
    spoken: Normalized  # that part's spoken text, with its span map
    spoken_map: SpokenMap  # the request's (sentences located in order)
    done: Callable[[SentenceWords], None]
    cancelled: Callable[[], bool]


class WordTimer:
    """Aligns sentences on its own thread (see the module). `aligned`, `busy_s` and `audio_s` say
    how much it has done and what it cost."""

    def __init__(self, aligner: Aligner, max_waiting: int = 64):
        self.aligner = aligner
        self.max_waiting = max_waiting
        self.aligned = 0
        self.busy_s = 0.0  # wall time spent aligning
        self.audio_s = 0.0  # audio aligned
        self._jobs: deque[WordJob] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="hearth-words", daemon=True)
        self._thread.start()

    def submit(self, job: WordJob) -> None:
        """Queue `job` (never blocks); when too many wait, its event says so at once."""
        with self._cond:
            if not self._closed and len(self._jobs) < self.max_waiting:
                self._jobs.append(job)
                self._cond.notify()
                return
        reason = "the server is stopping" if self._closed else \
            f"the aligner is {self.max_waiting} sentences behind; this sentence was not aligned"
        job.done(SentenceWords(job.sentence, job.offset, _seconds(job), (), reason))

    def close(self) -> None:
        with self._cond:
            self._closed = True
            pending, self._jobs = list(self._jobs), deque()
            self._cond.notify_all()
        for job in pending:
            job.done(SentenceWords(job.sentence, job.offset, _seconds(job), (), "the server is stopping"))
        self._thread.join(timeout=30)

    def _run(self) -> None:
        with contextlib.suppress(OSError, AttributeError):  # (not on every system: then at normal priority)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        while True:
            with self._cond:
                while not self._jobs and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                job = self._jobs.popleft()
            if job.cancelled():
                job.done(SentenceWords(job.sentence, job.offset, _seconds(job), (), "cancelled"))
                continue
            t0 = time.perf_counter()
            try:
                event = self.align(job)
            except Exception as e:  # noqa: BLE001 - this sentence has no words; the request goes on
                log.warning("aligning sentence %d failed: %s: %s", job.sentence + 1, type(e).__name__, e)
                event = SentenceWords(job.sentence, job.offset, _seconds(job), (), f"{type(e).__name__}: {e}")
            self.busy_s += time.perf_counter() - t0
            self.audio_s += _seconds(job)
            self.aligned += 1
            job.done(event)

    def align(self, job: WordJob) -> SentenceWords:
        """`job`'s words (on the calling thread)."""
        samples = resample(job.samples, job.sample_rate, SAMPLE_RATE)
        duration = _seconds(job)
        if samples.shape[0] > MAX_ALIGN_SECONDS * SAMPLE_RATE:
            return SentenceWords(job.sentence, job.offset, duration, (), f"the sentence's audio lasts {duration:.0f} s;"
                                 f" the aligner takes at most {MAX_ALIGN_SECONDS:.0f} s")
        if samples.shape[0] < self.aligner.features.min_samples:  # too short to hold a word
            return SentenceWords(job.sentence, job.offset, duration, ())
        units = self.aligner.units(job.text, job.language)
        timed = self.aligner.align_units(prepare_audio(samples, SAMPLE_RATE), units)
        places = job.spoken_map.locate(job.part, job.spoken, [u.text for u in timed])
        # A word cannot be said outside its sentence's audio: times are held inside it (the aligner's
        # classes reach past a short sentence's end; a trained one puts none there).
        def at(t: float) -> float:
            return round(job.offset + min(max(t, 0.0), duration), 3)

        words = tuple(TimedWord(u.text, at(u.start), at(u.end), a, b, job.sentence)
                      for u, (a, b) in zip(timed, places, strict=True))
        return SentenceWords(job.sentence, job.offset, duration, words)


def _seconds(job: WordJob) -> float:
    return round(job.samples.shape[0] / float(job.sample_rate), 3)



def words_unavailable() -> InputError:
    return InputError("word_timestamps needs a Qwen3-ForcedAligner loaded beside the speech model: start the server "
                      "(or hearth say) with --aligner Qwen/Qwen3-ForcedAligner-0.6B; in Python, "
                      "hearth.Scheduler(engine, aligner=Aligner.load(...))", "word_timestamps")


def _spoken(request: Any, index: int) -> tuple[int, Normalized]:  # noqa: ANN401 - a scheduler's Request
    """(the part, its spoken text) that sentence `index` of `request` belongs to."""
    if index < len(request.part_of):
        part = request.part_of[index]
        return part, request.spoken[part]
    normalizer = getattr(request.channel.feed, "normalizer", None)  # text that came in pieces: all so far
    return 0, normalizer.normalized() if normalizer is not None else as_written(request.text)


def time_words(timer: WordTimer, run: Any) -> None:  # noqa: ANN401 - the scheduler's SentenceRun
    """Under the scheduler's lock, once `run`'s sentence is done and its audio is in its channel:
    the sentence handed to `timer`; its words land in the channel (and on its `SentenceResult`)."""
    request, sentence, channel = run.request, run.sentence, run.request.channel
    samples = np.concatenate(run.heard) if run.heard else np.zeros(0, np.float32)
    part, spoken = _spoken(request, sentence.index)
    if request.spoken_map is None:
        request.spoken_map = SpokenMap()
    language = aligner_language(request.sentence_options(sentence.index).language, sentence.text)
    channel.words_pending += 1

    def done(event: SentenceWords) -> None:
        with channel.cond:
            sentence.words, sentence.words_error = event.words, event.error
            channel.deliver_words(event)

    offset = (channel.samples - samples.shape[0]) / float(run.sample_rate)
    timer.submit(WordJob(sentence.index, sentence.text, language, samples, run.sample_rate, round(offset, 3), part,
                         spoken, request.spoken_map, done, lambda: request.cancelled))
