"""Audio into the listening models' form: channels mixed down, any common rate resampled to 16 kHz.

The resampler is a windowed-sinc (Kaiser) polyphase filter in numpy, its weights and sums computed
with the same rounding on every CPU (`fixed_math`). Between rates whose ratio
reduces to L/M (24 kHz -> 16 kHz is 2/3, 44.1 kHz -> 16 kHz is 160/441), output sample n lies at
input position n*M/L; it is the sum of the input around that position weighted by a low-pass sinc
whose cutoff is the lower rate's Nyquist frequency (less a transition band), windowed over
`ZERO_CROSSINGS` of its lobes either side. The weights are one table of L rows (computed per
output instead for ratios with more than `_MAX_PHASES` phases; none to 16 kHz has). Measured
(tests/test_listen_audio_in.py): a tone at 9 kHz resampled from 22.05 to 48 kHz down to 16 kHz is
below -90 dB; a 3 kHz tone comes through within 1e-4 of the ideal.

`Resampler` carries its state across chunks (the input still needed by later outputs, and where
the next output lies), so audio that arrives in pieces (a Wyoming stream) gives exactly the samples
of the whole: "chunked equals whole". The signal is taken as silent before its start and after its
end; n input samples give ceil(n * L / M) outputs.
"""

from __future__ import annotations

from functools import lru_cache
from math import gcd

import numpy as np

from hearth.errors import InputError
from hearth.listen import fixed_math

__all__ = ["MAX_CHANNELS", "MAX_RATE", "MIN_RATE", "Resampler", "check_rate", "mix_down", "resample"]

MIN_RATE, MAX_RATE = 4000, 384000  # what is taken: telephone audio to studio rates
MAX_CHANNELS = 32
ZERO_CROSSINGS = 24  # lobes of the sinc kept either side of its centre
_ROLLOFF = 0.945  # the cutoff as a share of the lower Nyquist frequency: the transition band's room
_BETA = 9.0  # Kaiser window's shape: ~90 dB stopband
_MAX_PHASES = 16000  # more phases than this: weights computed per output, not tabled (any rate to 16 kHz
# has at most 16000: a table of at most ~9 MB)
_BLOCK = 65536  # outputs computed at once


def check_rate(rate: object) -> int:
    """A sample rate the listening path takes (a whole number of Hz in [MIN_RATE, MAX_RATE])."""
    if isinstance(rate, bool) or not isinstance(rate, (int, np.integer)) or not MIN_RATE <= int(rate) <= MAX_RATE:
        raise InputError(f"a sample rate of {rate!r} Hz is not taken: give audio at {MIN_RATE} to {MAX_RATE} Hz "
                         "(8000, 16000, 22050, 24000, 44100 and 48000 are usual)", "audio")
    return int(rate)


def mix_down(audio: np.ndarray) -> np.ndarray:
    """Mono float32 samples: a 1-D array as it is; a 2-D one as [samples, channels] (soundfile's and
    WAV's layout) or, when its first axis is the shorter, [channels, samples] (librosa's), its
    channels averaged."""
    a = np.asarray(audio)
    if a.ndim == 1:
        return a
    if a.ndim != 2:
        raise InputError(f"audio of shape {a.shape}: give samples, or [samples, channels]", "audio")
    frames_first = a.shape[0] >= a.shape[1]
    channels = a.shape[1] if frames_first else a.shape[0]
    if channels > MAX_CHANNELS:
        raise InputError(f"audio of shape {a.shape}: {channels} channels; at most {MAX_CHANNELS} are mixed down "
                         "(give [samples, channels])", "audio")
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise InputError(f"audio of dtype {a.dtype}: give numbers (float samples in [-1, 1])", "audio")
    columns = a.astype(np.float64) if frames_first else a.T.astype(np.float64)
    total = columns[:, 0].copy()
    for c in range(1, channels):  # (added in channel order: a reduction's order is its kernel's choice)
        total += columns[:, c]
    return (total / channels).astype(np.float32)


def _kaiser(x: np.ndarray) -> np.ndarray:
    """The window at x in [-1, 1] (0 outside)."""
    inside = np.clip(1.0 - x * x, 0.0, None)
    return np.where(np.abs(x) <= 1.0, fixed_math.i0(_BETA * np.sqrt(inside)) / fixed_math.i0(np.array(_BETA)), 0.0)


class _Filter:
    """The low-pass for a ratio L/M: `taps` weights per output, by the output's phase."""

    def __init__(self, up: int, down: int):
        self.up, self.down = up, down
        self.cutoff = _ROLLOFF * min(1.0, up / down)  # of the input's Nyquist frequency
        self.half = ZERO_CROSSINGS / self.cutoff  # the filter's reach either side, in input samples
        self.width = int(np.ceil(self.half))
        self.taps = 2 * self.width
        # tap j of an output at input position floor(t) + d stands at k = floor(t) - width + 1 + j,
        # a distance t - k = d + width - 1 - j from it
        self._offsets = (self.width - 1 - np.arange(self.taps)).astype(np.float64)
        # [taps, phases]: a tap's weights for every phase side by side, gathered per tap
        self.table = np.ascontiguousarray(self._weights(np.arange(up) / up).T) if up <= _MAX_PHASES else None

    def _weights(self, fractions: np.ndarray) -> np.ndarray:
        x = fractions[:, None] + self._offsets[None, :]
        return (self.cutoff * fixed_math.sinc(self.cutoff * x) * _kaiser(x / self.half)).astype(np.float32)

    def apply(self, signal: np.ndarray, first: np.ndarray, phases: np.ndarray) -> np.ndarray:
        """Each output's weighted sum of `signal` from index `first` on ([n] float64): tap by tap
        in order (a dot product's order is its kernel's choice), with no [n, taps] array gathered."""
        computed = None if self.table is not None else self._weights(phases / self.up)  # [n, taps]
        acc = np.zeros(first.shape[0], np.float64)
        for j in range(self.taps):
            weight = self.table[j][phases] if self.table is not None else computed[:, j]  # type: ignore[index]
            acc += weight.astype(np.float64) * signal[first + j]
        return acc


@lru_cache(maxsize=8)
def _filter(up: int, down: int) -> _Filter:
    return _Filter(up, down)


class Resampler:
    """`rate` -> `target`, chunk by chunk: `push(samples)` gives the outputs that the input so far
    fixes, `finish()` the rest (the input after its end taken as silence)."""

    def __init__(self, rate: int, target: int):
        rate, target = check_rate(rate), int(target)
        g = gcd(rate, target)
        self.up, self.down = target // g, rate // g
        self.identity = self.up == self.down
        self._filter = _filter(self.up, self.down) if not self.identity else None
        width = self._filter.width if self._filter is not None else 0
        self._buffer = np.zeros(width, np.float32)  # input from index `_start` on (zeros before 0)
        self._start = -width
        self._seen = 0  # input samples pushed
        self._next = 0  # the next output's index

    def push(self, samples: np.ndarray) -> np.ndarray:
        x = np.asarray(samples, np.float32).reshape(-1)
        if self.identity:
            return x.copy()
        self._buffer = np.concatenate((self._buffer, x))
        self._seen += x.shape[0]
        assert self._filter is not None
        # output n needs input up to floor(n*M/L) + width: ready while that index < seen
        last = self._seen - self._filter.width  # floor(n*M/L) must be below this
        ready = -(-last * self.up // self.down) if last > 0 else 0  # outputs with floor(n*M/L) < last
        return self._emit(ready)

    def finish(self) -> np.ndarray:
        """The outputs still owed: ceil(input * L / M) in all."""
        if self.identity:
            return np.zeros(0, np.float32)
        assert self._filter is not None
        self._buffer = np.concatenate((self._buffer, np.zeros(self._filter.width + 1, np.float32)))
        return self._emit(-(-self._seen * self.up // self.down))

    def _emit(self, upto: int) -> np.ndarray:
        f = self._filter
        assert f is not None
        out = []
        while self._next < upto:
            n = np.arange(self._next, min(upto, self._next + _BLOCK), dtype=np.int64)
            position = n * self.down
            base = position // self.up - f.width + 1 - self._start  # the first tap's index in the buffer
            out.append(f.apply(self._buffer, base, position % self.up))
            self._next = int(n[-1]) + 1
        keep = (self._next * self.down) // self.up - f.width + 1  # the next output's first tap
        if keep > self._start:
            self._buffer = self._buffer[keep - self._start :]
            self._start = keep
        return np.concatenate(out).astype(np.float32) if out else np.zeros(0, np.float32)


def resample(samples: np.ndarray, rate: int, target: int) -> np.ndarray:
    """Mono `samples` at `rate` as samples at `target` (float32; ceil(n * target / rate) of them)."""
    r = Resampler(rate, target)
    head = r.push(samples)
    return np.concatenate((head, r.finish()))
