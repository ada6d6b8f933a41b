"""The torch reference for hearing: Qwen3-ASR's and Qwen3-ForcedAligner's audio encoder and decoder
as torch modules (hearth.model.asr_encoder, asr_decoder), fp32 results equal to the official
package's, behind the numpy interfaces of `hearth.backends.asr_interfaces`."""

from __future__ import annotations

import numpy as np
import torch

from hearth.checkpoint.asr_loading import AsrCheckpoint
from hearth.model.asr_decoder import AsrDecoder
from hearth.model.asr_encoder import AudioEncoder
from hearth.model.asr_weights import AsrWeights, load_asr_decoder, load_audio_encoder
from hearth.model.layers import KVCache

__all__ = ["TorchAsrModel", "TorchAsrSession"]


def _out(x: torch.Tensor) -> np.ndarray:
    return x.to(torch.float32).numpy()


class TorchAsrModel:
    """Both models (one architecture, two heads): implements `AsrModel` and `AlignerModel`."""

    def __init__(self, encoder: AudioEncoder, decoder: AsrDecoder):
        self.encoder = encoder
        self.decoder = decoder
        self.dtype = decoder.lm_head.weight.dtype

    @classmethod
    def load(cls, ckpt: AsrCheckpoint, dtype: torch.dtype = torch.float32) -> TorchAsrModel:
        weights = AsrWeights(ckpt)  # every name and shape checked once, before anything is read
        return cls(load_audio_encoder(ckpt, dtype, weights), load_asr_decoder(ckpt, dtype, weights))

    @torch.inference_mode()
    def encode_audio(self, features: np.ndarray) -> np.ndarray:
        x = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32)).to(self.dtype)
        return _out(self.encoder(x))

    @torch.inference_mode()
    def audio_steps(self, features: np.ndarray, longest: int | None = None) -> np.ndarray:
        x = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32)).to(self.dtype)
        return _out(self.encoder.convolve(x, longest))

    @torch.inference_mode()
    def audio_windows(self, steps: np.ndarray, frames: int) -> np.ndarray:
        return _out(self.encoder.transform(torch.from_numpy(steps).to(self.dtype), frames))

    def session(self, capacity: int) -> TorchAsrSession:
        return TorchAsrSession(self.decoder, capacity, self.dtype)

    @torch.inference_mode()
    def timestamp_logits(self, ids: np.ndarray, audio: np.ndarray, audio_at: int,
                         positions: np.ndarray) -> np.ndarray:
        cache = self.decoder.new_cache(len(ids), self.dtype)
        embeds = self.decoder.embed(torch.from_numpy(np.asarray(ids, np.int64)), torch.from_numpy(audio), audio_at)
        logits = self.decoder(embeds, cache)[0]  # [n, classes]: the head over every position, as the official
        return _out(logits[torch.from_numpy(np.asarray(positions, np.int64))])

    def warm_up(self) -> None:
        mel = self.encoder.cfg.num_mel_bins
        audio = self.encode_audio(np.zeros((mel, 100), np.float32))
        ids = np.zeros(audio.shape[0] + 2, np.int64)
        s = self.session(len(ids) + 1)
        s.prefill(ids, audio, 1)
        s.step(0)
        s.close()


class TorchAsrSession:
    def __init__(self, decoder: AsrDecoder, capacity: int, dtype: torch.dtype):
        self.decoder = decoder
        self.cache: KVCache | None = decoder.new_cache(max(capacity, 1), dtype)

    def _cache(self) -> KVCache:
        if self.cache is None:
            raise RuntimeError("this session is closed")
        return self.cache

    @property
    def position(self) -> int:
        return self._cache().length

    @torch.inference_mode()
    def prefill(self, ids: np.ndarray, audio: np.ndarray, audio_at: int) -> np.ndarray:
        cache = self._cache()
        embeds = self.decoder.embed(torch.from_numpy(np.asarray(ids, np.int64)), torch.from_numpy(audio), audio_at)
        return _out(self.decoder(embeds, cache)[0, -1])

    @torch.inference_mode()
    def step(self, token: int) -> np.ndarray:
        cache = self._cache()
        if not cache.length:
            raise RuntimeError("step before prefill")
        embeds = self.decoder.embed(torch.tensor([token], dtype=torch.long))
        return _out(self.decoder(embeds, cache)[0, -1])

    def rewind(self, position: int) -> None:
        cache = self._cache()
        if not 0 <= position <= cache.length:
            raise ValueError(f"cannot rewind a session of {cache.length} positions to {position}")
        cache.length = position

    def close(self) -> None:
        self.cache = None
