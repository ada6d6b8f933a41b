"""What a stream hands out: audio chunks and the end of a pushing stream, and how a stream cuts its
frames into chunks (`ChunkPlan`: a small first chunk for early audio, then `chunk_frames` each,
or sized by pacing)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hearth.frames import FRAME_S
from hearth.generation.frame_loop import GenerationStats

__all__ = ["AudioChunk", "ChunkPlan", "ChunkTiming", "StreamEnd", "silence"]


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


def silence(seconds: float, sample_rate: int, groups: int) -> AudioChunk:
    """A chunk of silence (an SSML break): no frames, no codes."""
    samples = np.zeros(int(round(seconds * sample_rate)), np.float32)
    return AudioChunk(samples, sample_rate, 0, 0, 0, np.zeros((0, groups), np.int64), False,
                      ChunkTiming(0.0, 0.0, 0.0, 0.0))


@dataclass(frozen=True)
class StreamEnd:
    """What a pushing stream (`AudioStream(deliver=...)`) delivers last, exactly once: the end of
    its audio (`error` None, `stopped` False), a failure, or a stop before the end."""

    error: BaseException | None = None
    stopped: bool = False
    stats: GenerationStats | None = None
