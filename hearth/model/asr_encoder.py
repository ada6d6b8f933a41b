"""The audio encoder of Qwen3-ASR and Qwen3-ForcedAligner: log-mel features in, one embedding per
~80 ms out, at the decoder's width.

The features are cut into chunks of 2 * n_window frames (100 in the released models); every chunk
goes through three stride-2 convolutions on its own, starting its sinusoidal positions at 0. The
chunks' outputs are joined and a transformer attends within windows of n_window_infer frames (8 s
in the released models), never across them: what qwen-asr's flash-attention and vLLM paths do with
their `cu_seqlens`. (Its transformers path on the CPU, with `sdpa` or `eager` attention, never
passes the window mask it builds and attends over the whole input; for input within one window the
two agree. docs/listen.md has the evidence.)

Every step keeps the official operation order and shapes (zero-padded chunk batches split by
`conv_chunksize`, two-dimensional [tokens, width] activations), so the fp32 output equals the
official one bit for bit within a window.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from hearth.checkpoint.asr_config import AudioEncoderConfig, conv_output_length

__all__ = ["AudioEncoder", "sinusoids"]


def sinusoids(length: int, channels: int, max_timescale: float = 10000.0) -> torch.Tensor:
    """[length, channels]: sines then cosines of geometric timescales, computed in fp32 as the official
    module computes them (the increment in float64, everything after it in float32)."""
    increment = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-increment * torch.arange(channels // 2, device="cpu").float())
    scaled = torch.arange(length, device="cpu")[:, None] * inv[None, :]
    return torch.cat([torch.sin(scaled), torch.cos(scaled)], dim=1)


class EncoderAttention(nn.Module):
    def __init__(self, cfg: AudioEncoderConfig):
        super().__init__()
        self.num_heads = cfg.num_heads
        self.scale = cfg.head_dim**-0.5
        d = cfg.d_model
        self.q_proj = nn.Linear(d, d, bias=True)
        self.k_proj = nn.Linear(d, d, bias=True)
        self.v_proj = nn.Linear(d, d, bias=True)
        self.out_proj = nn.Linear(d, d, bias=True)

    def forward(self, x: torch.Tensor, windows: list[int]) -> torch.Tensor:
        n = x.shape[0]
        q = self.q_proj(x).reshape(n, self.num_heads, -1).transpose(0, 1).unsqueeze(0)  # [1, H, n, hd]
        k = self.k_proj(x).reshape(n, self.num_heads, -1).transpose(0, 1).unsqueeze(0)
        v = self.v_proj(x).reshape(n, self.num_heads, -1).transpose(0, 1).unsqueeze(0)
        parts, start = [], 0
        for length in windows:  # each window attends to itself alone, as flash-attention's varlen does
            end = start + length
            parts.append(F.scaled_dot_product_attention(q[:, :, start:end], k[:, :, start:end], v[:, :, start:end],
                                                        scale=self.scale))
            start = end
        out = parts[0] if len(parts) == 1 else torch.cat(parts, dim=2)
        out = out.transpose(1, 2).contiguous().reshape(n, -1).contiguous()
        return self.out_proj(out)


class EncoderLayer(nn.Module):
    def __init__(self, cfg: AudioEncoderConfig):
        super().__init__()
        self.self_attn = EncoderAttention(cfg)
        self.self_attn_layer_norm = nn.LayerNorm(cfg.d_model)
        self.fc1 = nn.Linear(cfg.d_model, cfg.ffn_dim)
        self.fc2 = nn.Linear(cfg.ffn_dim, cfg.d_model)
        self.final_layer_norm = nn.LayerNorm(cfg.d_model)

    def forward(self, x: torch.Tensor, windows: list[int]) -> torch.Tensor:
        x = x + self.self_attn(self.self_attn_layer_norm(x), windows)
        h = self.fc2(F.gelu(self.fc1(self.final_layer_norm(x))))
        x = x + h
        if x.dtype == torch.float16:  # as the official layer: keep fp16 activations finite
            limit = torch.finfo(x.dtype).max - 1000
            x = torch.clamp(x, min=-limit, max=limit)
        return x


class AudioEncoder(nn.Module):
    """Attribute names follow the checkpoint's tensors (`thinker.audio_tower.` prefix)."""

    def __init__(self, cfg: AudioEncoderConfig):
        super().__init__()
        self.cfg = cfg
        c = cfg.conv_channels
        self.conv2d1 = nn.Conv2d(1, c, 3, 2, padding=1)
        self.conv2d2 = nn.Conv2d(c, c, 3, 2, padding=1)
        self.conv2d3 = nn.Conv2d(c, c, 3, 2, padding=1)
        self.conv_out = nn.Linear(cfg.conv_features, cfg.d_model, bias=False)
        self.layers = nn.ModuleList([EncoderLayer(cfg) for _ in range(cfg.num_layers)])
        self.ln_post = nn.LayerNorm(cfg.d_model)
        self.proj1 = nn.Linear(cfg.d_model, cfg.d_model)
        self.proj2 = nn.Linear(cfg.d_model, cfg.output_dim)
        # Not a checkpoint tensor: made here, on the CPU, whatever device the module is built on.
        self.positions = sinusoids(cfg.max_source_positions, cfg.d_model, 10000.0)

    def convolve(self, features: torch.Tensor, longest: int | None = None) -> torch.Tensor:
        """features [mel, frames] -> [tokens, d_model]: each chunk convolved, positioned, trimmed
        (chunks zero-padded to `longest` frames, by default the longest of them)."""
        cfg = self.cfg
        lengths = cfg.chunk_lengths(features.shape[1])
        longest = longest or max(lengths)
        batch = features.new_zeros(len(lengths), 1, cfg.num_mel_bins, longest)  # zero-padded, as pad_sequence
        start = 0
        for i, n in enumerate(lengths):
            batch[i, 0, :, :n] = features[:, start : start + n]
            start += n
        outs = []
        for part in batch.split(cfg.conv_chunksize, dim=0):
            h = F.gelu(self.conv2d1(part))
            h = F.gelu(self.conv2d2(h))
            outs.append(F.gelu(self.conv2d3(h)))
        h = torch.cat(outs, dim=0)  # [chunks, channels, mel', steps]
        b, c, f, t = h.shape
        h = self.conv_out(h.permute(0, 3, 1, 2).contiguous().view(b, t, c * f))  # [chunks, steps, d_model]
        if t > self.positions.shape[0]:
            raise ValueError(f"a chunk gives {t} steps, beyond max_source_positions {self.positions.shape[0]}")
        h = h + self.positions[:t].unsqueeze(0).to(device=h.device, dtype=h.dtype)
        return torch.cat([h[i, : conv_output_length(n)] for i, n in enumerate(lengths)], dim=0)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """features [mel, frames] (one audio) -> embeddings [tokens, output_dim]."""
        return self.transform(self.convolve(features), features.shape[1])

    def transform(self, x: torch.Tensor, frames: int) -> torch.Tensor:
        """The convolutions' steps of `frames` mel frames -> embeddings, each window attending to itself."""
        windows = self.cfg.window_lengths(frames)
        for layer in self.layers:
            x = layer(x, windows)
        x = self.ln_post(x)
        return self.proj2(F.gelu(self.proj1(x)))
