"""`speed`: the speaking rate changes, the pitch does not, it streams, and 1.0 is untouched.

The stretcher is checked on a speech-like signal made here (glottal pulses at a gliding pitch through
vowel formants, with pauses), whose pitch and timing are known; the engine's and the scheduler's
speed on a tiny random checkpoint's audio (which has no pitch to measure) by what they must equal.
The servers' speed is tested with their clients in test_serve.py and test_websocket.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hearth.engine import InputError
from hearth.runtime.scheduler import Scheduler
from hearth.streaming.stretch import Stretcher, check_speed, stretch

RATE = 24000


def voiced(seconds: float, f0_from: float, f0_to: float, formants=(700, 1200, 2600), seed: int = 0) -> np.ndarray:
    """Glottal pulses whose pitch glides from f0_from to f0_to, through three formant resonators."""
    from scipy.signal import lfilter

    n = int(seconds * RATE)
    f0 = np.linspace(f0_from, f0_to, n)
    phase = np.cumsum(f0 / RATE)
    pulses = np.diff(np.floor(phase), prepend=0.0)  # one impulse per period
    x = pulses + 0.01 * np.random.default_rng(seed).standard_normal(n)
    for f in formants:
        r = math.exp(-math.pi * 90 / RATE)
        x = lfilter([1 - r], [1, -2 * r * math.cos(2 * math.pi * f / RATE), r * r], x)
    return (0.5 * x / np.max(np.abs(x))).astype(np.float32)


def speech_like() -> np.ndarray:
    """Two 'syllables' of 0.5 s (pitch 110 -> 150 Hz, then 220 -> 180 Hz) with 0.25 s pauses."""
    pause = np.zeros(RATE // 4, np.float32)
    return np.concatenate([pause, voiced(0.5, 110, 150), pause, voiced(0.5, 220, 180, (500, 1800, 2500)), pause])


def pitch(x: np.ndarray) -> float:
    """The f0 (Hz) of a voiced stretch, by the autocorrelation peak between 60 and 400 Hz."""
    x = x - x.mean()
    ac = np.correlate(x, x, mode="full")[len(x) - 1:]
    lo, hi = RATE // 400, RATE // 60
    lag = lo + int(np.argmax(ac[lo:hi]))
    return RATE / lag


def test_check_speed():
    assert check_speed(2) == 2.0 and check_speed(0.25) == 0.25 and check_speed(4.0) == 4.0
    for bad in (0.2, 4.01, True, "2", None, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="0.25 to 4.0"):
            check_speed(bad)


def test_speed_one_is_untouched():
    x = speech_like()
    s = Stretcher(1.0, RATE)
    out = np.concatenate([s.feed(x[:1000]), s.feed(x[1000:]), s.finish()])
    assert out.tobytes() == x.tobytes()


@pytest.mark.parametrize("speed", [0.25, 0.5, 0.8, 1.25, 2.0, 4.0])
def test_pitch_stays_and_timing_scales(speed):
    x = speech_like()
    y = stretch(x, speed, RATE)
    assert len(y) == round(len(x) / speed)
    # Each syllable: its middle 0.2 s at the input, against the same moment of the output.
    for start, f0_mid in ((0.25, 130.0), (1.0, 200.0)):
        a = int((start + 0.15) * RATE)
        b = int((start + 0.35) * RATE)
        assert pitch(x[a:b]) == pytest.approx(f0_mid, rel=0.04)
        got = pitch(y[round(a / speed):round(b / speed)])
        assert got == pytest.approx(f0_mid, rel=0.04), (speed, start, got)
    # The pauses stay where they belong: the output is silent at the scaled middle of each pause.
    for pause_mid in (0.125, 0.875, 1.625):
        at = round(pause_mid * RATE / speed)
        quiet = y[max(0, at - 100):at + 100]
        assert np.sqrt(np.mean(quiet ** 2)) < 1e-3, (speed, pause_mid)
    # The loudness is kept (no fading where windows overlap).
    loud = lambda v: np.sqrt(np.mean(v ** 2))  # noqa: E731
    assert loud(y) * math.sqrt(len(y)) == pytest.approx(loud(x) * math.sqrt(len(x)) / math.sqrt(speed), rel=0.15)


@settings(max_examples=25, deadline=None)
@given(speed=st.floats(0.25, 4.0), cuts=st.lists(st.integers(1, 6000), min_size=1, max_size=12),
       length=st.integers(0, 30000))
def test_streaming_equals_whole_and_lengths_are_exact(speed, cuts, length):
    x = voiced(length / RATE, 120, 160, seed=length) if length else np.zeros(0, np.float32)
    whole = stretch(x, speed, RATE)
    s = Stretcher(speed, RATE)
    pieces, at = [], 0
    for cut in cuts * 4:
        pieces.append(s.feed(x[at:at + cut]))
        at += cut
    pieces.append(s.feed(x[at:]))
    pieces.append(s.finish())
    streamed = np.concatenate(pieces)
    assert len(whole) == round(len(x) / speed)
    assert streamed.tobytes() == whole.tobytes()


def test_output_follows_input_closely():
    """A chunk's output comes out with it, but for about 30 ms of input (`lookahead`): the first
    audio is later by that much at most, never by a chunk."""
    x = voiced(1.0, 100, 140)
    for speed in (0.25, 0.5, 2.0, 4.0):
        for size in (1920, 9600):
            s = Stretcher(speed, RATE)
            out = len(s.feed(x[:size]))
            held_input = size - out * speed  # the input whose output is not out yet
            assert 0 <= held_input <= s.lookahead, (speed, size, held_input)


def test_scheduler_speed_stretches_each_sentence(engine):
    """A request at speed 2 is each sentence of the same request at 1.0, stretched as one stream
    (`stretch`), chunk by chunk without waiting for the sentence's end; 1.0 is the default's bytes."""
    text = "Good morning to you. Here is the second sentence."
    with Scheduler(engine) as scheduler:
        def run(**kw):
            request = scheduler.submit(text, "ryan", "english", seed=11, max_new_tokens=14, **kw)
            return list(request)

        plain, one, fast, slow = run(), run(speed=1.0), run(speed=2.0), run(speed=0.5)
        assert [c.samples.tobytes() for c in one] == [c.samples.tobytes() for c in plain]
        for stretched, speed in ((fast, 2.0), (slow, 0.5)):
            assert [c.sentence_end for c in stretched] == [c.sentence_end for c in plain]
            assert all(len(c.samples) for c in stretched)  # every chunk carries audio, the first one too
            for sentence in (0, 1):
                source = np.concatenate([c.samples for c in plain if c.sentence == sentence])
                got = np.concatenate([c.samples for c in stretched if c.sentence == sentence])
                assert got.tobytes() == stretch(source, speed, RATE).tobytes()
        with pytest.raises(InputError, match="0.25 to 4.0") as info:
            scheduler.submit(text, "ryan", speed=5)
        assert info.value.param == "speed"  # the option at fault, named once where it is checked
        with pytest.raises(InputError, match="0.25 to 4.0"):
            scheduler.open("ryan", speed="fast")
        for kwargs, param in (({"voice": "nobody"}, "voice"), ({"language": "klingon"}, "language"),
                              ({"seed": -1}, "seed"), ({"text_mode": "sideways"}, "text_mode"),
                              ({"max_new_tokens": 0}, "max_new_tokens"), ({"text": "?!"}, "text")):
            with pytest.raises(InputError) as info:
                scheduler.submit(**{"text": text, "voice": "ryan", **kwargs})
            assert info.value.param == param, (kwargs, info.value)


def test_engine_stream_and_synthesize_speed(engine):
    base = engine.synthesize("Hello there.", "ryan", "english", seed=3, max_new_tokens=12)
    quick = engine.synthesize("Hello there.", "ryan", "english", seed=3, max_new_tokens=12, speed=1.5)
    assert quick.samples.tobytes() == stretch(base.samples, 1.5, RATE).tobytes()
    assert np.array_equal(quick.codes, base.codes)
    with pytest.raises(InputError, match="0.25 to 4.0"):
        engine.stream("Hello there.", "ryan", speed=0.1)
