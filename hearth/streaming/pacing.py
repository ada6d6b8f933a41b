"""When to start playing: eagerly, or late enough that the rest plays without a gap.

A machine slower than real time makes audio at a rate r below 1 second per second. Played as it
comes, the first chunk runs out before the next is made, and the listener hears a stutter at
every chunk. Held until B seconds are buffered, the rest (R seconds still to come) arrives over
R / r seconds while playback goes on at 1: it plays through without a gap when B >= R * (1 - r) / r,
which is to say when playback ends no sooner than generation does. So
`Pacer` ("smooth") holds the audio until that much is buffered, from the measured rate and the
audio the text is expected to take, both re-estimated as chunks arrive; if the output runs dry
anyway (the estimate was short, or the text is still being written) it holds again by the same
rule, so a listener hears one pause instead of many. "eager" plays every chunk at once (the
right choice where the machine keeps ahead of real time); "auto" is smooth until the measured
rate says the machine keeps ahead, then eager.

The expected length: the text's tokens times frames per token (real speech takes 2-5 frames of
80 ms per text token; `FRAMES_PER_TOKEN` to start with, then what the sentences already finished
took).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hearth.frames import FRAME_S

__all__ = ["FRAMES_PER_TOKEN", "PLAYBACK", "Pacer", "SpeechRate", "paced"]

PLAYBACK = ("auto", "smooth", "eager")
FRAMES_PER_TOKEN = 4.0  # until sentences have been measured: 0.32 s per text token, about real speech
_MARGIN_S = 0.4  # buffered beyond the estimate: jitter, and the first chunks (1, 2, 4 frames) outrunning the rate
_SLOWER = 0.9  # the rate is taken this much lower than measured: a few chunks' jitter, and near real
# time a small error in the rate is a large one in the shortfall (1 - r) / r


@dataclass
class SpeechRate:
    """Audio made per wall second, and frames per text token, measured over finished work (an
    exponential average: recent sentences count most). Shared by whoever plays from one engine."""

    realtime: float | None = None  # seconds of audio per second of generation
    frames_per_token: float = FRAMES_PER_TOKEN
    _weight: float = 0.5

    def sentence(self, audio_s: float, wall_s: float, frames: int, tokens: int) -> None:
        """A sentence was generated: `audio_s` of audio in `wall_s` seconds, `frames` for `tokens`."""
        if wall_s > 0 and audio_s > 0:
            r = audio_s / wall_s
            self.realtime = r if self.realtime is None else (1 - self._weight) * self.realtime + self._weight * r
        if tokens > 0 and frames > 0:
            self.frames_per_token = (1 - self._weight) * self.frames_per_token + self._weight * frames / tokens


@dataclass
class Pacer:
    """One request's playback decision. Call `expect` with its text's tokens (again as the text
    grows), `arrived` for each chunk as it comes, and `may_play(buffered_s)` before handing audio
    to the output; `ran_dry()` when the output had nothing left before the end."""

    policy: str = "auto"
    rate: SpeechRate = field(default_factory=SpeechRate)
    frame_s: float = FRAME_S
    expected_frames: float = 0.0  # for the text known so far
    received_frames: int = 0
    playing: bool = False
    _first_at: float | None = None  # when the first chunk arrived
    _received_s: float = 0.0  # audio received since then (the first chunk's not counted: it carries the prefill)
    _boost: float = 1.0  # on the remaining audio: 1.5 more each time the output ran dry

    def __post_init__(self) -> None:
        if self.policy not in PLAYBACK:
            raise ValueError(f"playback must be one of {', '.join(PLAYBACK)}, got {self.policy!r}")

    def expect(self, text_tokens: int) -> None:
        """The whole text (as far as it is known) holds this many tokens."""
        self.expected_frames = text_tokens * self.rate.frames_per_token

    def arrived(self, frames: int, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if self._first_at is None:
            self._first_at = now
        else:
            self._received_s += frames * self.frame_s
        self.received_frames += frames

    def measured_rate(self, now: float | None = None) -> float | None:
        """Audio per second of the engine's work, measured over finished sentences (the shared
        `SpeechRate`); before any has finished, this utterance's own since its first chunk (which
        counts the time text still being written kept it waiting, so it errs long); None before
        either exists."""
        if self.rate.realtime is not None:
            return self.rate.realtime
        now = time.monotonic() if now is None else now
        if self._first_at is not None and self._received_s > 0 and now > self._first_at:
            return self._received_s / (now - self._first_at)
        return None

    def needed_s(self, now: float | None = None) -> float:
        """Audio to hold before playing (0: play now; infinite: wait for the rate to be known)."""
        if self.policy == "eager":
            return 0.0
        r = self.measured_rate(now)
        if r is None:
            return float("inf")  # the second chunk tells
        if r >= 1.0 and self.policy == "auto":
            return 0.0
        # Past its estimate, an utterance is taken to have more to say; each time the output ran
        # dry the estimate proved short, and what remains is taken to be longer.
        remaining = self._boost * max(self.expected_frames - self.received_frames, 0.25 * self.received_frames)
        r = max(r * _SLOWER, 1e-3)
        return remaining * self.frame_s * max(0.0, 1.0 - r) / r + _MARGIN_S

    def may_play(self, buffered_s: float, ended: bool = False, now: float | None = None) -> bool:
        """Whether to start (or go on) playing with `buffered_s` seconds not yet played. Once playing
        it stays so until `ran_dry`; once all the audio has come (`ended`) it plays."""
        if not self.playing:
            self.playing = ended or (self._first_at is not None and buffered_s >= self.needed_s(now))
        return self.playing

    def ran_dry(self) -> None:
        """The output had played everything before the end: hold again by the same rule, taking
        what remains to be longer than estimated."""
        self.playing = self.policy == "eager"
        self._boost *= 1.5


class PacedChunks:
    """The hold-and-flush rule between a request and a real-time output, for the blocking loop
    (`paced`) and the asynchronous one (the Wyoming server's): chunks go in as they come (`add`)
    and come out when they may be handed to the output (`take`), which is taken to play each at
    once and in real time."""

    def __init__(self, pacer: Pacer):
        self.pacer = pacer
        self.held: deque[Any] = deque()
        self.plays_until: float | None = None  # when what was taken has played out
        self._told = -1

    def expect(self, text_tokens: int) -> None:
        """The text known so far holds this many tokens."""
        if text_tokens != self._told:
            self._told = text_tokens
            self.pacer.expect(text_tokens)

    def check_dry(self, now: float) -> None:
        """If the output has played everything taken and nothing is held, it has run dry: the next
        audio is held again by the same rule."""
        if self.pacer.playing and not self.held and self.plays_until is not None and now > self.plays_until:
            self.pacer.ran_dry()

    def add(self, chunk: Any, now: float) -> None:  # noqa: ANN401 - a request's chunk
        self.check_dry(now)
        self.held.append(chunk)
        self.pacer.arrived(chunk.frames, now)

    def take(self, ended: bool, now: float) -> Any:  # noqa: ANN401 - a request's chunk, or None
        """The next chunk for the output, or None while it is to be held. `ended`: all has come."""
        buffered = sum(c.duration_s for c in self.held) + max(0.0, (self.plays_until or now) - now)
        if self.held and self.pacer.may_play(buffered, ended, now):
            chunk = self.held.popleft()
            self.plays_until = max(now, self.plays_until or now) + chunk.duration_s
            return chunk
        return None


def paced(request: Any, pacer: Pacer, *, text_tokens: Callable[[], int] | None = None,  # noqa: ANN401
          stop: Callable[[], bool] = lambda: False, poll_s: float = 0.02,
          clock: Callable[[], float] = time.monotonic) -> Iterator[Any]:
    """A request's chunks (`hearth.runtime.request.Request`), each yielded when it is to be handed to a
    real-time output, which is taken to play it at once and in real time; held meanwhile as
    `pacer` says (`PacedChunks`). `text_tokens`: the request's text's tokens so far (asked again as
    chunks come, for text still being written; default: its text once). Ends at the request's end,
    or when `stop()`."""
    chunks = PacedChunks(pacer)
    ended = False
    whole_text: int | None = None
    while not ended or chunks.held:
        if stop():
            return
        if not ended and (not chunks.held or not pacer.playing):
            chunk = request.get(timeout=poll_s)
            if chunk is not None:
                chunks.add(chunk, clock())
            elif request.finished:
                ended = True
        if text_tokens is not None:
            chunks.expect(text_tokens())
        else:
            if whole_text is None:
                whole_text = len(request.scheduler.engine.tokenizer.encode(request.text))
            chunks.expect(whole_text)
        now = clock()
        chunks.check_dry(now)
        chunk = chunks.take(ended, now)
        if chunk is not None:
            yield chunk
