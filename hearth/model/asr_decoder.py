"""The Qwen3 decoder of Qwen3-ASR and Qwen3-ForcedAligner: token embeddings, the layers shared with
the TTS talker (`hearth.model.layers`: RMSNorm, q/k norms, rotary, grouped-query attention) and a
head, over the vocabulary for ASR or over timestamp classes for the aligner.

The official thinker uses interleaved M-RoPE with three position rows; its prompts carry the same
position in all three (text and audio tokens alike), where M-RoPE is plain rotary, as here.
Caches and the decoding loop are the caller's (`hearth.backends.asr_torch`); a forward here is one
plain pass.
"""

from __future__ import annotations

import torch
from torch import nn

from hearth.checkpoint.asr_config import AsrConfig
from hearth.model.layers import DecoderStack, KVCache, embedding_table

__all__ = ["AsrDecoder"]


class _TextModel(DecoderStack):
    def __init__(self, cfg: AsrConfig):
        super().__init__(cfg.decoder)
        self.embed_tokens = embedding_table(cfg.decoder.vocab_size, cfg.decoder.hidden_size)


class AsrDecoder(nn.Module):
    """Attribute names follow the checkpoint's tensors (`thinker.` prefix: `model.*`, `lm_head`).
    With tied embeddings (the 0.6B ASR) the head's weight is the embedding table itself."""

    def __init__(self, cfg: AsrConfig):
        super().__init__()
        self.cfg = cfg
        self.model = _TextModel(cfg)
        self.lm_head = nn.Linear(cfg.decoder.hidden_size, cfg.head_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    def new_cache(self, capacity: int, dtype: torch.dtype) -> KVCache:
        return self.model.new_cache(capacity, dtype)

    def embed(self, ids: torch.Tensor, audio: torch.Tensor | None = None, audio_at: int = 0) -> torch.Tensor:
        """ids [n] -> embeddings [1, n, hidden], rows audio_at .. audio_at + len(audio) replaced by
        the audio embeddings [tokens, hidden] (those rows hold the `<|audio_pad|>` placeholders)."""
        x = self.model.embed_tokens(ids.to(torch.long))
        if audio is not None and audio.shape[0]:
            x = x.clone()
            x[audio_at : audio_at + audio.shape[0]] = audio.to(x.dtype)
        return x.unsqueeze(0)

    def forward(self, embeds: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """embeds [1, n, hidden] at positions cache.length.. -> fp32 head outputs of every position
        [1, n, head]. (All positions, as the official forward computes them: a head applied to the
        last row alone would round differently.)"""
        h = self.model(embeds, cache)
        return self.lm_head(h).to(torch.float32)
