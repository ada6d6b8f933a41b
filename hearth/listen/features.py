"""Log-mel features in numpy, as qwen-asr's processor computes them (transformers'
WhisperFeatureExtractor on its torch path): a centred STFT with reflected edges and a periodic Hann
window, power spectra with the last frame dropped, Slaney mel filters up to 8 kHz, log10 floored at
1e-10 and at 8 below the audio's maximum, then (x + 4) / 4.

The same bits on every CPU: the window, the filters, the projection onto them and the logarithm are
computed with arithmetic whose rounding no SIMD level changes (`fixed_math`), and numpy's FFT is
built for the baseline instruction set, the same code on every x86 level (`make test-cpus`
compares the features at each). The spectra are computed in float64 where the official computes
in float32, so features differ from the official ones by that computation's own rounding: below
1e-5 on speech-like input, more in bins far below their frame's loudest, where float32's rounding
is a larger share (1e-4 seven decades of power down; tests/test_listen_features.py measures it).
The mel filters equal transformers' where numpy's exp and log are the C library's, as on AVX2
(on AVX-512 numpy's own differ by an ulp, and transformers' filters by up to 2e-16).
"""

from __future__ import annotations

import math

import numpy as np

from hearth.checkpoint.asr_config import FeatureConfig
from hearth.listen import fixed_math

__all__ = ["LogMel", "hann_window", "mel_filters"]

_MAX_HZ = 8000.0  # WhisperFeatureExtractor's filters stop here whatever the sample rate
_BLOCK = 2048  # frames transformed at once: bounds the float64 work arrays for long recordings


def _hz_to_mel(hz: np.ndarray) -> np.ndarray:
    """Slaney's mel scale: linear (3 mels per 200 Hz) below 1 kHz, logarithmic above."""
    per_log = 27.0 / math.log(6.4)  # mels per natural-log unit of frequency above 1 kHz
    logs = fixed_math.scalar(math.log, np.maximum(hz, 1e-10) / 1000.0)
    return np.where(hz >= 1000.0, 15.0 + logs * per_log, 3.0 * hz / 200.0)


def _mel_to_hz(mel: np.ndarray) -> np.ndarray:
    step = math.log(6.4) / 27.0
    return np.where(mel >= 15.0, 1000.0 * fixed_math.scalar(math.exp, step * (mel - 15.0)), 200.0 * mel / 3.0)


def mel_filters(bins: int, n_fft: int, sample_rate: int) -> np.ndarray:
    """[n_fft // 2 + 1, bins] float64: triangles evenly spaced in Slaney mels over 0 .. 8 kHz, each
    scaled to unit area (Slaney normalisation)."""
    low, high = _hz_to_mel(np.array([0.0, _MAX_HZ]))
    edges = _mel_to_hz(np.linspace(low, high, bins + 2))
    freqs = np.linspace(0, sample_rate // 2, n_fft // 2 + 1)
    widths = np.diff(edges)
    offsets = edges[None, :] - freqs[:, None]  # [freq, edge]
    rising = -offsets[:, :-2] / widths[:-1]
    falling = offsets[:, 2:] / widths[1:]
    triangles = np.maximum(0.0, np.minimum(rising, falling))
    return triangles * (2.0 / (edges[2 : bins + 2] - edges[:bins]))[None, :]


def hann_window(length: int) -> np.ndarray:
    """The periodic Hann window as torch makes it: float32 angles, then 0.5 - 0.5 cos (within an ulp)."""
    angles = np.arange(length + 1, dtype=np.float32) * np.float32(2.0 * np.pi / length)
    cosines = fixed_math.scalar(math.cos, angles).astype(np.float32)
    return (cosines * np.float32(-0.5) + np.float32(0.5))[:length]


class LogMel:
    """One checkpoint's front end (preprocessor_config.json): samples at `cfg.sampling_rate` ->
    features [bins, frames] float32, frames = samples // hop_length."""

    def __init__(self, cfg: FeatureConfig):
        self.cfg = cfg
        filters = mel_filters(cfg.feature_size, cfg.n_fft, cfg.sampling_rate).T  # [bins, freq]
        # Each filter is a triangle over a few neighbouring frequencies: their indices and weights,
        # [bins, width] (a narrower one padded with weight 0), summed in order (`_project`).
        spans = [np.flatnonzero(row) for row in filters]
        width = max(1, *(len(i) for i in spans))
        self._band_at = np.zeros((len(spans), width), np.intp)
        self._band_weight = np.zeros((len(spans), width), np.float64)
        for b, i in enumerate(spans):
            self._band_at[b, : len(i)] = i
            self._band_weight[b, : len(i)] = filters[b, i]
        self.window = hann_window(cfg.n_fft).astype(np.float64)
        # The reflected edge must lie inside the audio (torch.stft refuses shorter input).
        self.min_samples = cfg.n_fft // 2 + 1

    def frames(self, samples: int) -> int:
        return samples // self.cfg.hop_length

    def __call__(self, samples: np.ndarray) -> np.ndarray:
        n_fft, hop = self.cfg.n_fft, self.cfg.hop_length
        if samples.ndim != 1 or samples.shape[0] < self.min_samples:
            raise ValueError(f"features need mono audio of at least {self.min_samples} samples")
        padded = np.pad(samples.astype(np.float32), n_fft // 2, mode="reflect")
        count = self.frames(samples.shape[0])  # the STFT's last frame is dropped
        mel = np.empty((self._band_at.shape[0], count), np.float32)
        offsets = np.arange(n_fft)[None, :]
        for start in range(0, count, _BLOCK):
            stop = min(start + _BLOCK, count)
            rows = padded[offsets + hop * np.arange(start, stop)[:, None]].astype(np.float64) * self.window
            spectra = np.fft.rfft(rows, axis=1)  # [frames, freq]
            power = np.ascontiguousarray((spectra.real * spectra.real + spectra.imag * spectra.imag).T)
            mel[:, start:stop] = self._project(power).astype(np.float32)
        log = fixed_math.log10(np.maximum(mel, np.float32(1e-10))).astype(np.float32)
        log = np.maximum(log, log.max() - np.float32(8.0))
        return (log + np.float32(4.0)) / np.float32(4.0)

    def _project(self, power: np.ndarray) -> np.ndarray:
        """[freq, frames] power -> [bins, frames] mel energies: each filter's weighted sum over its
        frequencies, added in their order (a matrix product's order is its kernel's choice)."""
        out = np.zeros((self._band_at.shape[0], power.shape[1]), np.float64)
        for j in range(self._band_at.shape[1]):
            out += self._band_weight[:, j, None] * power[self._band_at[:, j]]
        return out
