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
from hearth.frames import FRAME_S
from hearth.generation.frame_loop import FrameGenerator, GenerationStats, Stop
from hearth.reliability import faults
from hearth.streaming.stretch import Stretcher

__all__ = ["ChunkPlan", "ChunkTiming", "AudioChunk", "AudioStream", "StreamEnd", "Workers"]

log = logging.getLogger(__name__)

_POLL_S = 0.05  # how often a blocked worker re-checks the stop flag
_SHUTDOWN_S = 10.0


@dataclass(frozen=True)
class ChunkPlan:
    """How frames are grouped: `first` frames for the first chunk (earlier audio), then doubling up
    to `size` each (2, 4, 5, 5, ... by default).

    The ramp matters for gapless playback: once the small first chunk starts playing, the next one
    must be generated within its duration. A second chunk as large as the rest would need the
    engine to run at `first / size` of real time; doubling needs only half.
    """

    size: int = 5
    first: int = 2
    # Generation pauses while every chunk is decoded: for a language model and a vocoder that share
    # the same few cores, where running both at once makes each slower than taking turns.
    hold_all: bool = False
    # Paced: after the first chunk, each chunk is cut early enough to be decoded before the audio
    # already sent runs out (estimated from the measured frame and decode times), never larger
    # than `size`. For real-time playback; off, the sizes follow `length` exactly.
    paced: bool = False
    frame_s: float = FRAME_S  # audio per frame

    def paced_length(self, index: int, lead_s: float, frame_cost_s: float, decode_s: float) -> int:
        """Frames for chunk `index` when `lead_s` of sent audio is still to play."""
        if index == 0 or not self.paced or frame_cost_s <= 0:
            return self.length(index)
        if lead_s <= 0:
            return self.size  # behind real time already: larger chunks cost less per frame
        fit = int((0.6 * lead_s - decode_s) / frame_cost_s)
        return max(1, min(self.length(index), fit))

    def __post_init__(self) -> None:
        if self.size < 1 or self.first < 1:
            raise ValueError("chunk sizes must be at least one frame")

    def length(self, index: int) -> int:
        if index == 0:
            return self.first
        if self.first >= self.size:
            return self.size
        return min(self.size, self.first << min(index, 16))


@dataclass(frozen=True)
class ChunkTiming:
    """Seconds since the request started, and the work done for this chunk."""

    generated_at: float  # the chunk's last frame existed
    decoded_at: float  # its audio was ready for the consumer
    generate_s: float  # language-model time spent on this chunk's frames
    decode_s: float  # vocoder time for this chunk


@dataclass(frozen=True)
class AudioChunk:
    samples: np.ndarray  # float32 mono in [-1, 1]: frames * samples_per_frame long (at speed 1.0)
    sample_rate: int
    index: int  # 0, 1, 2, ... in playback order
    start_frame: int
    frames: int
    codes: np.ndarray  # [frames, 16]
    is_last: bool
    timing: ChunkTiming

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate


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


@dataclass(frozen=True)
class StreamEnd:
    """What a pushing stream (`AudioStream(deliver=...)`) delivers last, exactly once: the end of
    its audio (`error` None, `stopped` False), a failure, or a stop before the end."""

    error: BaseException | None = None
    stopped: bool = False
    stats: GenerationStats | None = None


class _Worker:
    """One daemon thread running submitted calls in order. Daemon: whatever happens, a stuck call
    can never keep the process from exiting (the engine also stops its streams on close)."""

    def __init__(self, name: str):
        self._tasks: queue.SimpleQueue[tuple[Callable[[], object], concurrent.futures.Future] | None] = (
            queue.SimpleQueue()
        )
        self.dying = False
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (task := self._tasks.get()) is not None:
            fn, future = task
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as e:  # noqa: BLE001 - handed to whoever waits on the future
                if isinstance(e, faults.InjectedFault) and e.stage == "vocoder_thread":
                    self.dying = True  # (before the future's callbacks run: its pair is not kept)
                    future.set_exception(e)
                    raise  # the thread dies (supervision's test: its pair is replaced)
                future.set_exception(e)
            else:
                future.set_result(result)

    @property
    def alive(self) -> bool:
        return self.thread.is_alive() and not self.dying

    def submit(self, fn: Callable[[], object]) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._tasks.put((fn, future))
        return future

    def close(self) -> None:
        self._tasks.put(None)


class Workers:
    """Pairs of long-lived worker threads a pipeline runs on: one generates, one vocodes.

    Each live stream holds a pair of its own, so streams on several threads run side by side; a
    finished stream's pair is kept for the next (a fresh thread pays for its math library's thread
    pool on its first heavy call: about 80 ms of first-audio latency here), up to `keep` idle pairs.
    """

    def __init__(self, keep: int = 2) -> None:
        self.keep = keep
        self._idle: list[tuple[_Worker, _Worker]] = []
        self._lock = threading.Lock()
        self._count = 0
        self._closed = False
        self._live: set[threading.Event] = set()  # the stop flags of streams running on a pair
        self.replaced = 0  # idle pairs found with a dead thread, and replaced

    def acquire(self) -> tuple[_Worker, _Worker]:
        with self._lock:
            if self._closed:
                raise RuntimeError("the engine is closed")
            while self._idle:
                pair = self._idle.pop()
                if all(w.alive for w in pair):
                    return pair
                self.replaced += 1  # a thread died (it must not take the next stream with it)
                log.warning("a stream worker thread had died; the next stream starts new ones")
                for worker in pair:
                    worker.close()
            self._count += 1
            n = self._count
        return _Worker(f"hearth-generate-{n}"), _Worker(f"hearth-vocoder-{n}")

    def release(self, pair: tuple[_Worker, _Worker]) -> None:
        with self._lock:
            if not all(w.alive for w in pair):
                self.replaced += 1  # a thread died: the next stream gets new ones
                log.warning("a stream worker thread died; the next stream starts new ones")
            elif not self._closed and len(self._idle) < self.keep:
                self._idle.append(pair)
                return
        for worker in pair:
            worker.close()

    def warm(self, fn: Callable[[], object]) -> None:
        """Run `fn` on the generate thread of an idle pair (and keep the pair), raising its error."""
        pair = self.acquire()
        try:
            pair[0].submit(fn).result()
        finally:
            self.release(pair)

    def track(self, stop: threading.Event) -> None:
        with self._lock:
            self._live.add(stop)

    def untrack(self, stop: threading.Event) -> None:
        with self._lock:
            self._live.discard(stop)

    def close(self) -> None:
        """Stop every live stream (each ends within a frame) and end the idle threads."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            live = list(self._live)
        for stop in live:
            stop.set()
        for pair in idle:
            for worker in pair:
                worker.close()


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
        plan: ChunkPlan = ChunkPlan(),
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
