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
sentences end: a sentence starts as soon as its first words are certain (`hearth.runtime.text_feed`)
and takes in the rest as it comes (`Engine.open`). Such a sentence can wait for text, and while it
waits it computes nothing, so the CPU goes to others: sentences take turns frame by frame, the
earliest started first, and one that waits for text gives its turn to the next (`hearth.generation.turn_taking`). The
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
(its text, generation, the vocoder, its channel) is reported on its `SentenceResult`, and the
request goes on with the next sentence (or, with `on_failure="raise"`, ends with the error raised to
its consumer); other requests never see it. `health` counts failures by the stage they happened at.
The scheduler's thread and the batcher's are supervised (`hearth.reliability.health`): one that dies anyway
fails the requests it had in hand, is started again, and is reported down meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import numpy as np

from hearth.backends.row_pairs import paired
from hearth.engine import Engine
from hearth.errors import InputError
from hearth.frames import FRAME_S
from hearth.generation.batch import FrameBatcher
from hearth.generation.turn_taking import Turns
from hearth.listen.aligner import Aligner
from hearth.options import SpeechOptions, speech_for
from hearth.platform.process import trim_heap
from hearth.reliability import faults
from hearth.reliability.health import Health, Supervisor
from hearth.runtime.request import Busy, Channel, Request, RequestChunk, SentenceFailed, SentenceResult
from hearth.runtime.sentence_plan import plan_sentences
from hearth.runtime.sentence_run import SentenceRun
from hearth.runtime.text_feed import LiveSentence, TextFeed
from hearth.runtime.word_timer import WordTimer, time_words, words_unavailable
from hearth.streaming.chunks import AudioChunk, StreamEnd
from hearth.streaming.pacing import SpeechRate
from hearth.text.normalize.document import normalizer_language
from hearth.text.normalize.live import LiveNormalizer
from hearth.text.prompt import ClonedVoice, Speaker
from hearth.text.sentences import clean_text

__all__ = ["MAX_REQUEST_CHARS", "Busy", "Request", "RequestChunk", "Scheduler", "SentenceFailed", "SentenceResult"]

log = logging.getLogger(__name__)

MAX_REQUEST_CHARS = 100_000  # per request; longer texts are sent in parts
_AHEAD = 2  # sentences made but not yet taken, per consumer: the one being taken and the next


class Scheduler:
    """Owns an engine's generation: requests in, one audio channel per request out."""

    def __init__(self, engine: Engine, *, max_active: int = 4, max_waiting: int = 16, max_batch: int = 1,
                 aligner: Aligner | None = None):
        if max_active < 1 or max_waiting < 0 or max_batch < 1:
            raise ValueError("max_active and max_batch must be at least 1, and max_waiting at least 0")
        self.engine = engine
        self.max_active = max_active
        self.max_waiting = max_waiting
        self.max_batch = max_batch
        self.health = Health()
        self.rate = SpeechRate()  # audio per wall second and frames per text token, as sentences finish
        # More than one: up to max_batch sentences (of different requests) are generated together,
        # stepped frame by frame as one batch (`hearth.generation.batch`).
        self._batcher = FrameBatcher(engine.lm, max_batch, health=self.health) if max_batch > 1 else None
        compiled_rows = paired(engine.options.batch_rows)  # (rows come in pairs: `lm_rows.paired`)
        if max_batch > compiled_rows and engine.options.backend == "openvino":
            log.warning("batches of up to %d rows on an engine loaded for %d: its predictor steps them %d at a "
                        "time; load it with batch_rows=%d to step them in one call", max_batch, compiled_rows,
                        compiled_rows, max_batch)
        self._lock = threading.RLock()  # guards the scheduler and its requests' state
        self._cond = threading.Condition(self._lock)  # what the scheduler's thread waits on
        self._requests: list[Request] = []  # admitted, not yet generated; round-robin order
        self._turn = 0
        self._ids = 0
        self._closed = False
        self._turns = Turns(self._wake)  # the running sentences' frame turns
        self.words = WordTimer(aligner) if aligner is not None else None  # word timestamps, with an aligner
        self._supervisor = Supervisor("scheduler", self._serve, self.health, self._died)
        self._supervisor.start()

    # -- clients ---------------------------------------------------------------------------------

    def submit(self, text: str, voice: Speaker = None, language: str = "auto", *, speech: SpeechOptions | None = None,
               keep_codes: bool = False, split: bool = True, on_failure: str = "skip", after: Request | None = None,
               **options: Any) -> Request:
        """Admit a text; returns its request at once. Bad input raises InputError, a full scheduler
        Busy; neither disturbs anything already admitted.

        Sentence i is sampled with `seed + i`; without a seed (and not greedy) one is drawn here, so
        `request.seed` always says how to hear the same again. `split=False` speaks the text as one
        prompt (as the official package does), `max_new_tokens` and `budget` bound each sentence.
        `speed` (0.25 to 4.0) changes the speaking rate and keeps the pitch; 1.0 leaves the audio
        untouched. The speech options come as `Engine.stream` takes them: keywords, or `speech=`."""
        if not isinstance(text, str):
            raise InputError("the text must be a string", "text")
        if len(text) > MAX_REQUEST_CHARS:
            raise InputError(f"the text is {len(text):,} characters; one request takes at most "
                             f"{MAX_REQUEST_CHARS:,}. Send it in parts (for example paragraph by paragraph)", "text")
        cleaned = clean_text(text)
        if not cleaned.strip():
            raise InputError("the text is empty; give some words to speak", "text")
        checked = speech_for(self.engine, voice, language, speech, options, aligned=True)
        plan = plan_sentences(self.engine, cleaned, checked, split)  # normalized, SSML read, cut into sentences
        if not plan.texts:
            raise InputError("nothing to speak: the text has no letters or digits (only punctuation or symbols)",
                             "text")
        request = self._request(cleaned, checked, keep_codes, on_failure, after)
        request.plan, request.marks, request.spoken = plan.options, plan.marks, plan.spoken
        request.part_of = plan.part_of
        return self._admit(request, plan.texts)

    def open(self, voice: Speaker = None, language: str = "auto", *, speech: SpeechOptions | None = None,
             keep_codes: bool = False, on_failure: str = "skip", **options: Any) -> Request:
        """Admit a request whose text comes later, in pieces: `request.push(text)` any number of
        times, then `request.end()`. Sentences are found as the text arrives (`SentenceSplitter`:
        the same sentences as `submit` of the whole text, so the same audio for the same seed), and
        each is generated as soon as it is complete. The request holds its place (and, once it has
        spoken, an active slot) until it ends or is cancelled.

        With `text_mode="interleaved"` a sentence starts before it ends: as soon as its first words
        are certain, then it takes in its text as it arrives (the codes are still those of the
        whole sentence)."""
        checked = speech_for(self.engine, voice, language, speech, options, aligned=True)
        if checked.text_format == "ssml":
            raise InputError("an SSML document is read whole: submit it (text that arrives in pieces is plain text)",
                             "text_format")
        request = self._request("", checked, keep_codes, on_failure, None)
        # An in-context clone's prompt lays the reference's frames beside the transcript and the
        # text, so it holds the sentence's first (reference frames + 1) text tokens: usually the
        # whole sentence. Its sentences start when they are complete (the same codes either way).
        in_context = isinstance(checked.voice, ClonedVoice) and checked.voice.in_context
        live = checked.text_mode == "interleaved" and not in_context
        normalizer = LiveNormalizer(normalizer_language(checked.language), checked.normalize) \
            if checked.normalize.enabled else None  # made speakable as it arrives: the same as the whole text
        request.channel.open_feed(TextFeed(live, MAX_REQUEST_CHARS, normalizer))
        if live:
            self.engine.batch_invariance()  # measured once per engine, before any sentence needs it
        return self._admit(request, [])

    def _request(self, text: str, options: SpeechOptions, keep_codes: bool, on_failure: str,
                 after: Request | None) -> Request:
        """A request (not yet admitted) for options already checked."""
        if on_failure not in ("skip", "raise"):
            raise InputError(f"on_failure must be 'skip' or 'raise', got {on_failure!r}", "on_failure")
        if options.word_timestamps and self.words is None:
            raise words_unavailable()
        after = after if after is not None and not after.finished else None
        return Request(id=0, text=text, options=options, keep_codes=keep_codes, on_failure=on_failure, after=after,
                       scheduler=self,
                       channel=Channel(self._lock, self._cond))

    def _admit(self, request: Request, texts: list[str]) -> Request:
        with self._cond:
            if self._closed:
                raise RuntimeError("the scheduler is closed")
            self._prune()
            if len(self._requests) >= self.max_active + self.max_waiting:
                active = self._active()
                raise Busy(f"busy: {active} requests are being spoken and {len(self._requests) - active} are "
                           "waiting, the most this server takes; try again shortly", retry_after_s=2.0)
            self._ids += 1
            request.id = self._ids
            request.submitted = time.monotonic()
            self._requests.append(request)
            request.channel.add(texts)
        return request

    def idle(self) -> bool:
        with self._cond:
            self._prune()
            return not self._requests and not self._turns.running()

    def counts(self) -> dict[str, int]:
        """Requests being generated in turn, and requests waiting for a turn."""
        with self._cond:
            self._prune()
            active = self._active()
            return {"active_streams": active, "queue_depth": len(self._requests) - active}

    @property
    def batcher(self) -> FrameBatcher | None:
        """The frame batcher stepping its sentences together (None when it does not batch)."""
        return self._batcher

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
            request.cancel()
        with self._cond:
            self._cond.notify_all()  # the scheduler thread sees it is closed (each cancel woke its consumer)
        self._supervisor.stop()
        self._supervisor.thread.join(timeout=30)
        if self.words is not None:
            self.words.close()
        if self._batcher is not None:
            self._batcher.close()

    def __enter__(self) -> Scheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the request channel: what a `Request`'s methods call ---------------------------------------

    def push(self, request: Request, text: str) -> None:
        if not isinstance(text, str):
            raise InputError("the text must be a string", "text")
        with self._cond:
            if request.finished:
                return  # cancelled (or failed): the text has nowhere to go
            request.channel.push(text)
            request.text += text

    def end_input(self, request: Request) -> None:
        with self._cond:
            if request.finished or not request.channel.end_input():
                return
            self._settle(request)
            request.channel.notify()

    def _settle(self, request: Request) -> None:
        """Under the lock: a request with nothing left to start or running is generated (the consumer
        drains what is made, then the request ends)."""
        request.channel.settle(request.status in ("waiting", "active"))
        self._prune()

    def _prune(self) -> None:
        """Under the lock: requests over (or wholly generated) with no sentence running leave the
        rotation; the consumer still drains what was made."""
        self._requests = [r for r in self._requests if not r.channel.retired]

    def _wake(self) -> None:
        """A running sentence started or stopped waiting for text: the next one may start."""
        with self._cond:
            self._cond.notify_all()

    # -- the scheduler thread --------------------------------------------------------------------

    def _active(self) -> int:
        return sum(1 for r in self._requests if r.status == "active")

    def _eligible(self, request: Request) -> bool:
        if request.status not in ("waiting", "active") or not request.channel.startable():
            return False
        before = request.after
        if before is not None and not before.finished and not before.channel.generated:
            return False  # a chained request starts once its predecessor is generated
        if request.chain_outstanding() >= _AHEAD:
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

    def health_report(self) -> dict[str, object]:
        """`Health.report` of this scheduler, with the engine's vocoder threads replaced after dying."""
        report = self.health.report()
        replaced = self.engine.workers.replaced
        if replaced:
            report["restarts"] = {**report["restarts"], "stream_threads": replaced}  # type: ignore[dict-item]
        return report

    def _died(self, error: BaseException) -> None:
        """The scheduler's thread died (a bug here, not a request's failure): the requests it had in
        hand end with the error; new ones are served by the next thread."""
        faults.tag(error, "scheduler")
        self.health.failed("scheduler", error)
        runs = []
        with self._cond:
            requests, self._requests = self._requests, []
            for request in requests:
                if request.finished:
                    continue
                request.on_failure = "raise"
                run = request.channel.abort(len(request.sentences), error)
                if run is not None:
                    runs.append(run)
        for run in runs:
            run.cancel_stream()

    def _serve(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._closed:
                        return
                    # The next sentence starts when every running one waits for text, or, batched,
                    # while fewer than max_batch compute.
                    self._prune()
                    busy = self._turns.computing()
                    request = self._pick() if busy < self.max_batch else None
                    if request is not None:
                        break
                    self._cond.wait()
                faults.hit("scheduler", faults.marks(request.text))
                run = self._begin(request)
            self._start(run)

    def _begin(self, request: Request) -> SentenceRun:
        """Under the lock: the request's next sentence, registered as running."""
        index = len(request.sentences)
        seed = request.sentence_options(index).seed
        sentence = SentenceResult(index, "", seed, status="generating")
        run = SentenceRun(request, sentence, self._turns.join(), self.engine.sample_rate, self._landed)
        sentence.text, partial = request.channel.begin(run)  # partial: a sentence still being written
        request.sentences.append(sentence)
        request.status = "active"
        request.max_ahead = max(request.max_ahead, request.chain_outstanding())
        if partial:
            feed = request.channel.feed
            assert isinstance(feed, TextFeed)  # (the channel knows it by its protocol)
            feed.owed = live = LiveSentence(sentence, lambda: run.stopped, run.fail)
            try:  # under the lock, so that no text can come between its start and its first push
                run.stream = live.utterance = self.engine.open(
                    speech=request.sentence_options(index), turn=run.turn, batcher=self._batcher, deliver=run.landed)
                live.grew(sentence.text)
            except Exception as e:  # noqa: BLE001 - isolation: this sentence fails, the next one runs
                run.failed_to_start = e
        return run

    def _start(self, run: SentenceRun) -> None:
        """Start a whole sentence's stream (outside the lock). Its chunks land in the request's
        channel from the vocoder's own thread (`_landed`): no thread relays them."""
        if run.stream is None and run.failed_to_start is None:
            request, sentence = run.request, run.sentence
            try:
                stream = self.engine.stream(sentence.text, speech=request.sentence_options(sentence.index),
                                            turn=run.turn, batcher=self._batcher, deliver=run.landed)
            except Exception as e:  # noqa: BLE001 - isolation: this sentence fails, the next one runs
                run.failed_to_start = e
            else:
                with self._cond:
                    run.stream = stream
                    stopped = run.stopped
                if stopped:
                    stream.cancel()  # its end still lands (stopped), and ends the sentence
        if run.failed_to_start is not None:
            self._landed(run, StreamEnd(error=run.failed_to_start))

    def _landed(self, run: SentenceRun, item: AudioChunk | StreamEnd) -> None:
        """A sentence's chunk, or its end, arriving on its vocoder's thread: into the request's
        channel at once. Never blocks on the consumer (a request holds at most two sentences ahead,
        by the bound above)."""
        request, sentence = run.request, run.sentence
        if isinstance(item, AudioChunk):
            samples = run.at_speed(item)  # here, on the vocoder's thread: never on a server's event loop
            with self._cond:
                if request.cancelled:
                    return
                faults.hit("channel", faults.marks(sentence.text))
                if sentence.ttfa_s is None and item.frames:
                    sentence.ttfa_s = time.monotonic() - run.started
                if request.first_chunk_s is None:
                    request.first_chunk_s = time.monotonic() - request.submitted
                sentence.frames += item.frames
                run.decode_s += item.timing.decode_s
                if request.keep_codes:
                    run.codes.append(item.codes)
                request.channel.deliver(samples, item.sample_rate, sentence.index, item.frames, item.codes,
                                        item.is_last)
            return
        error = item.error or run.failure
        if item.stopped and error is None and not request.cancelled:
            error = RuntimeError("the sentence's stream stopped before its end (is the engine closing?)")
        try:
            with self._cond:
                if item.stats is not None:
                    sentence.stop_reason = item.stats.stop_reason
                if error is not None:
                    sentence.status, sentence.error = "failed", f"{type(error).__name__}: {error}"
                    if not request.cancelled:
                        request.channel.sentence_failed(sentence.index, error,
                                                        drop_rest=request.on_failure == "raise")
                elif sentence.status == "generating":
                    sentence.status = "cancelled" if request.cancelled else "done"
                    if sentence.status == "done" and self.words is not None and run.heard is not None:
                        time_words(self.words, run)  # on the word timer's thread, after the audio
                    if sentence.status == "done" and sentence.frames and item.stats is not None:
                        # The engine's own pace: its compute (not the time a live sentence waited for text).
                        g = item.stats
                        busy = g.prefill_s + g.talker_s + g.predictor_s + run.decode_s
                        self.rate.sentence(sentence.frames * FRAME_S, busy, sentence.frames,
                                           len(self.engine.tokenizer.encode(sentence.text)))
                if request.keep_codes and run.codes and error is None:
                    sentence.codes = np.concatenate(run.codes)
            if error is not None:
                self.health.failed(faults.stage_of(error), error)
                log.warning("sentence %d of request %d failed at %s: %s", sentence.index + 1, request.id,
                            faults.stage_of(error), sentence.error)
        finally:
            run.cancel_stream()
            trim_heap()
            self._turns.leave(run.turn)
            with self._cond:
                run.stopped = True
                request.channel.run_ended(request.cancelled)
                self._settle(request)
                request.channel.notify()
