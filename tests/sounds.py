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



def voiced(seconds: float, seed: int = 0, level: float = 0.3) -> np.ndarray:
    """Speech-like enough for a voice activity detector (Silero scores it 0.5-1.0): the bench's own
    signal (hearth/tools/bench_listen_live.py)."""
    from hearth.tools.bench_listen_live import voiced as bench_voiced

    return bench_voiced(seconds, seed, level)
