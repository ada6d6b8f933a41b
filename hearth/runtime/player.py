"""Local playback over the scheduler: requests spoken one after another on one sink.

    with Player(Scheduler(engine), DeviceSink(engine.sample_rate), voice="ryan", speed=1.2) as player:
        request = player.say("First sentence. Second one.", seed=7)
        request.wait()                   # returns once all its audio has been played
        player.cancel()                  # silence now: this player's requests are dropped

The player is one consumer of the scheduler: its requests are chained (`after=`), so they are
generated in order and, together, never more than one sentence ahead of what has been played; the
next sentence is generated while the current one plays. A playback thread writes each chunk to the
sink in 40 ms blocks, so a cancel is heard within one block, with a 10 ms fade-out. On a sink
that plays in real time, where the machine makes audio slower than that, a request's audio is held
until the rest can play without a gap (`playback`, `hearth.streaming.pacing`). A sink failure
fails that sentence only (the rest of it is skipped); the next one plays normally.

The player's keywords beyond its own are every request's speech options (the scheduler's: seed,
max_new_tokens, speed, normalize, chunk_frames, ...: hearth.options), handed whole to each `submit`;
a `say`'s own options take their place for that text. `hearth speak` gives it its command line's
(`hearth.cli.arguments.option_values`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from hearth.runtime.scheduler import Request, RequestChunk, Scheduler, SentenceResult
from hearth.streaming.pacing import PLAYBACK, Pacer, paced
from hearth.text.prompt import Speaker

__all__ = ["Player", "PlayerRequest", "Sink"]

log = logging.getLogger(__name__)

BLOCK_S = 0.04  # playback granularity: a cancel is heard within one block
FADE_S = 0.01


class Sink(Protocol):
    sample_rate: int
    realtime: bool

    def write(self, samples: np.ndarray) -> bool: ...  # True if the output ran dry before this write

    def drain(self) -> None: ...


@dataclass(eq=False)
class PlayerRequest:
    """One text given to the player. `wait()` returns once its audio has been played (or it was cancelled)."""

    number: int  # 1, 2, ... in the order given to this player
    request: Request
    status: str = "queued"  # "speaking", then "done" or "cancelled"
    first_audio_s: float | None = None  # submit to the first sample handed to the sink
    underruns: int = 0
    _done: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def text(self) -> str:
        return self.request.text

    @property
    def voice(self) -> Speaker:
        return self.request.voice

    @property
    def language(self) -> str:
        return self.request.language

    @property
    def sentences(self) -> list[SentenceResult]:
        return self.request.sentences

    @property
    def errors(self) -> list[SentenceResult]:
        return [s for s in self.sentences if s.status == "failed"]

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)


class Player:
    def __init__(
        self,
        scheduler: Scheduler,
        sink: Sink,
        *,
        voice: Speaker = "vivian",
        language: str = "auto",
        keep_codes: bool = False,
        owns_scheduler: bool = False,
        playback: str = "auto",
        **options: Any,
    ):
        self.scheduler = scheduler
        self.sink = sink
        self.voice = scheduler.engine.check_voice(voice)
        self.language = scheduler.engine.check_language(language)
        self.options = options  # every request's speech options (checked with each request, by the scheduler)
        self.keep_codes = keep_codes
        if playback not in PLAYBACK:
            raise ValueError(f"playback must be one of {', '.join(PLAYBACK)}, got {playback!r}")
        self.playback = playback  # when audio starts playing on a real-time sink (`hearth.streaming.pacing`)
        self._failed_sentence = -1
        self.underruns = 0
        self._owns_scheduler = owns_scheduler
        self._queue: deque[PlayerRequest] = deque()
        self._given: list[PlayerRequest] = []  # not yet played out; cancel() reaches all of them
        self._max_ahead = 0  # of requests already played out
        self._count = 0
        self._playing: PlayerRequest | None = None
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._playback_loop, name="hearth-player", daemon=True)
        self._thread.start()

    @property
    def max_sentences_buffered(self) -> int:
        """The most sentences generated or generating but not yet played, at any time."""
        with self._cond:
            return max([self._max_ahead] + [p.request.max_ahead for p in self._given])

    # -- API -------------------------------------------------------------------------------------

    def say(self, text: str, voice: Speaker = None, language: str | None = None, **options: Any) -> PlayerRequest:
        """Queue a text; returns at once. `options` (seed, instruct, ...) in place of the player's for
        this text. Bad input raises InputError, a full scheduler Busy."""
        if self._closed:
            raise RuntimeError("the player is closed")
        with self._cond:
            previous = self._given[-1].request if self._given else None
            request = self.scheduler.submit(
                text, voice or self.voice, language or self.language, keep_codes=self.keep_codes, after=previous,
                **{**self.options, **options, "paced": self.sink.realtime},  # (paced: as the sink plays)
            )
            self._count += 1
            item = PlayerRequest(self._count, request)
            self._given.append(item)
            self._queue.append(item)
            self._cond.notify_all()
        return item

    def cancel(self) -> None:
        """Silence now: the request playing fades out, every request given so far is dropped."""
        with self._cond:
            given = list(self._given)
        for item in given:
            item.request.cancel()
        with self._cond:
            for item in given:
                if item is not self._playing and item in self._queue:
                    self._queue.remove(item)
                    self._finish(item)
            self._cond.notify_all()

    def idle(self) -> bool:
        with self._cond:
            return not self._given

    def close(self) -> None:
        if self._closed:
            return
        self.cancel()
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=30)
        if self._owns_scheduler:
            self.scheduler.close()

    def __enter__(self) -> Player:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- playback thread -------------------------------------------------------------------------

    def _finish(self, item: PlayerRequest) -> None:
        """Under the lock."""
        item.status = "cancelled" if item.request.cancelled else "done"
        self._max_ahead = max(self._max_ahead, item.request.max_ahead)
        if item in self._given:
            self._given.remove(item)
        item._done.set()

    def _playback_loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue:
                    return
                item = self._queue.popleft()
                self._playing = item
            try:
                self._play(item)
            except Exception as e:  # noqa: BLE001 - a failure here must not stop later requests
                log.warning("playback of request %d failed: %s", item.number, e)
            with self._cond:
                self._playing = None
                self._finish(item)

    def _play(self, item: PlayerRequest) -> None:
        sink = self.sink
        request = item.request
        item.status = "speaking"
        # Held until the rest can play without a gap (`hearth.streaming.pacing`), on a sink that plays in real
        # time; a file takes the audio as it comes.
        pacer = Pacer(self.playback if sink.realtime else "eager", self.scheduler.rate)
        self._failed_sentence = -1
        for chunk in paced(request, pacer, stop=lambda: request.cancelled):
            if not self._play_chunk(item, chunk):
                return
        if request.cancelled:
            return
        try:
            sink.drain()
        except Exception as e:  # noqa: BLE001
            log.warning("sink failed while draining request %d: %s", item.number, e)

    def _play_chunk(self, item: PlayerRequest, chunk: RequestChunk) -> bool:
        """Hand one chunk to the sink in blocks; False once the request is cancelled (faded out)."""
        sink, request = self.sink, item.request
        if chunk.sentence == self._failed_sentence:
            return True  # the rest of a sentence the sink failed
        block = max(1, int(BLOCK_S * sink.sample_rate))
        samples = chunk.samples
        for start in range(0, len(samples), block):
            if request.cancelled:
                self._fade_out(samples[start : start + int(FADE_S * sink.sample_rate)])
                return False
            try:
                starved = sink.write(samples[start : start + block])
            except Exception as e:  # noqa: BLE001 - isolation: the sink failed this sentence only
                error = f"sink: {type(e).__name__}: {e}"
                request.fail_sentence(chunk.sentence, error)
                log.warning("sink failed in request %d: %s", item.number, error)
                self._failed_sentence = chunk.sentence
                return True
            if item.first_audio_s is None:
                item.first_audio_s = time.monotonic() - request.submitted
            elif starved:
                item.underruns += 1
                self.underruns += 1
        return True

    def _fade_out(self, samples: np.ndarray) -> None:
        if len(samples):
            ramp = np.linspace(1.0, 0.0, len(samples), dtype=np.float32)
            with contextlib.suppress(Exception):  # a sink failing during a cancel has nothing left to fail
                self.sink.write(samples * ramp)
