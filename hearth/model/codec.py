"""The speech-tokenizer decoder: 16 codebooks per 80 ms frame -> 1920 samples at 24 kHz.

Every layer is causal, so the decoder streams: `start()` opens a `CodecState` holding each stateful
layer's private state (conv input histories, transposed-conv overlap tails, the attention window of
keys and values with its absolute position), and `decode(codes, state)` turns k frames into exactly
1920 * k samples, carrying that state. A whole-sequence decode is the same call on a fresh stream,
so any chunking concatenates to the whole decode; nothing is re-decoded and nothing is cross-faded.
Attribute names follow the checkpoint (`decoder.` prefix in speech_tokenizer/model.safetensors).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from hearth.checkpoint.config import CodecDecoderConfig
from hearth.model.layers import GatedMLP, RMSNorm, Rotary, rotate_half

__all__ = ["CodecDecoder", "CodecState"]


class CodecState:
    """The state of one decoding stream: per-layer state objects and the frames decoded so far."""

    def __init__(self, states: dict[nn.Module, object]):
        self.states = states
        self.frames = 0

    def __getitem__(self, layer: nn.Module):
        return self.states[layer]

    def fork(self) -> CodecState:
        """An independent copy: per-layer states only ever rebind their tensors, so copying the
        state objects (not the tensors) suffices."""
        other = CodecState({m: copy.copy(s) for m, s in self.states.items()})
        other.frames = self.frames
        return other


@dataclass
class _History:
    """The last `left` input samples of a causal conv (zeros before the stream starts)."""

    tail: torch.Tensor  # [1, C, left]

    def advance(self, full: torch.Tensor, left: int) -> None:
        """`full` = tail + this chunk's input; keep the last `left` samples."""
        self.tail = full[..., full.shape[-1] - left :]


@dataclass
class _Overlap:
    """A transposed conv's pre-bias output that overlaps the next chunk's first samples."""

    tail: torch.Tensor | None  # [kernel / stride - 1, C, stride], None until the first chunk

    def input(self, x: torch.Tensor) -> torch.Tensor:
        """This chunk's input as it may contribute to the carried overlap."""
        return x

    def advance(self, blocks: torch.Tensor, n: int) -> None:
        """`blocks` [n + taps - 1, C, stride]: keep the ones past this chunk's n input frames."""
        self.tail = blocks[n:]


class CausalConv(nn.Module):
    def __init__(self, cin: int, cout: int, kernel: int, dilation: int = 1, groups: int = 1):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, kernel, dilation=dilation, groups=groups)
        self.left = (kernel - 1) * dilation  # input samples of history each output needs

    def init_state(self, dtype: torch.dtype) -> _History | None:
        if self.left == 0:
            return None
        return _History(torch.zeros(1, self.conv.in_channels, self.left, dtype=dtype))

    def forward(self, x: torch.Tensor, state: CodecState) -> torch.Tensor:
        if self.left == 0:
            return self.conv(x)
        history: _History = state[self]
        full = torch.cat((history.tail, x), dim=-1)  # [1, C, left + n]
        history.advance(full, self.left)
        return self.conv(full)


class CausalTransConv(nn.Module):
    """Transposed conv whose output beyond n * stride (the overlap) is carried into the next chunk.

    Computed as one matrix product and an overlap-add of `kernel / stride` shifted blocks: the
    same sums as the library's transposed convolution, which on CPUs falls back to a slow generic
    kernel for these shapes (about a fifth of the vocoder's time).
    """

    def __init__(self, cin: int, cout: int, kernel: int, stride: int):
        super().__init__()
        if kernel % stride:
            raise ValueError(f"kernel {kernel} must be a multiple of stride {stride}")
        self.conv = nn.ConvTranspose1d(cin, cout, kernel, stride=stride)
        self.stride = stride
        self.taps = kernel // stride  # input frames that contribute to each output block
        self.overlap = kernel - stride  # output samples that spill into the next input frame

    def init_state(self, dtype: torch.dtype) -> _Overlap | None:
        return _Overlap(None) if self.overlap else None

    def forward(self, x: torch.Tensor, state: CodecState) -> torch.Tensor:
        cin, cout, kernel = self.conv.weight.shape
        n = x.shape[-1]
        overlap: _Overlap | None = state[self] if self.overlap else None
        if overlap is not None:
            x = overlap.input(x)
        # [n, cin] @ [cin, cout * kernel] -> every input frame's full kernel response
        y = (x[0].transpose(0, 1) @ self.conv.weight.reshape(cin, cout * kernel)).view(n, cout, self.taps, self.stride)
        # Overlap-add: tap t of input frame i lands in output block i + t.
        taps = y.unbind(2)
        blocks = F.pad(taps[0], (0, 0, 0, 0, 0, self.taps - 1))
        for t in range(1, self.taps):
            blocks = blocks + F.pad(taps[t], (0, 0, 0, 0, t, self.taps - 1 - t))
        if overlap is not None:
            if overlap.tail is not None:
                blocks = torch.cat((blocks[: self.taps - 1] + overlap.tail, blocks[self.taps - 1 :]))
            overlap.advance(blocks, n)  # [taps - 1, cout, stride], bias not yet added
        out = blocks[:n].permute(1, 0, 2).reshape(1, cout, n * self.stride)
        bias = self.conv.bias
        assert bias is not None
        return out + bias[None, :, None]


class SnakeBeta(nn.Module):
    """x + sin^2(x * e^alpha) / (e^beta + 1e-9), per channel."""

    def __init__(self, channels: int):
        super().__init__()
        self.alpha = nn.Parameter(torch.zeros(channels))
        self.beta = nn.Parameter(torch.zeros(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        alpha = torch.exp(self.alpha[None, :, None])
        beta = torch.exp(self.beta[None, :, None])
        return x + (1.0 / (beta + 1e-9)) * torch.pow(torch.sin(x * alpha), 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dwconv = CausalConv(dim, dim, 7, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor, state: CodecState) -> torch.Tensor:
        h = self.dwconv(x, state).permute(0, 2, 1)
        h = self.pwconv2(F.gelu(self.pwconv1(self.norm(h))))
        return x + (self.gamma * h).permute(0, 2, 1)


class ResidualUnit(nn.Module):
    def __init__(self, dim: int, dilation: int):
        super().__init__()
        self.act1 = SnakeBeta(dim)
        self.conv1 = CausalConv(dim, dim, 7, dilation=dilation)
        self.act2 = SnakeBeta(dim)
        self.conv2 = CausalConv(dim, dim, 1)

    def forward(self, x: torch.Tensor, state: CodecState) -> torch.Tensor:
        return x + self.conv2(self.act2(self.conv1(self.act1(x), state)), state)


class DecoderBlock(nn.Module):
    def __init__(self, cin: int, cout: int, rate: int):
        super().__init__()
        self.block = nn.ModuleList(
            [SnakeBeta(cin), CausalTransConv(cin, cout, 2 * rate, rate)]
            + [ResidualUnit(cout, d) for d in (1, 3, 9)]
        )

    def forward(self, x: torch.Tensor, state: CodecState) -> torch.Tensor:
        x = self.block[0](x)
        for layer in self.block[1:]:
            x = layer(x, state)
        return x


class _Codebook(nn.Module):
    def __init__(self, size: int, dim: int):
        super().__init__()
        self.cluster_usage = nn.Parameter(torch.ones(size))
        self.embedding_sum = nn.Parameter(torch.zeros(size, dim))

        self._table: torch.Tensor | None = None

    def table(self) -> torch.Tensor:
        """Codebook vectors (frozen weights, so computed once: 16 of them cost ~28 ms per decode)."""
        if torch.compiler.is_exporting():  # traced into the graph; a tensor kept now would be a stray attribute
            return self.embedding_sum / self.cluster_usage.clamp(min=1e-5)[:, None]
        if self._table is None or self._table.dtype != self.embedding_sum.dtype:
            with torch.inference_mode():
                self._table = self.embedding_sum / self.cluster_usage.clamp(min=1e-5)[:, None]
        return self._table


class _VQ(nn.Module):
    def __init__(self, size: int, dim: int):
        super().__init__()
        self._codebook = _Codebook(size, dim)


class _RVQLayers(nn.Module):
    def __init__(self, n: int, size: int, dim: int):
        super().__init__()
        self.layers = nn.ModuleList([_VQ(size, dim) for _ in range(n)])


class ResidualVQ(nn.Module):
    def __init__(self, n: int, size: int, dim: int, io_dim: int):
        super().__init__()
        self.vq = _RVQLayers(n, size, dim)
        self.input_proj = nn.Conv1d(io_dim, dim, 1, bias=False)  # encoder side; kept for the layout
        self.output_proj = nn.Conv1d(dim, io_dim, 1, bias=False)

    def decode(self, codes: torch.Tensor) -> torch.Tensor:
        """codes [1, n_q, T] -> [1, io_dim, T]"""
        acc: torch.Tensor | None = None
        for i, layer in enumerate(self.vq.layers):
            book = cast(_VQ, layer)._codebook
            q = F.embedding(codes[:, i], book.table()).transpose(1, 2)  # [1, dim, T]
            acc = q if acc is None else acc + q
        assert acc is not None, "a residual quantizer has at least one layer"
        return self.output_proj(acc)


class SplitRVQ(nn.Module):
    def __init__(self, cfg: CodecDecoderConfig):
        super().__init__()
        dim = cfg.codebook_dim // 2
        self.rvq_first = ResidualVQ(1, cfg.codebook_size, dim, cfg.codebook_dim)
        self.rvq_rest = ResidualVQ(cfg.num_quantizers - 1, cfg.codebook_size, dim, cfg.codebook_dim)

    def decode(self, codes: torch.Tensor) -> torch.Tensor:
        return self.rvq_first.decode(codes[:, :1]) + self.rvq_rest.decode(codes[:, 1:])


class _LayerScale(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))


@dataclass
class _KVWindow:
    """Keys (after RoPE) and values of the last `window - 1` frames of one attention layer."""

    k: torch.Tensor  # [1, heads, <= window - 1, head_dim]
    v: torch.Tensor

    def advance(self, keys: torch.Tensor, values: torch.Tensor, keep: int) -> None:
        """`keys`/`values`: the window + this chunk's; keep the last `keep` positions."""
        self.k, self.v = keys[:, :, -keep:], values[:, :, -keep:]


class _WindowAttention(nn.Module):
    def __init__(self, cfg: CodecDecoderConfig):
        super().__init__()
        self.head_dim = cfg.head_dim
        self.window = cfg.sliding_window
        inner = cfg.num_heads * cfg.head_dim
        kv = cfg.num_kv_heads * cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden_size, inner, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, kv, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, kv, bias=False)
        self.o_proj = nn.Linear(inner, cfg.hidden_size, bias=False)
        self.groups = cfg.num_heads // cfg.num_kv_heads
        self.num_kv_heads = cfg.num_kv_heads

    def init_state(self, dtype: torch.dtype) -> _KVWindow:
        empty = torch.zeros(1, self.num_kv_heads, 0, self.head_dim, dtype=dtype)
        return _KVWindow(empty, empty)

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor, state: CodecState
    ) -> torch.Tensor:
        b, n, _ = x.shape
        q = self.q_proj(x).view(b, n, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, n, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, n, -1, self.head_dim).transpose(1, 2)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        kv: _KVWindow = state[self]
        keys = torch.cat((kv.k, k), dim=2)
        values = torch.cat((kv.v, v), dim=2)
        keep = self.window - 1  # the next frame sees itself and the window - 1 before it
        kv.advance(keys, values, keep)
        out = F.scaled_dot_product_attention(
            q, keys, values, attn_mask=mask, scale=self.head_dim**-0.5, enable_gqa=self.groups > 1
        )
        return self.o_proj(out.transpose(1, 2).reshape(b, n, -1))


class _TransformerLayer(nn.Module):
    def __init__(self, cfg: CodecDecoderConfig):
        super().__init__()
        self.self_attn = _WindowAttention(cfg)
        self.mlp = GatedMLP(cfg.hidden_size, cfg.intermediate_size)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn_layer_scale = _LayerScale(cfg.hidden_size)
        self.mlp_layer_scale = _LayerScale(cfg.hidden_size)

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor, state: CodecState
    ) -> torch.Tensor:
        attn = self.self_attn(self.input_layernorm(x), cos, sin, mask, state)
        x = x + self.self_attn_layer_scale.scale * attn
        return x + self.mlp_layer_scale.scale * self.mlp(self.post_attention_layernorm(x))


class PreTransformer(nn.Module):
    """Sliding-window (causal, `window` frames including itself) transformer over frames."""

    def __init__(self, cfg: CodecDecoderConfig):
        super().__init__()
        self.window = cfg.sliding_window
        self.input_proj = nn.Linear(cfg.latent_dim, cfg.hidden_size)
        self.output_proj = nn.Linear(cfg.hidden_size, cfg.latent_dim)
        self.layers = nn.ModuleList([_TransformerLayer(cfg) for _ in range(cfg.num_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.rotary = Rotary(cfg.head_dim, cfg.rope_theta)

    def forward(self, x: torch.Tensor, state: CodecState) -> torch.Tensor:
        """x [1, n, latent] at absolute frames state.frames .. + n - 1 -> [1, n, latent]"""
        n = x.shape[1]
        start = state.frames
        h = self.input_proj(x)
        cos, sin = self.rotary.get(start, n, h.dtype)
        cached = min(start, self.window - 1)
        q_pos = torch.arange(start, start + n)[:, None]
        k_pos = torch.arange(start - cached, start + n)[None, :]
        mask = (k_pos <= q_pos) & (k_pos > q_pos - self.window)  # [n, cached + n]
        for layer in self.layers:
            h = layer(h, cos, sin, mask, state)
        return self.output_proj(self.norm(h))


class CodecDecoder(nn.Module):
    def __init__(self, cfg: CodecDecoderConfig):
        super().__init__()
        self.cfg = cfg
        self.quantizer = SplitRVQ(cfg)
        self.pre_conv = CausalConv(cfg.codebook_dim, cfg.latent_dim, 3)
        self.pre_transformer = PreTransformer(cfg)
        self.upsample = nn.ModuleList(
            [
                nn.ModuleList([CausalTransConv(cfg.latent_dim, cfg.latent_dim, f, f), ConvNeXtBlock(cfg.latent_dim)])
                for f in cfg.upsampling_ratios
            ]
        )
        blocks: list[nn.Module] = [CausalConv(cfg.latent_dim, cfg.decoder_dim, 7)]
        for i, rate in enumerate(cfg.upsample_rates):
            blocks.append(DecoderBlock(cfg.decoder_dim // 2**i, cfg.decoder_dim // 2 ** (i + 1), rate))
        out_dim = cfg.decoder_dim // 2 ** len(cfg.upsample_rates)
        blocks += [SnakeBeta(out_dim), CausalConv(out_dim, 1, 7)]
        self.decoder = nn.ModuleList(blocks)

    def start(self) -> CodecState:
        """A fresh stream: zero conv histories, no overlap tails, an empty attention window."""
        dtype = self.pre_conv.conv.weight.dtype
        states = {}
        for module in self.modules():
            init_state = getattr(module, "init_state", None)
            if init_state is not None:
                state = init_state(dtype)
                if state is not None:
                    states[module] = state
        return CodecState(states)

    def decode(self, codes: torch.Tensor, state: CodecState) -> torch.Tensor:
        """codes [n, n_q] (int) -> the next n * upsample samples of the stream, in [-1, 1]."""
        if codes.ndim != 2 or codes.shape[1] != self.cfg.num_quantizers or codes.shape[0] == 0:
            raise ValueError(
                f"expected codes of shape [frames >= 1, {self.cfg.num_quantizers}], got {tuple(codes.shape)}"
            )
        audio = self.layers(codes, state, self.pre_transformer)
        state.frames += codes.shape[0]
        return audio

    def layers(
        self, codes: torch.Tensor, state: CodecState,
        pre_transformer: Callable[[torch.Tensor, CodecState], torch.Tensor],
    ) -> torch.Tensor:
        """The layers in order, codes [n, n_q] -> samples, advancing `state` (not its frame
        count). `pre_transformer(h, state)` runs the attention stage: the module itself, or the
        OpenVINO step's version with an explicit position."""
        h = self.quantizer.decode(codes.T[None].clamp(min=0))  # [1, codebook_dim, n]
        h = self.pre_conv(h, state).transpose(1, 2)
        h = pre_transformer(h, state).permute(0, 2, 1)  # [1, latent, n]
        for pair in self.upsample:
            trans, block = cast(nn.ModuleList, pair)
            h = block(trans(h, state), state)
        h = self.decoder[0](h, state)
        for layer in self.decoder[1:-1]:
            h = layer(h, state) if isinstance(layer, DecoderBlock) else layer(h)
        h = self.decoder[-1](h, state)
        return h.clamp(min=-1, max=1)[0, 0]

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        """Whole-sequence decode: codes [T, n_q] -> waveform [T * upsample]."""
        return self.decode(codes, self.start())
