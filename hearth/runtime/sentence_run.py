"""One sentence of a request while the scheduler generates it: its stream, its turns at the CPU,
its speed, and what has landed of it (`hearth.runtime.scheduler` starts and ends it)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from hearth.engine import LiveUtterance
from hearth.generation.turn_taking import Turn
from hearth.runtime.request import Request, SentenceResult
from hearth.streaming.audio_stream import AudioStream
from hearth.streaming.chunks import AudioChunk, StreamEnd
from hearth.streaming.stretch import Stretcher

__all__ = ["SentenceRun"]


class SentenceRun:
    """A sentence being generated: its stream and its turns at the CPU (`turn_taking.Turn`). Fields
    are guarded by the scheduler's lock; what its stream delivers goes to `on_landed` (the
    scheduler's), on the vocoder's thread."""

    def __init__(self, request: Request, sentence: SentenceResult, turn: Turn, sample_rate: int,
                 on_landed: Callable[[SentenceRun, AudioChunk | StreamEnd], None]):
        self.on_landed = on_landed
        self.request = request
        self.sentence = sentence
        self.turn = turn
        self.stream: AudioStream | LiveUtterance | None = None
        self.stopped = False
        self.failed_to_start: Exception | None = None
        self.failure: BaseException | None = None  # why it was stopped, when it failed outside its stream
        self.decode_s = 0.0  # the vocoder's time for its chunks so far
        self.started = time.monotonic()
        self.codes: list[np.ndarray] = []  # kept with keep_codes
        speed = request.sentence_options(sentence.index).speed
        self.stretcher = Stretcher(speed, sample_rate) if speed != 1.0 else None
        self.pause = np.zeros(int(round(request.pause_before(sentence.index) * sample_rate)), np.float32)
        self.sample_rate = sample_rate
        # With word timestamps: its audio as delivered, kept for the word timer (`runtime.word_timer`).
        self.heard: list[np.ndarray] | None = [] if request.options.word_timestamps else None

    def at_speed(self, chunk: AudioChunk) -> np.ndarray:
        """`chunk`'s samples at the sentence's speed: the sentence is stretched as one stream (its
        chunks join without seams) and flushed at its end, so a chunk holds only its sentence's
        audio and a sentence lasts exactly its samples / speed; the silence before it (an SSML
        break) leads its first chunk. On the vocoder's thread."""
        samples = chunk.samples if self.stretcher is None else self.stretcher.chunk(chunk.samples, chunk.is_last)
        if self.pause.size:
            samples, self.pause = np.concatenate((self.pause, samples)), self.pause[:0]
        if self.heard is not None:
            self.heard.append(samples)
        return samples

    def landed(self, item: AudioChunk | StreamEnd) -> None:
        """The stream's `deliver`: called on its vocoder's thread."""
        self.on_landed(self, item)

    def fail(self, error: BaseException) -> None:
        """Under the lock: the sentence fails for a reason outside its stream (the text pushed into
        it): it stops, and its end carries this error."""
        if self.failure is None:
            self.failure = error
        self.stop_turns()
        threading.Thread(target=self.cancel_stream, name="hearth-stop", daemon=True).start()  # (outside the lock)

    def stop_turns(self) -> None:
        """Under the lock: no more turns, and no more text pushed (`cancel_stream` then stops its stream)."""
        self.stopped = True
        self.turn.stop()

    def cancel_stream(self) -> None:
        """Stop generating (outside the lock): within a frame, also while waiting for text."""
        stream = self.stream
        if stream is not None:
            stream.cancel()
