"""Building blocks shared by the talker, the code predictor and the codec decoder.

Every forward here reproduces the official computation operation for operation (same op order,
same fp32 islands), because Hearth's codes must equal the official model's bit for bit: a single
differently rounded logit can flip a sampled token and every frame after it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hearth.checkpoint.config import TransformerConfig

__all__ = ["Attention", "DecoderLayer", "GatedMLP", "KVCache", "RMSNorm", "Rotary", "embedding_table", "rotate_half"]


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(dtype)


def embedding_table(rows: int, dim: int) -> nn.Embedding:
    """An `nn.Embedding` left uninitialised, for weights that are loaded next. (Its usual random
    initialisation, on the meta device, makes torch import its compiler: 1.2 s of start-up.)"""
    return nn.Embedding.from_pretrained(torch.empty(rows, dim), freeze=False)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Rotary:
    """cos/sin tables for standard rotate-half RoPE, computed in fp32 and grown on demand.

    The talker's interleaved M-RoPE reduces to this for text-only input (its three position rows are
    equal). Each table entry is one fp32 product position * inv_freq, as in the official forward.
    """

    def __init__(self, head_dim: int, theta: float):
        exponent = torch.arange(0, head_dim, 2, dtype=torch.int64, device="cpu").to(torch.float32) / head_dim
        self.inv_freq = 1.0 / (theta**exponent)  # [head_dim/2]
        empty = torch.empty(0, head_dim, device="cpu")
        # One tuple, replaced whole when it grows: sessions on other threads read it meanwhile.
        self._tables = (empty, empty)

    def _grow(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        n = max(n, 2 * self._tables[0].shape[0], 256)
        pos = torch.arange(n, dtype=torch.float32, device="cpu")[None, :]  # [1, n]
        freqs = (self.inv_freq[:, None] @ pos).transpose(0, 1)  # [n, head_dim/2]
        emb = torch.cat((freqs, freqs), dim=-1)
        self._tables = (emb.cos(), emb.sin())
        return self._tables

    def get(self, start: int, length: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        cos, sin = self._tables
        if start + length > cos.shape[0]:
            cos, sin = self._grow(start + length)
        return cos[start : start + length].to(dtype), sin[start : start + length].to(dtype)  # [length, head_dim]


class KVCache:
    """Per-layer key/value buffers of fixed capacity, filled in place.

    Buffers are allocated once per stream (capacity grows by doubling only if exceeded), so a step
    never re-concatenates the whole history.
    """

    def __init__(self, num_layers: int, num_kv_heads: int, head_dim: int, capacity: int, dtype: torch.dtype):
        self.num_layers = num_layers
        self.shape = (1, num_kv_heads, capacity, head_dim)
        self.dtype = dtype
        self.k = [torch.empty(self.shape, dtype=dtype) for _ in range(num_layers)]
        self.v = [torch.empty(self.shape, dtype=dtype) for _ in range(num_layers)]
        self.length = 0

    @property
    def capacity(self) -> int:
        return self.shape[2]

    def reset(self) -> None:
        self.length = 0

    def _ensure(self, needed: int) -> None:
        if needed <= self.capacity:
            return
        cap = max(needed, 2 * self.capacity)
        self.shape = (self.shape[0], self.shape[1], cap, self.shape[3])
        for buffers in (self.k, self.v):
            for i, old in enumerate(buffers):
                new = torch.empty(self.shape, dtype=self.dtype)
                new[:, :, : self.length] = old[:, :, : self.length]
                buffers[i] = new

    def append(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store k, v ([1, kv_heads, n, head_dim]) after the current length; return the full views."""
        n = k.shape[2]
        end = self.length + n
        self._ensure(end)
        self.k[layer][:, :, self.length : end] = k
        self.v[layer][:, :, self.length : end] = v
        return self.k[layer][:, :, :end], self.v[layer][:, :, :end]

    def advance(self, n: int) -> None:
        """Called once per forward, after every layer has appended its n new positions."""
        self.length += n


class Attention(nn.Module):
    """Grouped-query self-attention with per-head q/k RMSNorm (Qwen3)."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.num_heads = cfg.num_heads
        self.num_kv_heads = cfg.num_kv_heads
        self.head_dim = cfg.head_dim
        self.scale = cfg.head_dim**-0.5
        self.q_proj = nn.Linear(cfg.hidden_size, cfg.num_heads * cfg.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, cfg.num_kv_heads * cfg.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, cfg.num_kv_heads * cfg.head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.num_heads * cfg.head_dim, cfg.hidden_size, bias=False)
        self.q_norm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps)
        self.k_norm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps)

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, cache: KVCache, layer: int
    ) -> torch.Tensor:
        b, n, _ = x.shape
        q = self.q_norm(self.q_proj(x).view(b, n, -1, self.head_dim)).transpose(1, 2)  # [b, H, n, d]
        k = self.k_norm(self.k_proj(x).view(b, n, -1, self.head_dim)).transpose(1, 2)  # [b, KV, n, d]
        v = self.v_proj(x).view(b, n, -1, self.head_dim).transpose(1, 2)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        keys, values = cache.append(layer, k, v)
        # A prompt from position 0 is plain causal and a step sees the whole cache: no mask. Several
        # positions after kept ones (a live transcription's prompt after the positions it shares
        # with the last, `hearth.listen.reuse`) see those and the causal part of their own: the
        # mask aligned to the end (`is_causal` aligns it to the start).
        mask = None
        if 1 < n < keys.shape[2]:
            mask = torch.ones(n, keys.shape[2], dtype=torch.bool).tril(keys.shape[2] - n)
        out = F.scaled_dot_product_attention(
            q, keys, values, attn_mask=mask, is_causal=n > 1 and mask is None, scale=self.scale,
            enable_gqa=self.num_heads != self.num_kv_heads,
        )
        out = out.transpose(1, 2).contiguous().reshape(b, n, -1)
        return self.o_proj(out)


class GatedMLP(nn.Module):
    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.self_attn = Attention(cfg)
        self.mlp = GatedMLP(cfg.hidden_size, cfg.intermediate_size)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, cache: KVCache, layer: int
    ) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, cache, layer)
        return x + self.mlp(self.post_attention_layernorm(x))


class DecoderStack(nn.Module):
    """Layers + final norm; holds the rotary table. Input embeddings are the caller's business."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.cfg = cfg
        self.layers = nn.ModuleList([DecoderLayer(cfg) for _ in range(cfg.num_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.rotary = Rotary(cfg.head_dim, cfg.rope_theta)

    def new_cache(self, capacity: int, dtype: torch.dtype) -> KVCache:
        return KVCache(self.cfg.num_layers, self.cfg.num_kv_heads, self.cfg.head_dim, capacity, dtype)

    def forward(self, x: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """x: [1, n, hidden] at positions cache.length .. cache.length + n - 1; returns normed hidden."""
        n = x.shape[1]
        cos, sin = self.rotary.get(cache.length, n, x.dtype)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, cache, i)
        cache.advance(n)
        return self.norm(x)
