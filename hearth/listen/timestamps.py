"""Times from the aligner's classes, as qwen-asr computes them.

Each unit has two `<timestamp>` positions (start, end); the head's best class there times
`timestamp_segment_time` is a time in ms. Those times should never go back; where they do, the
longest non-decreasing run is trusted (found as qwen-asr finds it, so that among equally long runs
the same one wins) and the others are repaired: a stretch of one or two is given the nearer trusted
neighbour's time (the earlier one on a tie), a longer stretch is spread evenly between its
neighbours (or takes the one it has). Times are whole milliseconds (truncated), reported in
seconds rounded to 3 places.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["TimedUnit", "class_times", "repair_monotonic", "timed_units"]


@dataclass(frozen=True)
class TimedUnit:
    """A unit of the text (a word, or one CJK character) and when it is said, in seconds."""

    text: str
    start: float
    end: float


def class_times(classes: np.ndarray, segment_ms: float) -> list[float]:
    """ms per position: class x segment, computed in float32 as the official torch product is."""
    return (np.asarray(classes).astype(np.float32) * np.float32(segment_ms)).tolist()


def _trusted(values: Sequence[float]) -> list[bool]:
    """Marks the longest non-decreasing subsequence: each position extends the longest run ending
    before it at a value not above its own (the first such run when several are as long), and the
    first position ending a longest run is followed back."""
    n = len(values)
    v = np.asarray(values, dtype=np.float64)
    length = np.ones(n, dtype=np.int64)
    parent = np.full(n, -1, dtype=np.int64)
    for i in range(1, n):
        runs = np.where(v[:i] <= v[i], length[:i], 0)
        j = int(np.argmax(runs))
        if runs[j]:
            length[i], parent[i] = runs[j] + 1, j
    keep = [False] * n
    i = int(np.argmax(length))
    while i != -1:
        keep[i] = True
        i = int(parent[i])
    return keep


def repair_monotonic(values: Sequence[float]) -> list[int]:
    """`values` (ms) made non-decreasing as qwen-asr repairs them, as whole milliseconds."""
    n = len(values)
    if n == 0:
        return []
    keep = _trusted(values)
    out = [float(x) for x in values]
    i = 0
    while i < n:
        if keep[i]:
            i += 1
            continue
        j = i
        while j < n and not keep[j]:
            j += 1
        left = next((out[k] for k in range(i - 1, -1, -1) if keep[k]), None)
        right = next((out[k] for k in range(j, n) if keep[k]), None)
        for k in range(i, j):
            if left is None or right is None:
                out[k] = left if right is None else right  # type: ignore[assignment]
            elif j - i <= 2:
                out[k] = left if k - (i - 1) <= j - k else right
            else:
                out[k] = left + (right - left) / (j - i + 1) * (k - i + 1)
        i = j
    return [int(x) for x in out]


def timed_units(units: Sequence[str], times_ms: Sequence[float]) -> tuple[TimedUnit, ...]:
    """Each unit with its repaired start and end (the positions' times, two per unit, in order)."""
    fixed = repair_monotonic(times_ms)
    return tuple(TimedUnit(u, round(fixed[2 * i] / 1000.0, 3), round(fixed[2 * i + 1] / 1000.0, 3))
                 for i, u in enumerate(units))
