"""Speaking rate: a streaming time stretcher for speech that keeps the pitch (WSOLA).

Waveform-similarity overlap-add (Verhelst and Roelands, 1993): the output is built from Hann
windows of 20 ms placed every 10 ms; the window for output time t is taken from the input near
t * speed, shifted by up to 10 ms (a pitch period of a voice down to 50 Hz) to where it best continues the
previous window, so the periods line up and the pitch stays. Durations are exact: n input samples
give round(n / speed) output samples.

It streams: `feed` returns what is final so far, 30 ms of input behind (`lookahead`; 60 ms at speed 4);
`finish` the rest. Speed 1.0 passes the samples through untouched. Why this rather than a library
(Rubber Band, TDHS, audiotsm) is measured in docs/performance.md ("Speaking rate").
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MAX_SPEED", "MIN_SPEED", "Stretcher", "check_speed", "stretch"]

MIN_SPEED = 0.25
MAX_SPEED = 4.0


def check_speed(speed: object) -> float:
    """`speed` as a float, or a ValueError saying what is allowed."""
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not MIN_SPEED <= speed <= MAX_SPEED:
        raise ValueError(f"speed must be a number from {MIN_SPEED} to {MAX_SPEED} (1.0 is the natural rate), "
                         f"got {speed!r}")
    return float(speed)


class Stretcher:
    """Changes the rate of a stream of mono float samples by `speed` (2.0: twice as fast)."""

    def __init__(self, speed: float, sample_rate: int, *, window_s: float = 0.020, search_s: float = 0.010):
        self.speed = check_speed(speed)
        self._hop = max(1, round(window_s * sample_rate / 2))  # output hop; windows overlap by half
        self._n = 2 * self._hop
        self._tol = max(0, round(search_s * sample_rate))
        self._window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(self._n) / self._n)).astype(np.float32)
        # Input held from absolute index _base; it starts with silence before sample 0 so that the
        # first window (centred on 0) and the search around it read defined samples.
        pad = self._hop + self._tol
        self._buffer = np.zeros(pad, np.float32)
        self._base = -pad
        self._fed = 0
        self._frame = 0  # the next window's number; window k is centred on output k * hop
        self._previous: int | None = None  # where in the input the last window started
        self._tail = np.zeros(self._hop, np.float32)  # the last window's second half, still to be summed
        self._emitted = 0
        self._finished = False

    @property
    def lookahead(self) -> int:
        """At most this many input samples have no output yet after a `feed` (the added latency):
        30 ms of input, up to 60 ms at speed 4."""
        return self._n + self._tol + max(0, math.ceil(self._hop * self.speed) - self._hop)

    def feed(self, samples: np.ndarray) -> np.ndarray:
        """Takes the next input samples; returns the output that is final so far."""
        if self._finished:
            raise RuntimeError("the stretcher was finished")
        samples = np.asarray(samples, np.float32).reshape(-1)
        if self.speed == 1.0:
            self._fed += len(samples)
            return samples
        self._buffer = np.concatenate([self._buffer, samples])
        self._fed += len(samples)
        return self._run(self._base + len(self._buffer))

    def chunk(self, samples: np.ndarray, last: bool) -> np.ndarray:
        """`feed`, and `finish` with it when `samples` end the stream: a streamed chunk at speed."""
        out = self.feed(samples)
        return np.concatenate([out, self.finish()]) if last else out

    def finish(self) -> np.ndarray:
        """The rest of the output: the total is round(input samples / speed)."""
        if self._finished:
            return np.zeros(0, np.float32)
        self._finished = True
        if self.speed == 1.0:
            return np.zeros(0, np.float32)
        total = round(self._fed / self.speed)
        pieces = []
        while self._emitted < total:
            # Silence after the end lets the last windows be placed; what it adds is cut off.
            self._buffer = np.concatenate([self._buffer, np.zeros(self._n + self._tol + self._hop, np.float32)])
            pieces.append(self._run(self._base + len(self._buffer)))
        out = np.concatenate(pieces) if pieces else np.zeros(0, np.float32)
        excess = self._emitted - total
        return out[:len(out) - excess] if excess > 0 else out

    def _nominal(self, frame: int) -> int:
        return round(frame * self._hop * self.speed) - self._hop  # where window `frame` starts, unshifted

    def _run(self, available: int) -> np.ndarray:
        out: list[np.ndarray] = []
        hop, n, tol = self._hop, self._n, self._tol
        while True:
            start = self._nominal(self._frame)
            lo, hi = max(self._base, start - tol), start + tol
            if self._previous is None:
                lo = hi = start
            need = hi + n
            if self._previous is not None:
                need = max(need, self._previous + hop + n)
            if need > available:
                break
            chosen = lo if lo == hi else self._best(lo, hi)
            segment = self._buffer[chosen - self._base:chosen - self._base + n]
            weighted = segment * self._window
            # Window k covers output [(k - 1) hop, (k + 1) hop): its first half completes the previous
            # window's second half (no later window reaches it); window 0's lies before sample 0.
            if self._frame > 0:
                out.append(self._tail + weighted[:hop])
                self._emitted += hop
            self._tail = weighted[hop:]
            self._previous = chosen
            self._frame += 1
        self._trim()
        return np.concatenate(out) if out else np.zeros(0, np.float32)

    def _best(self, lo: int, hi: int) -> int:
        """The start in [lo, hi] whose window best continues the previous one (normalized correlation)."""
        assert self._previous is not None
        n = self._n
        at = self._previous + self._hop - self._base
        template = self._buffer[at:at + n]
        region = self._buffer[lo - self._base:hi - self._base + n]
        correlation = np.correlate(region, template, mode="valid")
        squares = np.concatenate([[0.0], np.cumsum(region.astype(np.float64) ** 2)])
        energy = squares[n:] - squares[:-n]
        score = correlation / np.sqrt(energy + 1e-9 * n)
        return lo + int(np.argmax(score))

    def _trim(self) -> None:
        """Drops input no later window can read."""
        keep = self._nominal(self._frame) - self._tol
        if self._previous is not None:
            keep = min(keep, self._previous + self._hop)
        drop = keep - self._base
        if drop > 4096:
            self._buffer = self._buffer[drop:]
            self._base = keep


def stretch(samples: np.ndarray, speed: float, sample_rate: int) -> np.ndarray:
    """All of `samples` at `speed`, at once."""
    stretcher = Stretcher(speed, sample_rate)
    return stretcher.chunk(samples, last=True)
