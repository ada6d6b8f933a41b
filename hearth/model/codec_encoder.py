"""The speech tokenizer's encoder: reference audio -> codes [frames, 16], for cloning in context.

The Base checkpoints' speech tokenizer keeps the encoder half of a Mimi-style codec: a causal
SEANet conv stack (24 kHz -> 25 Hz), an 8-layer causal transformer, a strided conv to 12.5 Hz, and
a split residual vector quantizer (one semantic codebook, then acoustic codebooks on the same
features; the first 16 codes are the talker's). Module and tensor names follow
speech_tokenizer/model.safetensors (`encoder.*`). It runs once per reference, on torch.
"""

from __future__ import annotations

import math
from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from hearth.checkpoint.config import CodecEncoderConfig
from hearth.model.layers import Rotary

__all__ = ["CodecEncoder"]


class _CausalConv(nn.Module):
    """A conv padded on the left by its reach (so that no output sees the future) and on the right
    up to a whole number of strides."""

    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int = 1, dilation: int = 1, bias: bool = True,
                 pad_mode: str = "constant"):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, kernel, stride, dilation=dilation, bias=bias)
        self.stride = stride
        self.left = (kernel - 1) * dilation + 1 - stride
        self.pad_mode = pad_mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = x.shape[-1]
        right = -length % self.stride
        return self.conv(F.pad(x, (self.left, right), mode=self.pad_mode))


class _ResidualUnit(nn.Module):
    def __init__(self, dim: int, hidden: int, kernel: int, dilation: int):
        super().__init__()
        # Indices 1 and 3 as in the checkpoint (0 and 2 are the parameter-free ELUs).
        self.block = nn.ModuleList([nn.ELU(), _CausalConv(dim, hidden, kernel, dilation=dilation), nn.ELU(),
                                    _CausalConv(hidden, dim, 1)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        for layer in self.block:
            h = layer(h)
        return x + h


class _ConvStack(nn.Module):
    def __init__(self, c: CodecEncoderConfig):
        super().__init__()
        layers: list[nn.Module] = [_CausalConv(1, c.num_filters, c.kernel_size)]
        width = c.num_filters
        for ratio in reversed(c.ratios):
            for j in range(c.num_residual_layers):
                layers.append(_ResidualUnit(width, width // c.compress, c.residual_kernel_size,
                                            c.dilation_growth_rate ** j))
            layers += [nn.ELU(), _CausalConv(width, 2 * width, 2 * ratio, stride=ratio)]
            width *= 2
        layers += [nn.ELU(), _CausalConv(width, c.hidden_size, c.last_kernel_size)]
        self.layers = nn.ModuleList(layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class _Scale(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scale * x


class _Attention(nn.Module):
    def __init__(self, c: CodecEncoderConfig):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = c.num_heads, c.num_kv_heads, c.head_dim
        self.q_proj = nn.Linear(c.hidden_size, c.num_heads * c.head_dim, bias=False)
        self.k_proj = nn.Linear(c.hidden_size, c.num_kv_heads * c.head_dim, bias=False)
        self.v_proj = nn.Linear(c.hidden_size, c.num_kv_heads * c.head_dim, bias=False)
        self.o_proj = nn.Linear(c.num_heads * c.head_dim, c.hidden_size, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q = self.q_proj(x).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, n, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, n, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        if self.kv_heads != self.heads:
            k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
            v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=n > 1)
        return self.o_proj(out.transpose(1, 2).reshape(b, n, -1))


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + turned * sin


class _MLP(nn.Module):
    def __init__(self, c: CodecEncoderConfig):
        super().__init__()
        self.fc1 = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.fc2 = nn.Linear(c.intermediate_size, c.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class _Layer(nn.Module):
    def __init__(self, c: CodecEncoderConfig):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(c.hidden_size, eps=c.norm_eps)
        self.self_attn = _Attention(c)
        self.self_attn_layer_scale = _Scale(c.hidden_size)
        self.post_attention_layernorm = nn.LayerNorm(c.hidden_size, eps=c.norm_eps)
        self.mlp = _MLP(c)
        self.mlp_layer_scale = _Scale(c.hidden_size)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn_layer_scale(self.self_attn(self.input_layernorm(x), cos, sin))
        return x + self.mlp_layer_scale(self.mlp(self.post_attention_layernorm(x)))


class _Transformer(nn.Module):
    def __init__(self, c: CodecEncoderConfig):
        super().__init__()
        self.layers = nn.ModuleList(_Layer(c) for _ in range(c.num_layers))
        self.rotary = Rotary(c.head_dim, c.rope_theta)  # the same fp32 products as the official forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cos, sin = self.rotary.get(0, x.shape[1], x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return x


class _Codebook(nn.Module):
    def __init__(self, size: int, dim: int):
        super().__init__()
        self.initialized: torch.Tensor
        self.cluster_usage: torch.Tensor
        self.embed_sum: torch.Tensor
        self.register_buffer("initialized", torch.ones(1))
        self.register_buffer("cluster_usage", torch.ones(size))
        self.register_buffer("embed_sum", torch.zeros(size, dim))

    def centroids(self) -> torch.Tensor:
        return self.embed_sum / self.cluster_usage.clamp(min=1e-5)[:, None]


class _VQ(nn.Module):
    def __init__(self, size: int, dim: int):
        super().__init__()
        self.codebook = _Codebook(size, dim)


class _RVQ(nn.Module):
    """Residual quantization: each codebook takes the nearest centroid to what the previous left."""

    def __init__(self, c: CodecEncoderConfig, count: int):
        super().__init__()
        self.layers = nn.ModuleList(_VQ(c.codebook_size, c.codebook_dim) for _ in range(count))
        self.input_proj = nn.Conv1d(c.hidden_size, c.codebook_dim, 1, bias=False)
        self.output_proj = nn.Conv1d(c.codebook_dim, c.hidden_size, 1, bias=False)  # the decoder's; unused here

    def encode(self, x: torch.Tensor, count: int) -> torch.Tensor:
        """x [B, hidden, T] -> codes [count, B, T]."""
        residual = self.input_proj(x)
        codes = []
        for vq in list(self.layers)[:count]:
            centroids = cast(_VQ, vq).codebook.centroids()
            flat = residual.permute(0, 2, 1)
            index = torch.cdist(flat.reshape(-1, flat.shape[-1])[None].float(), centroids[None].float(), p=2)[0]
            index = index.argmin(dim=-1).view(flat.shape[:-1])
            residual = residual - F.embedding(index, centroids).permute(0, 2, 1)
            codes.append(index)
        return torch.stack(codes)


class _SplitRVQ(nn.Module):
    def __init__(self, c: CodecEncoderConfig):
        super().__init__()
        self.semantic = c.num_semantic_quantizers
        self.semantic_residual_vector_quantizer = _RVQ(c, c.num_semantic_quantizers)
        self.acoustic_residual_vector_quantizer = _RVQ(c, c.num_quantizers - c.num_semantic_quantizers)

    def encode(self, x: torch.Tensor, count: int) -> torch.Tensor:
        codes = self.semantic_residual_vector_quantizer.encode(x, self.semantic)
        if count > self.semantic:
            acoustic = self.acoustic_residual_vector_quantizer.encode(x, count - self.semantic)
            codes = torch.cat([codes, acoustic], dim=0)
        return codes


class CodecEncoder(nn.Module):
    def __init__(self, c: CodecEncoderConfig):
        super().__init__()
        self.cfg = c
        self.encoder = _ConvStack(c)
        self.encoder_transformer = _Transformer(c)
        self.downsample = _CausalConv(c.hidden_size, c.hidden_size, 2 * c.downsample, stride=c.downsample,
                                      bias=False, pad_mode="replicate")
        self.quantizer = _SplitRVQ(c)

    def forward(self, audio: torch.Tensor) -> torch.Tensor:
        """audio [samples] float32 at 24 kHz -> codes [frames, valid_quantizers] int64, one frame per
        `samples_per_frame` samples (the last one partial)."""
        x = self.encoder(audio.to(self.downsample.conv.weight.dtype)[None, None])
        x = self.encoder_transformer(x.transpose(1, 2)).transpose(1, 2)
        codes = self.quantizer.encode(self.downsample(x), self.cfg.valid_quantizers)  # [Q, 1, T]
        frames = math.ceil(audio.shape[-1] / self.cfg.samples_per_frame)
        return codes[:, 0, :frames].transpose(0, 1)
