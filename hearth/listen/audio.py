"""The audio a Qwen3 listening model takes: mono float samples at 16 kHz, checked, scaled into
[-1, 1] as qwen-asr scales them, and long recordings cut where they are quietest.

Resampling other rates is not built in yet: `prepare_audio` refuses them and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hearth.errors import InputError

__all__ = ["SAMPLE_RATE", "AudioPiece", "prepare_audio", "split_long_audio"]

SAMPLE_RATE = 16000  # what the feature extractor of every released checkpoint takes
MIN_PIECE_SECONDS = 0.5  # pieces of a cut recording shorter than this are padded with silence (qwen-asr)
_SEARCH_SECONDS = 5.0  # a cut is sought this far either side of the longest allowed piece
_QUIET_WINDOW_SECONDS = 0.1  # the span whose summed magnitude finds the quietest place


@dataclass(frozen=True)
class AudioPiece:
    """Part of a recording: its samples and where they start in it."""

    samples: np.ndarray  # float32, mono
    offset: float  # seconds from the recording's start


def prepare_audio(audio: np.ndarray, sample_rate: int, min_samples: int = 1) -> np.ndarray:
    """Samples ready for the feature extractor: float32, mono, finite, at SAMPLE_RATE, at least
    `min_samples` long; scaled down by their peak when it exceeds 1 and clipped to [-1, 1] (what
    qwen-asr does to every input, so integer PCM given as numbers is scaled by its own peak)."""
    if sample_rate != SAMPLE_RATE:
        raise InputError(f"audio at {sample_rate} Hz: Qwen3-ASR takes {SAMPLE_RATE} Hz; resample it first "
                         f"(e.g. soxr.resample(audio, {sample_rate}, {SAMPLE_RATE}))", "audio")
    a = np.asarray(audio)
    if a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)  # one channel, as a column or a row
    if a.ndim != 1:
        raise InputError(f"audio of shape {a.shape}: give one channel (mono); mix it down first, e.g. "
                         "audio.mean(axis=1) for samples x channels", "audio")
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise InputError(f"audio of dtype {a.dtype}: give numbers (float samples in [-1, 1])", "audio")
    if a.size < max(min_samples, 1):
        raise InputError(f"audio of {a.size} samples ({1000 * a.size / SAMPLE_RATE:.1f} ms): give at least "
                         f"{max(min_samples, 1)} samples at {SAMPLE_RATE} Hz", "audio")
    a = a.astype(np.float32)
    if not np.isfinite(a).all():
        raise InputError("audio holds NaN or infinite samples", "audio")
    peak = float(np.max(np.abs(a)))
    if peak > 1.0:
        a = a / np.float32(peak)
    return np.clip(a, -1.0, 1.0)


def _quietest(samples: np.ndarray, window: int) -> int:
    """Index of the quietest sample inside the quietest `window`-long span of `samples`."""
    magnitude = np.abs(samples)
    sums = np.convolve(magnitude, np.ones(window, dtype=np.float32), mode="valid")
    start = int(np.argmin(sums))
    return start + int(np.argmin(magnitude[start : start + window]))


def split_long_audio(samples: np.ndarray, max_seconds: float, sample_rate: int = SAMPLE_RATE) -> list[AudioPiece]:
    """The recording whole when it lasts at most `max_seconds`; else pieces of about that length,
    each cut at the quietest place within 5 s before or after the limit (so a piece may run 5 s
    over it), as qwen-asr cuts them. The pieces join back into the recording exactly; those shorter
    than 0.5 s are then padded with silence at their end."""
    total = int(samples.shape[0])
    if total / float(sample_rate) <= max_seconds:
        return [AudioPiece(samples, 0.0)]
    longest = int(max_seconds * sample_rate)
    reach = int(_SEARCH_SECONDS * sample_rate)
    window = max(4, int(_QUIET_WINDOW_SECONDS * sample_rate))
    pieces, start, offset = [], 0, 0.0
    while total - start > longest:
        limit = start + longest
        left, right = max(start, limit - reach), min(total, limit + reach)
        cut = limit if right - left <= window else left + _quietest(samples[left:right], window)
        cut = min(max(cut, start + 1), total)
        pieces.append(AudioPiece(samples[start:cut], offset))
        offset += (cut - start) / float(sample_rate)  # summed piece by piece, as qwen-asr sums it
        start = cut
    pieces.append(AudioPiece(samples[start:], offset))
    shortest = int(MIN_PIECE_SECONDS * sample_rate)
    return [AudioPiece(np.pad(p.samples, (0, shortest - p.samples.shape[0])).astype(np.float32), p.offset)
            if p.samples.shape[0] < shortest else p for p in pieces]
