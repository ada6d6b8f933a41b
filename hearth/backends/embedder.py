"""The talker's input embeddings, outside any runtime: rows of the text table through the text
projection, and codec ids. Shared by the compiled backends (OpenVINO, ONNX Runtime); the torch
reference computes the same inside its modules."""

from __future__ import annotations

import torch
from torch import nn

from ..checkpoint import Checkpoint
from ..config import TalkerConfig
from ..model.talker import TextProjection, sum_frames
from ..safetensors_mmap import SafetensorsFile

__all__ = ["PromptEmbedder", "load_embedder"]


class PromptEmbedder(nn.Module):
    """The talker's input embeddings only: text table -> projection, and codec ids. Both tables stay
    memory-mapped in the checkpoint's dtype (rows are widened as they are looked up)."""

    def __init__(self, cfg: TalkerConfig):
        super().__init__()
        self.text_projection = TextProjection(cfg.text_hidden_size, cfg.stack.hidden_size)
        self.text_embedding: torch.Tensor = torch.empty(0)
        self.codec_embedding: torch.Tensor = torch.empty(0)
        self.predictor_embeddings: list[torch.Tensor] = []  # codebooks 1.. (for reference frames)

    def embed_text(self, ids: list[int]) -> torch.Tensor:
        rows = self.text_embedding[torch.tensor(ids, dtype=torch.long)].to(torch.float32)
        return self.text_projection(rows[None])

    def embed_codec(self, ids: list[int]) -> torch.Tensor:
        return self.codec_embedding[torch.tensor([ids], dtype=torch.long)].to(torch.float32)

    def embed_frames(self, codes: torch.Tensor) -> torch.Tensor:
        tables = [self.codec_embedding, *self.predictor_embeddings]
        return sum_frames(codes, [_Rows(w) for w in tables])


class _Rows:
    """Lookups in a memory-mapped table, widened to float32."""

    def __init__(self, table: torch.Tensor):
        self.table = table

    def __call__(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table[ids].to(torch.float32)


def load_embedder(ckpt: Checkpoint, f: SafetensorsFile) -> PromptEmbedder:
    with torch.device("meta"):
        emb = PromptEmbedder(ckpt.config.talker)
    state = {
        "text_projection.linear_fc1.weight": "talker.text_projection.linear_fc1.weight",
        "text_projection.linear_fc1.bias": "talker.text_projection.linear_fc1.bias",
        "text_projection.linear_fc2.weight": "talker.text_projection.linear_fc2.weight",
        "text_projection.linear_fc2.bias": "talker.text_projection.linear_fc2.bias",
    }
    emb.load_state_dict({k: f.get(v).to(torch.float32) for k, v in state.items()}, strict=True, assign=True)
    for name in state.values():
        f.release(name)  # widened copies (or, for float32 checkpoints, paged back in on use)
    emb.eval().requires_grad_(False)
    emb.text_embedding = f.get("talker.model.text_embedding.weight")
    emb.codec_embedding = f.get("talker.model.codec_embedding.weight")
    emb.predictor_embeddings = [f.get(f"talker.code_predictor.model.codec_embedding.{j}.weight")
                                for j in range(ckpt.config.talker.num_code_groups - 1)]
    return emb
