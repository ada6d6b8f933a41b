"""The Qwen3-ASR / Qwen3-ForcedAligner networks from a checkpoint's weight files: the tensors they
must hold (read off the torch modules built on the meta device), every name and shape checked
before anything is read, then the memory-mapped tensors assigned (torch)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from hearth.checkpoint.asr_config import AsrConfig
from hearth.checkpoint.asr_loading import AsrCheckpoint
from hearth.checkpoint.loading import CheckpointError
from hearth.checkpoint.safetensors_mmap import SafetensorsError, SafetensorsFile
from hearth.model.weights import mismatches

if TYPE_CHECKING:
    import torch
    from torch import nn

    from hearth.model.asr_decoder import AsrDecoder
    from hearth.model.asr_encoder import AudioEncoder

__all__ = ["AsrWeights", "asr_tensor_shapes", "load_asr_decoder", "load_audio_encoder"]

ENCODER_PREFIX = "thinker.audio_tower."
DECODER_PREFIX = "thinker."
TIED_HEAD = "thinker.lm_head.weight"


def _shapes(module: nn.Module, prefix: str) -> dict[str, tuple[int, ...]]:
    # A tied head appears once per name in state_dict(); both names are listed here.
    return {prefix + k: tuple(v.shape) for k, v in module.state_dict(keep_vars=True).items()}


def asr_tensor_shapes(config: AsrConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor the weight files must hold, with its shape. A tied head is not stored (transformers
    drops it when saving); see `AsrWeights` for a file that stores it anyway."""
    import torch

    from hearth.model.asr_decoder import AsrDecoder
    from hearth.model.asr_encoder import AudioEncoder

    with torch.device("meta"):
        shapes = _shapes(AudioEncoder(config.encoder), ENCODER_PREFIX)
        shapes.update(_shapes(AsrDecoder(config), DECODER_PREFIX))
    if config.tie_word_embeddings:
        del shapes[TIED_HEAD]
    return shapes


class AsrWeights:
    """The checkpoint's tensors across its files (one, or the shards of an index), checked against
    the config: every expected name present with its shape and a floating-point type, nothing else."""

    def __init__(self, ckpt: AsrCheckpoint):
        self.path = ckpt.path
        self.expected = asr_tensor_shapes(ckpt.config)
        optional = {TIED_HEAD: (ckpt.config.decoder.vocab_size, ckpt.config.decoder.hidden_size)} \
            if ckpt.config.tie_word_embeddings else {}
        self.files: dict[str, SafetensorsFile] = {}
        for path in ckpt.weight_files:
            try:
                f = SafetensorsFile(path)
            except SafetensorsError as e:
                raise CheckpointError(str(e)) from e
            for name in f.tensors:
                if name in self.files:
                    raise CheckpointError(f"{path}: tensor {name} is stored twice (also in {self.files[name].path})")
                self.files[name] = f
        tensors = {name: f.tensors[name] for name, f in self.files.items()}
        problems = mismatches(tensors, self.expected, optional)
        if problems:
            raise CheckpointError(
                f"{self.path}: the weights do not match config.json: {'; '.join(problems)}. The weights and the "
                "config come from different models, or a file is damaged; re-download the checkpoint")

    def get(self, name: str) -> torch.Tensor:
        return self.files[name].get(name)

    def release(self, name: str) -> None:
        self.files[name].release(name)

    def names(self, prefix: str) -> Iterable[str]:
        return (n for n in self.expected if n.startswith(prefix))


def _assign(module: nn.Module, weights: AsrWeights, prefix: str, dtype: torch.dtype | None,
            tied: dict[str, str] | None = None) -> None:
    """Load `module`'s state from the files (`tied`: module name -> the module name it shares)."""
    import torch

    dtype = dtype or torch.float32
    tied = tied or {}
    state = {}
    for name in module.state_dict():
        if name in tied:
            continue
        stored = weights.get(prefix + name)
        state[name] = stored.to(dtype)
        if state[name].data_ptr() != stored.data_ptr():
            weights.release(prefix + name)  # a converted copy: the file's pages are not needed again
    for name, source in tied.items():
        state[name] = state[source]
    module.load_state_dict(state, strict=True, assign=True)
    module.eval().requires_grad_(False)


def load_audio_encoder(ckpt: AsrCheckpoint, dtype: torch.dtype | None = None,
                       weights: AsrWeights | None = None) -> AudioEncoder:
    import torch

    from hearth.model.asr_encoder import AudioEncoder

    weights = weights or AsrWeights(ckpt)
    with torch.device("meta"):
        encoder = AudioEncoder(ckpt.config.encoder)
    _assign(encoder, weights, ENCODER_PREFIX, dtype)
    return encoder


def load_asr_decoder(ckpt: AsrCheckpoint, dtype: torch.dtype | None = None,
                     weights: AsrWeights | None = None) -> AsrDecoder:
    import torch

    from hearth.model.asr_decoder import AsrDecoder

    weights = weights or AsrWeights(ckpt)
    with torch.device("meta"):
        decoder = AsrDecoder(ckpt.config)
    # transformers ties the head to the embeddings whether or not a file stores it: so does Hearth.
    tied = {"lm_head.weight": "model.embed_tokens.weight"} if ckpt.config.tie_word_embeddings else None
    _assign(decoder, weights, DECODER_PREFIX, dtype, tied)
    if ckpt.config.tie_word_embeddings:
        decoder.lm_head.weight = decoder.model.embed_tokens.weight
    return decoder
