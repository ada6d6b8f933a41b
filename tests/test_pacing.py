"""When playback starts (`hearth.streaming.pacing`), on a simulated clock: a generator slower than real time,
played eagerly, stutters; played smoothly it plays through without a gap, starting not much later
than the arithmetic allows (playback ends as generation does: a start at L / r - L, for a rate taken
10 % below the measured one); a machine ahead of real time plays at once."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hearth.streaming.pacing import Pacer, SpeechRate, paced

FRAME_S = 0.08


@dataclass
class _Chunk:
    frames: int
    sentence: int = 0

    @property
    def duration_s(self) -> float:
        return self.frames * FRAME_S


class _Generation:
    """A request whose chunks (1, 2, 4, then 5 frames, as `ChunkPlan`) come at `rate` seconds of
    audio per second, after a `start_s` prefill; `get` advances the clock while it waits."""

    def __init__(self, total_frames: int, rate: float, start_s: float = 0.2, jitter: float = 0.0, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.now = 0.0
        self.arrivals: list[tuple[float, _Chunk]] = []
        t, made, size = start_s, 0, 1
        while made < total_frames:
            n = min(size, total_frames - made)
            t += n * FRAME_S / rate * (1 + jitter * rng.uniform(-1, 1))
            self.arrivals.append((t, _Chunk(n)))
            made += n
            size = min(size * 2, 5)
        self.finished = False

    def clock(self) -> float:
        return self.now

    def get(self, timeout: float) -> _Chunk | None:
        if self.arrivals and self.arrivals[0][0] <= self.now + timeout:
            t, chunk = self.arrivals.pop(0)
            self.now = max(self.now, t)
            return chunk
        self.now += timeout
        if not self.arrivals:
            self.finished = True
        return None


def play(total_frames: int, rate: float, policy: str, shared: SpeechRate | None = None, estimate: float = 1.0,
         jitter: float = 0.0, seed: int = 0) -> tuple[float, list[float]]:
    """First audio (s) and the gaps heard, the output playing each yielded chunk at once in real time."""
    g = _Generation(total_frames, rate, jitter=jitter, seed=seed)
    rate_memory = shared or SpeechRate()
    pacer = Pacer(policy, rate_memory)
    # Rounded up: a text of `estimate` 1.0 is expected to take at least its audio (rounded down it
    # would come out up to two frames short, which near a rate of 0.25 is more than the margin).
    tokens = math.ceil(total_frames * estimate / rate_memory.frames_per_token)
    first, plays_until, gaps = None, None, []
    for chunk in paced(g, pacer, text_tokens=lambda: tokens, clock=g.clock, poll_s=0.01):
        now = g.now
        if first is None:
            first = now
        elif now > plays_until + 1e-9:
            gaps.append(now - plays_until)
        plays_until = max(now, plays_until or now) + chunk.duration_s
    assert first is not None
    return first, gaps


@settings(max_examples=200, deadline=None)
@given(frames=st.integers(8, 400), rate=st.floats(0.25, 0.97), seed=st.integers(0, 1000))
def test_smooth_plays_through_a_slow_machine_without_a_gap(frames, rate, seed):
    first, gaps = play(frames, rate, "smooth", jitter=0.05, seed=seed)
    assert gaps == [], (first, gaps)
    length = frames * FRAME_S
    # The earliest gapless start ends playback as generation ends; the pacer takes the rate 10 %
    # lower than measured (near real time a small error in it is a large one in the shortfall).
    ideal = 0.2 + length / (0.9 * rate) - length
    assert first <= 1.1 * ideal + 1.0, (first, ideal)


@settings(max_examples=100, deadline=None)
@given(frames=st.integers(30, 400), rate=st.floats(0.25, 0.8))
def test_eager_stutters_where_the_machine_is_slow(frames, rate):
    first, gaps = play(frames, rate, "eager")
    assert first <= 0.2 + FRAME_S / rate + 0.02 and len(gaps) >= 2  # the first chunk plays as it comes


def test_auto_plays_at_once_where_the_machine_keeps_ahead():
    first, gaps = play(200, 3.0, "auto")
    assert gaps == [] and first < 0.2 + 4 * FRAME_S / 3.0  # as soon as the second chunk tells the rate
    shared = SpeechRate(realtime=3.0)  # measured by earlier sentences: not even that wait
    first, gaps = play(200, 3.0, "auto", shared=shared)
    assert gaps == [] and first < 0.2 + 2 * FRAME_S / 3.0
    # Just ahead of real time, the first chunks (1, 2, 4 frames) outrun generation by a little;
    # smooth holds the margin that covers it.
    first, gaps = play(200, 1.2, "smooth")
    assert gaps == [] and first < 0.2 + 0.8


def test_an_estimate_too_short_holds_again_instead_of_stuttering():
    """The text says half of what is spoken: the output runs dry once, then holds by the rule
    again, so a listener hears one pause or two, not one per chunk."""
    _, eager_gaps = play(300, 0.5, "eager")
    _, gaps = play(300, 0.5, "smooth", estimate=0.5)
    assert len(gaps) <= 2 < len(eager_gaps)


def test_the_rate_is_learnt_from_finished_sentences():
    rate = SpeechRate()
    rate.sentence(audio_s=2.0, wall_s=4.0, frames=25, tokens=5)
    assert rate.realtime == 0.5 and 4.0 < rate.frames_per_token < 5.0
    rate.sentence(audio_s=2.0, wall_s=2.0, frames=25, tokens=5)
    assert 0.5 < rate.realtime < 1.0
    with pytest.raises(ValueError, match="playback"):
        Pacer("later")
