"""The rotary tables a compiled talker is fed at run time, in numpy (the runtime needs no torch).

The same rotate-half cos/sin as the reference's `hearth.model.layers.Rotary`: each angle is one
float32 product position * inv_freq, as in the official forward; cos and sin are taken in float64
and rounded once (torch's own float32 cos/sin may differ from them in the last bit).
"""

from __future__ import annotations

import numpy as np

__all__ = ["RotaryTable"]


class RotaryTable:
    """cos/sin [length, head_dim] from a start position, grown on demand (doubling)."""

    def __init__(self, head_dim: int, theta: float):
        exponent = np.arange(0, head_dim, 2, dtype=np.float32) / np.float32(head_dim)
        self.inv_freq = (np.float32(1.0) / np.power(np.float32(theta), exponent)).astype(np.float32)
        empty = np.empty((0, head_dim), np.float32)
        # One tuple, replaced whole when it grows: sessions on other threads read it meanwhile.
        self._tables = (empty, empty)

    def _grow(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        n = max(n, 2 * self._tables[0].shape[0], 256)
        freqs = np.arange(n, dtype=np.float32)[:, None] * self.inv_freq[None, :]  # [n, head_dim/2] float32
        angles = np.concatenate((freqs, freqs), axis=-1).astype(np.float64)
        self._tables = (np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32))
        return self._tables

    def get(self, start: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        cos, sin = self._tables
        if start + length > cos.shape[0]:
            cos, sin = self._grow(start + length)
        return cos[start : start + length], sin[start : start + length]
