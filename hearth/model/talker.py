"""The talker (one frame's first codebook per step) and its code predictor (the other 15).

Plain modules with plain forwards; sampling, caches and the frame loop live in `hearth.generation.frame_loop`.
Attribute names follow the checkpoint's tensor names (`talker.` prefix) so loading is a rename-free
assignment.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from hearth.checkpoint.config import TalkerConfig
from hearth.model.layers import DecoderStack, KVCache, embedding_table

__all__ = ["CodePredictor", "Talker", "TextProjection"]


class TextProjection(nn.Module):
    """text_hidden -> text_hidden -> talker hidden, SiLU, with biases."""

    def __init__(self, text_hidden: int, hidden: int):
        super().__init__()
        self.linear_fc1 = nn.Linear(text_hidden, text_hidden, bias=True)
        self.linear_fc2 = nn.Linear(text_hidden, hidden, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear_fc2(F.silu(self.linear_fc1(x)))


class _PredictorModel(DecoderStack):
    def __init__(self, cfg: TalkerConfig):
        super().__init__(cfg.predictor)
        self.codec_embedding = nn.ModuleList(
            [embedding_table(cfg.predictor.vocab_size, cfg.stack.hidden_size) for _ in range(cfg.num_code_groups - 1)]
        )


class CodePredictor(nn.Module):
    """Predicts codebooks 1..G-1 of a frame from the talker's last hidden state and codebook 0."""

    def __init__(self, cfg: TalkerConfig):
        super().__init__()
        p = cfg.predictor
        self.num_groups = cfg.num_code_groups
        self.model = _PredictorModel(cfg)
        self.lm_head = nn.ModuleList(
            [nn.Linear(p.hidden_size, p.vocab_size, bias=False) for _ in range(cfg.num_code_groups - 1)]
        )
        # 1.7B: the talker is wider than the predictor, so its inputs are projected down.
        self.small_to_mtp_projection: nn.Linear | None = None
        if p.hidden_size != cfg.stack.hidden_size:
            self.small_to_mtp_projection = nn.Linear(cfg.stack.hidden_size, p.hidden_size, bias=True)

    def new_cache(self, dtype: torch.dtype) -> KVCache:
        # Two prefill positions plus one per fed codebook; cb(G-1) is never fed back.
        return self.model.new_cache(self.num_groups, dtype)

    def forward(self, embeds: torch.Tensor, head: int, cache: KVCache) -> torch.Tensor:
        """embeds [1, n, talker_hidden] -> fp32 logits [1, n, vocab] of lm_head[head]."""
        if self.small_to_mtp_projection is not None:
            embeds = self.small_to_mtp_projection(embeds)
        h = self.model(embeds, cache)
        return self.lm_head[head](h)


class _TalkerModel(DecoderStack):
    def __init__(self, cfg: TalkerConfig):
        super().__init__(cfg.stack)
        self.codec_embedding = embedding_table(cfg.stack.vocab_size, cfg.stack.hidden_size)
        # text_embedding is not a parameter: it stays a memory-mapped table (see Talker.embed_text).


def sum_frames(codes: torch.Tensor, tables: list[Callable[[torch.Tensor], torch.Tensor]]) -> torch.Tensor:
    """Frame embeddings as the official model sums them: codebook g's rows [frames, 1, hidden] side
    by side, then one sum over the groups."""
    codes = codes.to(torch.long)
    rows = [table(codes[:, g : g + 1]) for g, table in enumerate(tables)]
    return torch.cat(rows, dim=1).sum(1).unsqueeze(0)


class Talker(nn.Module):
    def __init__(self, cfg: TalkerConfig):
        super().__init__()
        self.cfg = cfg
        self.model = _TalkerModel(cfg)
        self.text_projection = TextProjection(cfg.text_hidden_size, cfg.stack.hidden_size)
        self.codec_head = nn.Linear(cfg.stack.hidden_size, cfg.stack.vocab_size, bias=False)
        self.code_predictor = CodePredictor(cfg)
        self.text_embedding: torch.Tensor = torch.empty(0)  # [text_vocab, text_hidden], set by the loader

    def embed_text(self, ids: list[int]) -> torch.Tensor:
        """T(ids): text embedding rows (only these pages are read) through text_projection. [1, n, hidden]"""
        dtype = self.codec_head.weight.dtype
        rows = self.text_embedding[torch.tensor(ids, dtype=torch.long)].to(dtype)
        return self.text_projection(rows[None])

    def embed_codec(self, ids: list[int]) -> torch.Tensor:
        """C(ids). [1, n, hidden]"""
        return self.model.codec_embedding(torch.tensor([ids], dtype=torch.long))

    def embed_frames(self, codes: torch.Tensor) -> torch.Tensor:
        """Whole frames [frames, groups] -> the sum of each frame's code embeddings [1, frames, hidden]."""
        tables = [self.model.codec_embedding, *self.code_predictor.model.codec_embedding]
        return sum_frames(codes, tables)

    def forward(self, embeds: torch.Tensor, cache: KVCache) -> tuple[torch.Tensor, torch.Tensor]:
        """embeds [1, n, hidden] -> (hidden of the last position [1, 1, hidden], logits of all [1, n, vocab])."""
        h = self.model(embeds, cache)
        return h[:, -1:], self.codec_head(h)
