"""The streaming vocoder for OpenVINO: one decode step with its state as explicit inputs and outputs.

`StreamingStep` re-expresses `CodecDecoder.decode` with fixed-size state, so that the step exports
to a graph whose only dynamic dimension is the number of frames per call (1 up to a bound; a
1-frame call costs a quarter of a padded 5-frame one, and a 5-frame call as much as in a fully
static graph). A `valid` input says where the real frames end, so that the state moves on by those
only: a caller may still pad, and the graph stays correct either way. The attention window always holds `window - 1`
key/value slots (slots before the stream's start are masked out instead of absent),
transposed-conv overlap tails start as zeros instead of missing, and the frame position is a tensor.
The layers themselves are the torch modules' own forwards; only the state plumbing and the
pre-transformer's position handling are written here.
"""

from __future__ import annotations

import math
from typing import cast

import torch
from torch import nn

from hearth.model.codec import (
    CausalConv,
    CausalTransConv,
    CodecDecoder,
    CodecState,
    PreTransformer,
    SnakeBeta,
    _History,
    _KVWindow,
    _Overlap,
    _WindowAttention,
)

__all__ = ["StreamingStep", "initial_state"]


class _PolynomialSnake(SnakeBeta):
    """SnakeBeta with sin^2 from a polynomial: the runtime's sine is a slow scalar kernel on CPUs.

    sin^2 has period pi, so x is first reduced to r = x - k*pi in [-pi/2, pi/2]; an odd Taylor
    polynomial to r^15 then gives sin(r) within 1e-9 (below float32 resolution).
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        alpha = torch.exp(self.alpha[None, :, None])
        beta = torch.exp(self.beta[None, :, None])
        z = x * alpha
        r = z - torch.round(z * (1 / torch.pi)) * torch.pi
        r2 = r * r
        poly = torch.full_like(r2, -1.0 / 1307674368000)  # -1/15!
        for k in (13, 11, 9, 7, 5, 3):
            poly = poly * r2 + (-1) ** ((k - 1) // 2) / math.factorial(k)
        sine = r * (poly * r2 + 1.0)
        return x + (1.0 / (beta + 1e-9)) * (sine * sine)


class _ValidHistory(_History):
    """A causal conv's history for a chunk padded to a fixed length: of its `frames` frames only the
    first `valid` are real, so the history is taken where the real input ends."""

    def __init__(self, tail: torch.Tensor, valid: torch.Tensor, frames: int):
        super().__init__(tail)
        self.valid, self.frames = valid, frames

    def advance(self, full: torch.Tensor, left: int) -> None:
        per_frame = (full.shape[-1] - left) // self.frames  # samples per frame at this layer
        end = self.valid * per_frame  # real samples in this chunk
        self.tail = full.index_select(-1, end + torch.arange(left))


class _ValidOverlap(_Overlap):
    """A transposed conv's overlap for a padded chunk: padding contributes nothing to it."""

    def __init__(self, tail: torch.Tensor, valid: torch.Tensor, frames: int):
        super().__init__(tail)
        self.valid, self.frames = valid, frames

    def _end(self, n: int) -> torch.Tensor:
        return self.valid * (n // self.frames)

    def input(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        return x * (torch.arange(n) < self._end(n)).to(x.dtype)

    def advance(self, blocks: torch.Tensor, n: int) -> None:
        self.tail = blocks.index_select(0, self._end(n) + torch.arange(blocks.shape[0] - n))


class _ValidKVWindow(_KVWindow):
    """An attention window for a padded chunk: it moves on by the real frames only."""

    def __init__(self, k: torch.Tensor, v: torch.Tensor, valid: torch.Tensor):
        super().__init__(k, v)
        self.valid = valid

    def advance(self, keys: torch.Tensor, values: torch.Tensor, keep: int) -> None:
        index = self.valid + torch.arange(keep)  # the window holds `keep` slots before the chunk
        self.k, self.v = keys.index_select(2, index), values.index_select(2, index)


def _stateful_modules(decoder: CodecDecoder) -> list[nn.Module]:
    out: list[nn.Module] = []
    for m in decoder.modules():
        conv = isinstance(m, CausalConv) and m.left > 0
        trans = isinstance(m, CausalTransConv) and m.overlap > 0
        if conv or trans or isinstance(m, _WindowAttention):
            out.append(m)
    return out


def initial_state(decoder: CodecDecoder, dtype: torch.dtype = torch.float32) -> list[torch.Tensor]:
    """The state tensors of a fresh stream, in `StreamingStep`'s order (zeros everywhere)."""
    states: list[torch.Tensor] = []
    for m in _stateful_modules(decoder):
        if isinstance(m, CausalConv):
            states.append(torch.zeros(1, m.conv.in_channels, m.left, dtype=dtype))
        elif isinstance(m, CausalTransConv):
            _, cout, _ = m.conv.weight.shape
            states.append(torch.zeros(m.taps - 1, cout, m.stride, dtype=dtype))
        else:
            attn = cast(_WindowAttention, m)
            shape = (1, attn.num_kv_heads, attn.window - 1, attn.head_dim)
            states += [torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype)]
    return states


class StreamingStep(nn.Module):
    """forward(codes [N, Q] int64, position [] int64, valid [] int64, *state) -> (audio [N * upsample],
    *new state). N may vary from call to call when exported with a dynamic frame dimension."""

    def __init__(self, decoder: CodecDecoder, polynomial_sine: bool = True):
        """Takes over `decoder` (with `polynomial_sine`, its activations are switched in place)."""
        super().__init__()
        self.decoder = decoder
        if polynomial_sine:
            for m in decoder.modules():
                if type(m) is SnakeBeta:
                    m.__class__ = _PolynomialSnake
        self.stateful = _stateful_modules(decoder)
        pre = decoder.pre_transformer
        self.inv_freq: torch.Tensor
        self.register_buffer("inv_freq", pre.rotary.inv_freq.clone(), persistent=False)

    def _codec_state(self, state: tuple[torch.Tensor, ...], valid: torch.Tensor, frames: int) -> CodecState:
        states: dict[nn.Module, object] = {}
        i = 0
        for m in self.stateful:
            if isinstance(m, CausalConv):
                states[m] = _ValidHistory(state[i], valid, frames)
                i += 1
            elif isinstance(m, CausalTransConv):
                states[m] = _ValidOverlap(state[i], valid, frames)
                i += 1
            else:
                states[m] = _ValidKVWindow(state[i], state[i + 1], valid)
                i += 2
        return CodecState(states)

    def _collect(self, state: CodecState) -> list[torch.Tensor]:
        out: list[torch.Tensor] = []
        for m in self.stateful:
            s = state[m]
            if isinstance(s, _History):
                out.append(s.tail)
            elif isinstance(s, _Overlap):
                assert s.tail is not None
                out.append(s.tail)
            else:
                kv = cast(_KVWindow, s)
                out += [kv.k, kv.v]
        return out

    def _pre_transformer(self, pre: PreTransformer, x: torch.Tensor, position: torch.Tensor,
                         state: CodecState) -> torch.Tensor:
        n = x.shape[1]
        window = pre.window
        h = pre.input_proj(x)
        q_pos = position + torch.arange(n)
        freqs = (self.inv_freq[:, None] @ q_pos.to(torch.float32)[None, :]).transpose(0, 1)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(h.dtype), emb.sin().to(h.dtype)
        k_pos = position - (window - 1) + torch.arange(window - 1 + n)
        q = q_pos[:, None]
        k = k_pos[None, :]
        mask = (k <= q) & (k > q - window) & (k >= 0)  # [n, window - 1 + n]
        for layer in pre.layers:
            h = layer(h, cos, sin, mask, state)
        return pre.output_proj(pre.norm(h))

    def forward(
        self, codes: torch.Tensor, position: torch.Tensor, valid: torch.Tensor, *state: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        """codes [N, Q] of which the first `valid` frames are real (the rest padding, whose audio
        is to be dropped): the state advances by `valid` frames."""
        d = self.decoder
        codec_state = self._codec_state(state, valid, codes.shape[0])
        audio = d.layers(codes, codec_state, lambda h, s: self._pre_transformer(d.pre_transformer, h, position, s))
        return (audio, *self._collect(codec_state))
