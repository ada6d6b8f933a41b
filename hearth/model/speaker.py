"""The Base checkpoints' speaker encoder: reference audio -> one speaker embedding (an x-vector).

An ECAPA-TDNN: a mel spectrogram (128 log-mel bands of 24 kHz audio, 1024-point frames every 256
samples) through a dilated 1-D conv, three squeeze-excitation Res2Net blocks, their outputs
joined, attentive statistics pooling over time (a weighted mean and standard deviation per
channel), and a 1x1 conv to the talker's hidden size. Its output stands where a built-in voice's
speaker-id embedding stands in the talker's prompt. Module and tensor names follow the checkpoint
(`speaker_encoder.*` in model.safetensors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from hearth.checkpoint.config import SpeakerEncoderConfig

__all__ = ["MelSettings", "SpeakerEncoder", "log_mel", "mel_filterbank"]


@dataclass(frozen=True)
class MelSettings:
    """The speaker encoder's input features, as the official pipeline computes them."""

    sample_rate: int = 24000
    n_fft: int = 1024
    hop: int = 256
    window: int = 1024
    n_mels: int = 128
    fmin: float = 0.0
    fmax: float = 12000.0


# The Slaney mel scale: linear below 1 kHz (3 mels per 200 Hz), logarithmic above.
_F_SP = 200.0 / 3
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOGSTEP = float(np.log(6.4)) / 27.0  # numpy's log throughout: the filters must round as librosa's do


def _hz_to_mel(hz: float) -> float:
    return hz / _F_SP if hz < _MIN_LOG_HZ else _MIN_LOG_MEL + float(np.log(hz / _MIN_LOG_HZ)) / _LOGSTEP


def _mel_to_hz(mels: np.ndarray) -> np.ndarray:
    hz = _F_SP * mels
    high = mels >= _MIN_LOG_MEL
    hz[high] = _MIN_LOG_HZ * np.exp(_LOGSTEP * (mels[high] - _MIN_LOG_MEL))
    return hz


def mel_filterbank(s: MelSettings) -> np.ndarray:
    """[n_mels, n_fft // 2 + 1] float32: triangular filters on the Slaney mel scale, each scaled to
    unit area (Slaney normalisation); computed in float64, rounded once to float32."""
    bins = np.fft.rfftfreq(s.n_fft, 1.0 / s.sample_rate)
    edges = _mel_to_hz(np.linspace(_hz_to_mel(s.fmin), _hz_to_mel(s.fmax), s.n_mels + 2))
    widths = np.diff(edges)
    distance = edges[:, None] - bins[None, :]  # [n_mels + 2, bins]
    rising = -distance[:-2] / widths[:-1, None]
    falling = distance[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(rising, falling)).astype(np.float32)
    area = 2.0 / (edges[2:] - edges[:-2])
    return (weights * area[:, None]).astype(np.float32)


def log_mel(audio: torch.Tensor, s: MelSettings = MelSettings()) -> torch.Tensor:
    """audio [samples] float32 at `s.sample_rate` -> log-mel [frames, n_mels]: reflect-padded so
    that frames are centred on hops, a periodic Hann window, magnitudes, natural log floored at 1e-5."""
    pad = (s.n_fft - s.hop) // 2
    x = F.pad(audio[None, None], (pad, pad), mode="reflect")[0]
    spectrum = torch.stft(x, s.n_fft, hop_length=s.hop, win_length=s.window, window=torch.hann_window(s.window),
                          center=False, normalized=False, onesided=True, return_complex=True)
    magnitude = torch.sqrt(torch.view_as_real(spectrum).pow(2).sum(-1) + 1e-9)  # [1, bins, frames]
    mels = torch.matmul(torch.from_numpy(mel_filterbank(s)), magnitude)
    return torch.log(torch.clamp(mels, min=1e-5))[0].transpose(0, 1)


class _Conv(nn.Module):
    """A 1-D conv padded to keep the length (reflecting the edges), then ReLU."""

    def __init__(self, c_in: int, c_out: int, kernel: int, dilation: int = 1):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, kernel, dilation=dilation, padding="same", padding_mode="reflect")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.conv(x))


class _Res2Net(nn.Module):
    """Channels split into `scale` groups; group i > 0 convolves itself plus group i-1's output."""

    def __init__(self, channels: int, scale: int, kernel: int, dilation: int):
        super().__init__()
        self.scale = scale
        width = channels // scale
        self.blocks = nn.ModuleList(_Conv(width, width, kernel, dilation) for _ in range(scale - 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        parts = list(torch.chunk(x, self.scale, dim=1))
        out = [parts[0]]
        previous: torch.Tensor | None = None
        for i in range(1, self.scale):
            previous = self.blocks[i - 1](parts[i] if previous is None else parts[i] + previous)
            out.append(previous)
        return torch.cat(out, dim=1)


class _SqueezeExcite(nn.Module):
    def __init__(self, channels: int, squeezed: int):
        super().__init__()
        self.conv1 = nn.Conv1d(channels, squeezed, 1, padding="same", padding_mode="reflect")
        self.conv2 = nn.Conv1d(squeezed, channels, 1, padding="same", padding_mode="reflect")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate = torch.sigmoid(self.conv2(F.relu(self.conv1(x.mean(dim=2, keepdim=True)))))
        return x * gate


class _SERes2NetBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, scale: int, se_channels: int, kernel: int, dilation: int):
        super().__init__()
        self.tdnn1 = _Conv(c_in, c_out, 1)
        self.res2net_block = _Res2Net(c_out, scale, kernel, dilation)
        self.tdnn2 = _Conv(c_out, c_out, 1)
        self.se_block = _SqueezeExcite(c_out, se_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.se_block(self.tdnn2(self.res2net_block(self.tdnn1(x))))


def _weighted_stats(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and standard deviation over time of x [B, C, T] with weights w (summing to 1 over T)."""
    mean = (w * x).sum(2)
    std = torch.sqrt((w * (x - mean.unsqueeze(2)).pow(2)).sum(2).clamp(1e-12))
    return mean, std


class _AttentivePooling(nn.Module):
    """Per channel, a softmax over time (conditioned on the utterance's global mean and deviation)
    weights the mean and standard deviation that summarise it."""

    def __init__(self, channels: int, attention_channels: int):
        super().__init__()
        self.tdnn = _Conv(channels * 3, attention_channels, 1)
        self.conv = nn.Conv1d(attention_channels, channels, 1, padding="same", padding_mode="reflect")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        frames = x.shape[-1]
        uniform = torch.ones(x.shape[0], 1, frames, dtype=x.dtype) / frames
        mean, std = _weighted_stats(x, uniform)
        context = torch.cat([x, mean.unsqueeze(2).expand(-1, -1, frames), std.unsqueeze(2).expand(-1, -1, frames)], 1)
        attention = F.softmax(self.conv(torch.tanh(self.tdnn(context))), dim=2)
        mean, std = _weighted_stats(x, attention)
        return torch.cat((mean, std), dim=1).unsqueeze(2)


class SpeakerEncoder(nn.Module):
    def __init__(self, cfg: SpeakerEncoderConfig):
        super().__init__()
        c, k, d = cfg.channels, cfg.kernel_sizes, cfg.dilations
        if not len(c) == len(k) == len(d) >= 3:
            raise ValueError("the speaker encoder needs matching channels, kernel sizes and dilations (3 or more)")
        self.cfg = cfg
        blocks: list[nn.Module] = [_Conv(cfg.mel_dim, c[0], k[0], d[0])]
        blocks += [_SERes2NetBlock(c[i - 1], c[i], cfg.res2net_scale, cfg.se_channels, k[i], d[i])
                   for i in range(1, len(c) - 1)]
        self.blocks = nn.ModuleList(blocks)
        self.mfa = _Conv(c[-1], c[-1], k[-1], d[-1])
        self.asp = _AttentivePooling(c[-1], cfg.attention_channels)
        self.fc = nn.Conv1d(c[-1] * 2, cfg.enc_dim, 1, padding="same", padding_mode="reflect")

    def forward(self, mels: torch.Tensor) -> torch.Tensor:
        """mels [B, frames, mel_dim] -> embeddings [B, enc_dim]."""
        x = mels.transpose(1, 2)
        outputs = []
        for block in self.blocks:
            x = block(x)
            outputs.append(x)
        x = self.mfa(torch.cat(outputs[1:], dim=1))
        return self.fc(self.asp(x)).squeeze(-1)

    def embed(self, audio: torch.Tensor) -> torch.Tensor:
        """audio [samples] float32 at the encoder's sample rate -> the speaker embedding [enc_dim]."""
        mels = log_mel(audio, MelSettings(sample_rate=self.cfg.sample_rate, n_mels=self.cfg.mel_dim))
        return self(mels[None].to(self.fc.weight.dtype))[0]
