"""Test signals at 16 kHz: noise, a rising sine sweep, silence, speech-like bursts."""

from __future__ import annotations

import numpy as np

RATE = 16000


def noise(seconds: float, seed: int = 0, level: float = 0.1) -> np.ndarray:
    return (level * np.random.default_rng(seed).standard_normal(int(seconds * RATE))).astype(np.float32)


def sweep(seconds: float, low: float = 100.0, high: float = 7000.0, level: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    rate = (high - low) / max(seconds, 1e-9)
    return (level * np.sin(2 * np.pi * (low * t + rate * t * t / 2))).astype(np.float32)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), np.float32)


def bursts(seconds: float, seed: int = 0) -> np.ndarray:
    """Noise bursts between quiet gaps: loud and near-silent frames in one signal."""
    rng = np.random.default_rng(seed)
    out = 1e-4 * rng.standard_normal(int(seconds * RATE))
    at = 0
    while at < out.shape[0]:
        length = int(rng.uniform(0.1, 0.6) * RATE)
        out[at : at + length] += rng.uniform(0.05, 0.8) * rng.standard_normal(min(length, out.shape[0] - at))
        at += length + int(rng.uniform(0.05, 0.4) * RATE)
    return out.astype(np.float32)


SIGNALS = {
    "noise": lambda s: noise(s, 1),
    "sweep": sweep,
    "silence": silence,
    "bursts": lambda s: bursts(s, 2),
}


_VOWELS = ((730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240), (530, 1840, 2480), (570, 840, 2410))


def voiced(seconds: float, seed: int = 0, level: float = 0.3) -> np.ndarray:
    """Speech-like enough for a voice activity detector: a glottal pulse train (f0 about 120 Hz,
    wandering) through three vowel formants that change every 150 ms, at four syllables a second.
    Silero VAD gives it 0.5-1.0 and silence or noise 0."""
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    f0 = 120 + 30 * np.sin(2 * np.pi * 0.7 * t) + rng.normal(0, 2, n).cumsum() / 200
    pulses = (np.diff(np.floor(np.cumsum(f0 / RATE)), prepend=0) > 0).astype(np.float64)
    out = np.zeros(n)
    step = int(0.15 * RATE)
    for at in range(0, n, step):
        piece = pulses[at : at + step]
        freqs = np.fft.rfftfreq(piece.size, 1 / RATE)
        shape = sum(1.0 / (1.0 + ((freqs - f) / bw) ** 2) for f, bw in zip(_VOWELS[rng.integers(5)], (80, 100, 120),
                                                                             strict=True))
        out[at : at + step] = np.fft.irfft(np.fft.rfft(piece) * shape, piece.size)
    out *= 0.5 + 0.5 * np.sin(2 * np.pi * 4 * t)
    return (level * out / max(np.abs(out).max(), 1e-12)).astype(np.float32)
