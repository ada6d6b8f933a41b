"""The streaming pipeline: frames -> chunks -> a vocoder worker -> audio chunks, in order.

Two workers run beside the consumer:

    generation thread --(codes, bounded: 1)--> vocoder thread --(audio, bounded)--> consumer

The generation thread runs the frame loop and cuts frames into chunks (a small first chunk for
early audio, then `chunk_frames` each). The vocoder thread decodes one chunk at a time with a
stateful decoder stream, so at most one decode is in flight while generation goes on. Items on the
queues are explicit messages (a chunk, an error, the end), never `None`. An error in either stage
reaches the consumer as the original exception. Closing the stream (or abandoning its iterator)
sets a stop flag that the frame loop checks every frame, and joins both workers.
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from .backends import Vocoder
from .generate import FrameGenerator

__all__ = ["ChunkPlan", "ChunkTiming", "AudioChunk", "AudioStream", "Workers"]

_POLL_S = 0.05  # how often a blocked worker re-checks the stop flag


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
    hold_first: bool = True  # generation pauses while the first chunk is decoded
    # Generation pauses while every chunk is decoded: for a language model and a vocoder that share
    # the same few cores, where running both at once makes each slower than taking turns.
    hold_all: bool = False
    # Paced: after the first chunk, each chunk is cut early enough to be decoded before the audio
    # already sent runs out (estimated from the measured frame and decode times), never larger
    # than `size`. For real-time playback; off, the sizes follow `length` exactly.
    paced: bool = False
    frame_s: float = 0.08  # audio per frame

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
    samples: np.ndarray  # float32 mono in [-1, 1], exactly frames * samples_per_frame long
    sample_rate: int
    index: int  # 0, 1, 2, ... in playback order
    start_frame: int
    frames: int
    codes: torch.Tensor  # [frames, 16]
    is_last: bool
    timing: ChunkTiming

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate


@dataclass
class _Codes:
    index: int
    start_frame: int
    codes: torch.Tensor
    is_last: bool
    generated_at: float
    generate_s: float


@dataclass
class _Failure:
    error: BaseException


@dataclass
class _End:
    pass


@dataclass
class StreamStats:
    chunks: int = 0
    frames: int = 0
    decode_s: float = 0.0


class Workers:
    """The two long-lived worker threads a pipeline runs on: one generates, one vocodes.

    Kept for the life of an engine, because a fresh thread pays for its math-library thread pool on
    its first heavy call (about 80 ms of first-audio latency here). Streams on the same workers run
    one after another.
    """

    def __init__(self) -> None:
        self.generate = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hearth-generate")
        self.vocode = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hearth-vocoder")

    def close(self) -> None:
        self.generate.shutdown(wait=True)
        self.vocode.shutdown(wait=True)


class _Pipeline:
    """The two workers and their queues. Holds no reference to the consumer-facing `AudioStream`, so
    an abandoned stream is collected and its finalizer can stop the workers."""

    def __init__(self, frames: FrameGenerator, decoder: Vocoder, sample_rate: int, plan: ChunkPlan,
                 max_ready: int, decode_hook: Callable[[int], None] | None, workers: Workers):
        self.frames = frames
        self.decoder = decoder
        self.sample_rate = sample_rate
        self.plan = plan
        self.decode_hook = decode_hook
        self.stop = threading.Event()
        self.codes: queue.Queue[_Codes | _Failure | _End] = queue.Queue(maxsize=1)
        self.audio: queue.Queue[AudioChunk | _Failure | _End] = queue.Queue(maxsize=max_ready)
        self.t0 = time.perf_counter()
        self.decoded = threading.Event()  # set when the chunk last handed over has been decoded
        self.last_decode_s = 0.0
        self.workers = workers
        self.task_threads: set[threading.Thread] = set()  # filled as the tasks start
        self.generator = workers.generate.submit(self._generate)
        self.vocoder = workers.vocode.submit(self._decode)

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
        self.task_threads.add(threading.current_thread())
        try:
            pending: list[torch.Tensor] = []
            index, start, chunk_t0 = 0, 0, time.perf_counter()
            target = self.plan.length(0)
            first_sent, frame_cost = 0.0, 0.0
            for frame in self.frames:
                if self.stop.is_set():  # checked once per frame
                    self.frames.stats.stop_reason = "closed"
                    return
                pending.append(frame)
                if len(pending) >= target:
                    now = time.perf_counter()
                    if index == 0:  # the first chunk's time includes the prefill; threads compete later
                        g = self.frames.stats
                        frame_cost = 1.5 * (g.talker_s + g.predictor_s) / max(g.frames, 1)
                    else:
                        frame_cost = (now - chunk_t0) / len(pending)
                    chunk = _Codes(index, start, torch.stack(pending), False, now - self.t0, now - chunk_t0)
                    self.decoded.clear()
                    if not self._put(self.codes, chunk):
                        return
                    if self.plan.hold_all or (index == 0 and self.plan.hold_first):
                        # First audio gets the whole CPU: on a small machine, decoding it while the
                        # next frames compete for the same cores delays it more than it gains.
                        while not self.decoded.wait(_POLL_S) and not self.stop.is_set():
                            pass
                    index, start, pending, chunk_t0 = index + 1, start + len(pending), [], time.perf_counter()
                    if index == 1:
                        first_sent = chunk_t0
                    lead = start * self.plan.frame_s - (chunk_t0 - first_sent)
                    target = self.plan.paced_length(index, lead, frame_cost, self.last_decode_s)
            # The end of speech is known only once the next frame fails to come, so the last chunk
            # holds whatever remains: possibly no frame at all when the end fell on a chunk boundary.
            now = time.perf_counter()
            groups = self.frames.config.talker.num_code_groups
            rest = torch.stack(pending) if pending else torch.zeros(0, groups, dtype=torch.long)
            if self._put(self.codes, _Codes(index, start, rest, True, now - self.t0, now - chunk_t0)):
                self._put(self.codes, _End())
        except BaseException as e:  # noqa: BLE001 - every failure must reach the consumer
            self._put(self.codes, _Failure(e))

    def _decode(self) -> None:
        self.task_threads.add(threading.current_thread())
        stream = self.decoder.start()
        while not self.stop.is_set():
            try:
                item = self.codes.get(timeout=_POLL_S)
            except queue.Empty:
                continue
            if not isinstance(item, _Codes):
                self._put(self.audio, item)
                return
            try:
                if self.decode_hook is not None:
                    self.decode_hook(item.index)
                t = time.perf_counter()
                if item.codes.shape[0]:
                    with torch.inference_mode():
                        samples = self.decoder.decode(item.codes, stream).to(torch.float32).numpy()
                else:
                    samples = np.zeros(0, dtype=np.float32)
                decode_s = time.perf_counter() - t
            except BaseException as e:  # noqa: BLE001 - every failure must reach the consumer
                self._put(self.audio, _Failure(e))
                self.stop.set()  # nothing after a failed chunk may be played: stop generating
                return
            self.decoded.set()
            self.last_decode_s = decode_s
            timing = ChunkTiming(item.generated_at, time.perf_counter() - self.t0, item.generate_s, decode_s)
            chunk = AudioChunk(samples, self.sample_rate, item.index, item.start_frame, item.codes.shape[0],
                               item.codes, item.is_last, timing)
            if not self._put(self.audio, chunk):
                return

    def shutdown(self) -> None:
        self.stop.set()
        if threading.current_thread() not in self.task_threads:
            concurrent.futures.wait([self.generator, self.vocoder])


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
        decode_hook: Callable[[int], None] | None = None,
        workers: Workers | None = None,
    ):
        self.stats = StreamStats()
        self.generation = frames.stats
        self.seed: int | None = None  # the sampling seed, set by the engine
        self._own_workers = workers is None
        self._pipe = _Pipeline(frames, decoder, sample_rate, plan, max_ready, decode_hook, workers or Workers())
        self._finalizer = weakref.finalize(self, self._pipe.stop.set)
        self._done = False

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
                if pipe.vocoder.done() and pipe.audio.empty():
                    self.close()
                    raise RuntimeError("the vocoder worker ended without a result") from None
        if isinstance(item, AudioChunk):
            self.stats.chunks += 1
            self.stats.frames += item.frames
            self.stats.decode_s += item.timing.decode_s
            if item.is_last:
                self.close()
            return item
        self.close()
        if isinstance(item, _Failure):
            raise item.error
        raise StopIteration

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
