"""The reference networks from a checkpoint's files: the tensors each weight file must hold (read
off the torch modules built on the meta device), the files checked against them, and the loaders
that assign the memory-mapped weights (torch; the converters and the torch backend use them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hearth.checkpoint.config import CodecDecoderConfig, CodecEncoderConfig, ModelConfig
from hearth.checkpoint.loading import Checkpoint, CheckpointError
from hearth.checkpoint.safetensors_mmap import SafetensorsError, SafetensorsFile, TensorInfo

if TYPE_CHECKING:
    import torch
    from torch import nn

    from hearth.model.codec import CodecDecoder
    from hearth.model.codec_encoder import CodecEncoder
    from hearth.model.speaker import SpeakerEncoder
    from hearth.model.talker import Talker


def _shapes(module: nn.Module, prefix: str) -> dict[str, tuple[int, ...]]:
    return {prefix + k: tuple(v.shape) for k, v in module.state_dict().items()}


def talker_tensor_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor model.safetensors must hold, with its shape."""
    import torch

    from hearth.model.speaker import SpeakerEncoder
    from hearth.model.talker import Talker

    with torch.device("meta"):
        talker = Talker(config.talker)
    shapes = _shapes(talker, "talker.")
    t = config.talker
    shapes["talker.model.text_embedding.weight"] = (t.text_vocab_size, t.text_hidden_size)
    if config.speaker_encoder is not None:
        with torch.device("meta"):
            shapes.update(_shapes(SpeakerEncoder(config.speaker_encoder), "speaker_encoder."))
    return shapes


def codec_tensor_shapes(codec: CodecDecoderConfig, encoder: CodecEncoderConfig | None = None
                        ) -> dict[str, tuple[int, ...]]:
    """Every decoder tensor speech_tokenizer/model.safetensors must hold, and with `encoder` every
    encoder tensor too (without it, encoder tensors are ignored)."""
    import torch

    from hearth.model.codec import CodecDecoder
    from hearth.model.codec_encoder import CodecEncoder

    with torch.device("meta"):
        shapes = _shapes(CodecDecoder(codec), "decoder.")
        if encoder is not None:
            shapes.update(_shapes(CodecEncoder(encoder), "encoder."))
    return shapes


def mismatches(tensors: Mapping[str, TensorInfo], expected: Mapping[str, tuple[int, ...]],
               optional: Mapping[str, tuple[int, ...]] | None = None) -> list[str]:
    """What is wrong with a tensor table against `expected` (and `optional`, which may be absent):
    names missing and unexpected, then the first wrong shape or a type that is not floating-point."""
    optional = optional or {}
    present = set(tensors)
    missing = sorted(set(expected) - present)
    extra = sorted(present - set(expected) - set(optional))
    problems = []
    if missing:
        problems.append(f"{len(missing)} tensors missing (first: {', '.join(missing[:3])})")
    if extra:
        problems.append(f"{len(extra)} unexpected tensors (first: {', '.join(extra[:3])})")
    for name in sorted(present & (set(expected) | set(optional))):
        info, want = tensors[name], expected.get(name, optional.get(name))
        if info.shape != want:
            problems.append(f"tensor {name} has shape {list(info.shape)}, the config implies {list(want or ())}")
            break
        if not info.is_floating_point:
            problems.append(f"tensor {name} has dtype {info.dtype}, expected a floating-point type")
            break
    return problems


def open_verified(path: Path, expected: dict[str, tuple[int, ...]], ignore_prefix: str | None) -> SafetensorsFile:
    """The weights file, its tensor table checked against `expected` (names, shapes, float dtypes)."""
    try:
        f = SafetensorsFile(path)
    except SafetensorsError as e:
        raise CheckpointError(f"{e}") from e
    kept = {n: t for n, t in f.tensors.items() if ignore_prefix is None or not n.startswith(ignore_prefix)}
    if problems := mismatches(kept, expected):
        raise CheckpointError(
            f"{path} does not match its config: {'; '.join(problems)}. The weights and config.json come from "
            "different models, or the file is damaged; re-download the checkpoint"
        )
    return f


def talker_weights(ckpt: Checkpoint) -> Callable[[str], np.ndarray]:
    """The talker's tensors by name, widened to float32 copies, for a converter: the verified file's
    pages of each tensor are released once it is read (each is read once)."""
    f = open_verified(ckpt.path / "model.safetensors", talker_tensor_shapes(ckpt.config), ignore_prefix=None)

    def read(name: str) -> np.ndarray:
        t = f.floats(name)  # a copy
        f.release(name)
        return t

    return read


def _assign(module: nn.Module, f: SafetensorsFile, prefix: str, dtype: torch.dtype | None) -> None:
    import torch

    dtype = dtype or torch.float32
    state = {}
    for name in module.state_dict():
        stored = f.get(prefix + name)
        state[name] = stored.to(dtype)
        if state[name].data_ptr() != stored.data_ptr():
            # Converted copy: the file's pages are no longer needed, keep peak memory near one copy.
            f.release(prefix + name)
    module.load_state_dict(state, strict=True, assign=True)
    module.eval().requires_grad_(False)


def verify_weights(ckpt: Checkpoint) -> None:
    """Both weight files' tensor tables against the config (headers only: cheap), so that any
    backend refuses a damaged or mismatched checkpoint before it converts or loads anything."""
    open_verified(ckpt.path / "model.safetensors", talker_tensor_shapes(ckpt.config), ignore_prefix=None)
    open_verified(ckpt.path / "speech_tokenizer/model.safetensors", codec_tensor_shapes(ckpt.codec, ckpt.encoder),
                  ignore_prefix=None if ckpt.encoder else "encoder.")


def load_talker(ckpt: Checkpoint, dtype: torch.dtype | None = None) -> Talker:
    path = ckpt.path / "model.safetensors"
    f = open_verified(path, talker_tensor_shapes(ckpt.config), ignore_prefix=None)
    import torch

    from hearth.model.talker import Talker

    with torch.device("meta"):
        talker = Talker(ckpt.config.talker)
    _assign(talker, f, "talker.", dtype)
    # Left memory-mapped in its stored dtype: only the rows of tokens in use are ever paged in.
    talker.text_embedding = f.get("talker.model.text_embedding.weight")
    return talker


def load_speaker_encoder(ckpt: Checkpoint, dtype: torch.dtype | None = None) -> SpeakerEncoder:
    """The Base checkpoints' speaker encoder (CheckpointError for any other kind)."""
    cfg = ckpt.config.speaker_encoder
    if cfg is None:
        raise CheckpointError(f"{ckpt.path} is a {ckpt.config.kind} checkpoint: it has no speaker encoder "
                              "(voices are cloned with a Base checkpoint, e.g. Qwen/Qwen3-TTS-12Hz-0.6B-Base)")
    f = open_verified(ckpt.path / "model.safetensors", talker_tensor_shapes(ckpt.config), ignore_prefix=None)
    import torch

    from hearth.model.speaker import SpeakerEncoder

    with torch.device("meta"):
        encoder = SpeakerEncoder(cfg)
    _assign(encoder, f, "speaker_encoder.", dtype)
    return encoder


def load_codec_encoder(ckpt: Checkpoint, dtype: torch.dtype | None = None) -> CodecEncoder:
    """The speech tokenizer's encoder of a Base checkpoint (CheckpointError for any other kind)."""
    if ckpt.encoder is None:
        raise CheckpointError(f"{ckpt.path} is a {ckpt.config.kind} checkpoint: Hearth reads the speech tokenizer's "
                              "encoder of Base checkpoints only (e.g. Qwen/Qwen3-TTS-12Hz-0.6B-Base)")
    path = ckpt.path / "speech_tokenizer/model.safetensors"
    f = open_verified(path, codec_tensor_shapes(ckpt.codec, ckpt.encoder), ignore_prefix=None)
    import torch

    from hearth.model.codec_encoder import CodecEncoder

    with torch.device("meta"):
        encoder = CodecEncoder(ckpt.encoder)
    _assign(encoder, f, "encoder.", dtype)
    return encoder


def load_codec(ckpt: Checkpoint, dtype: torch.dtype | None = None) -> CodecDecoder:
    path = ckpt.path / "speech_tokenizer/model.safetensors"
    f = open_verified(path, codec_tensor_shapes(ckpt.codec), ignore_prefix="encoder.")
    import torch

    from hearth.model.codec import CodecDecoder

    with torch.device("meta"):
        decoder = CodecDecoder(ckpt.codec)
    _assign(decoder, f, "decoder.", dtype)
    return decoder
