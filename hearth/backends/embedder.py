"""The talker's input embeddings, outside any runtime and without torch: rows of the text table
through the text projection, and codec ids, in numpy float32. Shared by the compiled backends
(OpenVINO, ONNX Runtime); the torch reference computes the same inside its modules."""

from __future__ import annotations

import numpy as np

from hearth.checkpoint.loading import Checkpoint
from hearth.checkpoint.safetensors_mmap import SafetensorsFile, widen

__all__ = ["PromptEmbedder", "load_embedder"]


class _Table:
    """A memory-mapped embedding table in its stored dtype: only the rows looked up are paged in,
    and they are widened to float32 as they are read."""

    def __init__(self, f: SafetensorsFile, name: str):
        self.rows = f.array(name)
        self.dtype = f.tensors[name].dtype

    def __call__(self, ids: np.ndarray | list[int]) -> np.ndarray:
        return widen(self.rows[np.asarray(ids, np.int64)], self.dtype)


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (np.float32(1) + np.exp(-x))


class PromptEmbedder:
    """The talker's input embeddings: text table -> projection (fc1, SiLU, fc2, with biases, in
    float32), and codec ids; the predictor's tables for whole frames of reference audio."""

    def __init__(self, f: SafetensorsFile, groups: int):
        prefix = "talker.text_projection."
        names = ("linear_fc1.weight", "linear_fc1.bias", "linear_fc2.weight", "linear_fc2.bias")
        # Widened copies (for a float32 checkpoint the file's pages, paged back in on use); weights [out, in].
        self.fc1_w, self.fc1_b, self.fc2_w, self.fc2_b = (f.floats(prefix + name) for name in names)
        for name in names:
            f.release(prefix + name)
        self.text = _Table(f, "talker.model.text_embedding.weight")
        self.codec = _Table(f, "talker.model.codec_embedding.weight")
        self.predictor = [_Table(f, f"talker.code_predictor.model.codec_embedding.{j}.weight")
                          for j in range(groups - 1)]  # codebooks 1.. (for reference frames)

    def embed_text(self, ids: list[int]) -> np.ndarray:
        """[1, n, hidden]"""
        return self._project(self.text(ids))[None]

    def _project(self, rows: np.ndarray) -> np.ndarray:
        return _silu(rows @ self.fc1_w.T + self.fc1_b) @ self.fc2_w.T + self.fc2_b

    # The text that trails the prefill (interleaved: one row a frame) is projected in blocks of this
    # many rows, each padded with zero rows: a matrix product's row then depends only on its own
    # input and its place in the block, never on how many rows the call holds (BLAS kernels round
    # a 5-row and a 300-row product differently; checked on AVX2 and AVX-512). So text spoken as it
    # is written (`LiveEmbeds`), projected as it arrives, rounds as the whole text does, and can be
    # spoken frame by frame; before, a CPU whose kernels no batch size made invariant (AMD Zen 3,
    # AVX2: every size differed) held a live sentence's frames until its text had ended.
    trailing_block = 16

    def embed_trailing(self, ids: list[int]) -> np.ndarray:
        """[1, n, hidden]: as `embed_text`, row k computed in block k // trailing_block (aligned to
        the first id given), whatever else the call holds."""
        rows = self.text(ids)
        b = self.trailing_block
        out = []
        for start in range(0, len(rows), b):
            block = rows[start : start + b]
            if len(block) < b:
                block = np.concatenate((block, np.zeros((b - len(block), rows.shape[1]), rows.dtype)))
            out.append(self._project(block)[: min(b, len(rows) - start)])
        return (np.concatenate(out) if out else self._project(rows))[None]

    def embed_codec(self, ids: list[int]) -> np.ndarray:
        """[1, n, hidden]"""
        return self.codec(ids)[None]

    def embed_frames(self, codes: np.ndarray) -> np.ndarray:
        """Whole frames [frames, groups] -> the sum of each frame's code embeddings [1, frames, hidden],
        summed over the groups in their order."""
        codes = np.asarray(codes, np.int64)
        total = self.codec(codes[:, 0])
        for g, table in enumerate(self.predictor, start=1):
            total = total + table(codes[:, g])
        return total[None]


def load_embedder(ckpt: Checkpoint, f: SafetensorsFile) -> PromptEmbedder:
    return PromptEmbedder(f, ckpt.config.talker.num_code_groups)
