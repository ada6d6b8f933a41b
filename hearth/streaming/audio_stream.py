"""The streaming pipeline: frames -> chunks -> a vocoder worker -> audio chunks, in order.

Two workers run beside the consumer:

    generation thread --(codes, bounded: 1)--> vocoder thread --(audio, bounded)--> consumer

The generation thread runs the frame loop and cuts frames into chunks (a small first chunk for
early audio, then `chunk_frames` each). The vocoder thread decodes one chunk at a time, carrying
the vocoder's state from chunk to chunk, so at most one decode is in flight while generation goes
on. Every stream runs on a pair of worker threads of its own (`Workers`). Items on the
queues are explicit messages (a chunk, an error, the end), never `None`. An error in either stage
reaches the consumer as the original exception. Closing the stream (or abandoning its iterator)
sets a stop flag that the frame loop checks every frame, and joins both workers; `cancel()` sets
the flag from any thread without waiting.
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hearth.backends import Vocoder
from hearth.generation.frame_loop import FrameGenerator, Stop
from hearth.reliability import faults
from hearth.streaming.chunks import AudioChunk, ChunkPlan, ChunkTiming, StreamEnd
from hearth.streaming.stretch import Stretcher
from hearth.streaming.workers import Workers

__all__ = ["AudioChunk", "AudioStream", "ChunkPlan", "ChunkTiming", "StreamEnd", "Workers"]

log = logging.getLogger(__name__)

_POLL_S = 0.05  # how often a blocked worker re-checks the stop flag
_SHUTDOWN_S = 10.0
DEFAULT_PLAN = ChunkPlan()  # 2, 4, 5, 5, ... frames per chunk


@dataclass
class _Codes:
    index: int
    start_frame: int
    codes: np.ndarray
    is_last: bool
    generated_at: float
    generate_s: float


@dataclass
class _WorkerFailure:
    error: BaseException


@dataclass
class _End:
    pass


class _Pipeline:
    """The two workers and their queues. Holds no reference to the consumer-facing `AudioStream`, so
    an abandoned stream is collected and its finalizer can stop the workers."""

    def __init__(self, frames: FrameGenerator, decoder: Vocoder, sample_rate: int, plan: ChunkPlan,
                 max_ready: int, workers: Workers,
                 start: Callable[[], Any] | None = None,
                 deliver: Callable[[AudioChunk | StreamEnd], None] | None = None):
        self.frames = frames
        self.deliver = deliver
        self._ended = False  # (push mode) the StreamEnd was delivered
        self.start = start
        self.decoder = decoder
        self.sample_rate = sample_rate
        self.plan = plan
        self.stop = Stop()
        self.codes: queue.Queue[_Codes | _WorkerFailure | _End] = queue.Queue(maxsize=1)
        self.audio: queue.Queue[AudioChunk | _WorkerFailure | _End] = queue.Queue(maxsize=max_ready)
        self.t0 = time.perf_counter()
        self.decoded = threading.Event()  # set when the chunk last handed over has been decoded
        self.last_decode_s = 0.0
        self.workers = workers
        self._pair = workers.acquire()
        self.task_threads = {w.thread for w in self._pair}
        self._running = 2
        self._lock = threading.Lock()
        workers.track(self.stop)
        self.generator = self._pair[0].submit(self._generate)
        self.vocoder = self._pair[1].submit(self._decode)
        for task in (self.generator, self.vocoder):
            task.add_done_callback(self._task_done)

    def _task_done(self, _: concurrent.futures.Future) -> None:
        with self._lock:
            self._running -= 1
            finished = self._running == 0
        if finished:  # both tasks ended: the pair serves the next stream
            self.workers.untrack(self.stop)
            self.workers.release(self._pair)

    def _put(self, q: queue.Queue, item: object) -> bool:
        """Blocking put that gives up when the stream is stopped; True if the item was queued."""
        while not self.stop.is_set():
            try:
                q.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _generate(self) -> None:
        try:
            self._pending: list[np.ndarray] = []
            self._index, self._start, self._chunk_t0 = 0, 0, time.perf_counter()
            self._target = self.plan.length(0)
            self._first_sent, self._frame_cost = 0.0, 0.0
            self.frames.hold_until(self._target)  # (released once the first chunk is decoded: `_cut`)
            for frame in self.frames.frames(on_starve=self._starved, stop=self.stop):
                if self.stop.is_set():  # checked once per frame
                    self.frames.stats.stop_reason = "closed"
                    return
                self._pending.append(frame)
                if len(self._pending) >= self._target and not self._cut():
                    return
            # The end of speech is known only once the next frame fails to come, so the last chunk
            # holds whatever remains: possibly no frame at all when the end fell on a chunk boundary.
            now = time.perf_counter()
            groups = self.frames.config.talker.num_code_groups
            pending = self._pending
            rest = np.stack(pending) if pending else np.zeros((0, groups), np.int64)
            if self._put(self.codes, _Codes(self._index, self._start, rest, True, now - self.t0,
                                            now - self._chunk_t0)):
                self._put(self.codes, _End())
        except BaseException as e:  # noqa: BLE001 - every failure must reach the consumer
            self._put(self.codes, _WorkerFailure(e))

    def _starved(self) -> None:
        """Generation is about to wait for text (a live utterance): what it has made goes out now."""
        if self._pending and not self.stop.is_set():
            self._cut()

    def _cut(self) -> bool:
        """The pending frames as the next chunk; False when the stream was stopped meanwhile."""
        now = time.perf_counter()
        pending = self._pending
        if self._index == 0:  # the first chunk's time includes the prefill; threads compete later
            g = self.frames.stats
            self._frame_cost = 1.5 * (g.talker_s + g.predictor_s) / max(g.frames, 1)
        else:
            self._frame_cost = (now - self._chunk_t0) / len(pending)
        chunk = _Codes(self._index, self._start, np.stack(pending), False, now - self.t0, now - self._chunk_t0)
        self.decoded.clear()
        if not self._put(self.codes, chunk):
            return False
        held = self.plan.hold_all or self._index == 0
        if held:
            # First audio gets the whole CPU: on a small machine, decoding it while the next frames
            # compete for the same cores delays it more than it gains. Batched, the batcher's thread
            # makes the frames, so the row is held at the chunk's end (`hold_until`): alone, it
            # makes none meanwhile (a lone row doubled its first decode otherwise); beside rows that
            # go, it rides along in their steps.
            while not self.decoded.wait(_POLL_S) and not self.stop.is_set():
                pass
        self._index, self._start = self._index + 1, self._start + len(pending)
        self._pending, self._chunk_t0 = [], time.perf_counter()
        if self._index == 1:
            self._first_sent = self._chunk_t0
        lead = self._start * self.plan.frame_s - (self._chunk_t0 - self._first_sent)
        self._target = self.plan.paced_length(self._index, lead, self._frame_cost, self.last_decode_s)
        if held:  # go on, up to the next chunk's end if every chunk is decoded alone
            self.frames.hold_until(self._start + self._target if self.plan.hold_all else None)
        return True

    def _out(self, item: AudioChunk | _WorkerFailure | _End) -> bool:
        """Hands an item to the consumer: into the audio queue, or (push mode) straight to
        `deliver` on this thread. False when the stream was stopped meanwhile."""
        if self.deliver is None:
            return self._put(self.audio, item)
        if isinstance(item, AudioChunk):
            try:
                self.deliver(item)
            except BaseException as e:  # noqa: BLE001 - its receiver failed: the stream ends with that error
                self.stop.set()
                self._end(faults.tag(e, "channel"))
                return False
            return not self.stop.is_set()
        self._end(item.error if isinstance(item, _WorkerFailure) else None)
        return True

    def _end(self, error: BaseException | None, stopped: bool = False) -> None:
        """(Push mode) the one `StreamEnd`."""
        if self._ended:
            return
        self._ended = True
        try:
            self.deliver(StreamEnd(error=error, stopped=stopped, stats=self.frames.stats))  # type: ignore[misc]
        except BaseException:  # noqa: BLE001 - nobody left to tell but the log
            log.exception("a stream's receiver failed taking its end")

    def _decode(self) -> None:
        try:
            self._decode_all()
        finally:
            if self.deliver is not None:  # stopped before its end (a no-op after the end)
                self._end(None, stopped=True)

    def _decode_all(self) -> None:
        try:
            state = self.decoder.start() if self.start is None else self.start()
        except BaseException as e:  # noqa: BLE001 - every failure must reach the consumer
            self._out(_WorkerFailure(faults.tag(e, "vocoder")))
            self.stop.set()
            return
        while not self.stop.is_set():
            try:
                item = self.codes.get(timeout=_POLL_S)
            except queue.Empty:
                continue
            if not isinstance(item, _Codes):
                self._out(item)
                return
            try:
                t = time.perf_counter()
                faults.hit("vocoder", self.frames.utterance.embeds.marks)
                faults.hit("vocoder_thread", self.frames.utterance.embeds.marks)
                if item.codes.shape[0]:
                    samples = np.asarray(self.decoder.decode(item.codes, state), np.float32)
                else:
                    samples = np.zeros(0, dtype=np.float32)
                decode_s = time.perf_counter() - t
            except BaseException as e:  # noqa: BLE001 - every failure must reach the consumer
                faults.tag(e, "vocoder")
                self._out(_WorkerFailure(e))
                self.stop.set()  # nothing after a failed chunk may be played: stop generating
                if isinstance(e, faults.InjectedFault) and e.stage == "vocoder_thread":
                    raise
                return
            self.decoded.set()
            self.last_decode_s = decode_s
            timing = ChunkTiming(item.generated_at, time.perf_counter() - self.t0, item.generate_s, decode_s)
            chunk = AudioChunk(samples, self.sample_rate, item.index, item.start_frame, item.codes.shape[0],
                               item.codes, item.is_last, timing)
            if not self._out(chunk):
                return

    def shutdown(self) -> None:
        self.stop.set()
        if threading.current_thread() not in self.task_threads:
            # Both tasks check the flag at least once per frame or chunk; the bound only guards
            # against a runtime call that never returns (the threads are daemons, nothing hangs).
            _, late = concurrent.futures.wait([self.generator, self.vocoder], timeout=_SHUTDOWN_S)
            if late:
                log.warning("a stream's workers did not stop within %.0f s; leaving them behind", _SHUTDOWN_S)


class AudioStream:
    """An iterator of `AudioChunk`s for one request, in order; the last one has `is_last` set.

    Use it as a context manager, or call `close()`; an abandoned stream stops itself when collected.
    """

    def __init__(
        self,
        frames: FrameGenerator,
        decoder: Vocoder,
        sample_rate: int,
        plan: ChunkPlan = DEFAULT_PLAN,
        max_ready: int = 4,
        workers: Workers | None = None,
        start: Callable[[], Any] | None = None,
        speed: float = 1.0,
        deliver: Callable[[AudioChunk | StreamEnd], None] | None = None,
    ):
        """`start`: makes the vocoder state this stream begins from, on the vocoder's worker (default
        `decoder.start()`; a cloned voice's state has heard its reference, so the new audio continues it).
        `speed`: the speaking rate (`hearth.streaming.stretch`), applied as the consumer takes each chunk.
        `deliver`: push mode, for a consumer with a channel of its own (the scheduler): each chunk,
        then one `StreamEnd`, is handed to it on the vocoder's thread as soon as it exists, and the
        stream is not iterated (no queue, no relay thread)."""
        if deliver is not None and speed != 1.0:
            raise ValueError("a pushing stream delivers chunks as decoded: apply the speed where they land")
        self.generation = frames.stats
        self.seed: int | None = None  # the sampling seed, set by the engine
        self._own_workers = workers is None
        self._pipe = _Pipeline(frames, decoder, sample_rate, plan, max_ready, workers or Workers(), start, deliver)
        self._finalizer = weakref.finalize(self, self._pipe.stop.set)
        self._done = False
        self._stretcher = Stretcher(speed, sample_rate) if speed != 1.0 else None

    def __iter__(self) -> Iterator[AudioChunk]:
        return self

    def __next__(self) -> AudioChunk:
        if self._done:
            raise StopIteration
        pipe = self._pipe
        while True:
            try:
                item = pipe.audio.get(timeout=_POLL_S)
                break
            except queue.Empty:
                if pipe.stop.is_set():  # stopped from another thread: no more chunks will come
                    self.close()
                    raise StopIteration from None
                if pipe.vocoder.done() and pipe.audio.empty():
                    self.close()
                    raise RuntimeError("the vocoder worker ended without a result") from None
        if isinstance(item, AudioChunk):
            if item.is_last:
                self.close()
            if self._stretcher is not None:
                item = replace(item, samples=self._stretcher.chunk(item.samples, item.is_last))
            return item
        self.close()
        if isinstance(item, _WorkerFailure):
            raise item.error
        raise StopIteration

    @property
    def tasks(self) -> tuple[concurrent.futures.Future[None], concurrent.futures.Future[None]]:
        """The futures of its two workers' tasks (generating, decoding): both done once the stream
        has stopped, whether closed, cancelled, abandoned or at its end."""
        return self._pipe.generator, self._pipe.vocoder

    def cancel(self) -> None:
        """Stop generation (within one frame) and decoding, from any thread, without waiting: the
        consumer's iteration then ends once it has taken what was ready (without a last chunk)."""
        self._pipe.stop.set()

    def close(self) -> None:
        """Stop generation (within one frame) and decoding, and wait for both workers to finish."""
        self._done = True
        self._pipe.shutdown()
        if self._own_workers:
            self._pipe.workers.close()

    def __enter__(self) -> AudioStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
