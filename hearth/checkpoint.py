"""Find, download, verify and load a checkpoint in the official Hugging Face layout.

Loading is disciplined: modules are built on the meta device, every tensor name and shape in the
files is checked against what the config implies (missing, unexpected and misshapen tensors are
all errors), and weights are assigned from memory-mapped safetensors. The speech tokenizer's
encoder tensors are never read.

Finding and describing a checkpoint needs no torch; building its torch modules (the reference,
converting, cloning) imports torch when it is asked for.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .config import CodecDecoderConfig, CodecEncoderConfig, ConfigError, ModelConfig, read_json
from .safetensors_mmap import SafetensorsError, SafetensorsFile
from .sampling import SamplingOptions
from .text import TextTokenizer

if TYPE_CHECKING:
    import torch
    from torch import nn

    from .model.codec import CodecDecoder
    from .model.codec_encoder import CodecEncoder
    from .model.speaker import SpeakerEncoder
    from .model.talker import Talker

__all__ = [
    "DEFAULT_MODEL",
    "Checkpoint",
    "CheckpointError",
    "codec_tensor_shapes",
    "load_codec",
    "load_codec_encoder",
    "load_speaker_encoder",
    "load_talker",
    "open_checkpoint",
    "resolve",
    "talker_tensor_shapes",
    "talker_weights",
    "verify_weights",
]

DEFAULT_MODEL = "Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice"

REQUIRED_FILES = (
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "vocab.json",
    "merges.txt",
    "tokenizer_config.json",
    "speech_tokenizer/config.json",
    "speech_tokenizer/model.safetensors",
)

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class CheckpointError(RuntimeError):
    """The checkpoint cannot be used; the message names the file and the fix."""


def _fetch_hint(model: str) -> str:
    repo = model if _HUB_ID.match(model) else DEFAULT_MODEL
    return f"fetch it with: hf download {repo} --local-dir <dir>   (then pass --model <dir>)"


def _hub_offline() -> bool:
    """HF_HUB_OFFLINE as huggingface_hub read it at its import, or as the environment says now (a
    program may set it later; huggingface_hub would not notice)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in (
        "1", "ON", "YES", "TRUE")


def resolve(model: str | os.PathLike[str], progress: bool = True) -> Path:
    """A local checkpoint directory, or a hub id fetched into the Hugging Face cache."""
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    name = str(model)
    if path.exists():
        raise CheckpointError(f"{path} is a file; pass the checkpoint directory that contains config.json")
    if not _HUB_ID.match(name) or name.startswith((".", "/", "~")):
        raise CheckpointError(f"checkpoint directory {path} does not exist; {_fetch_hint(name)}")
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
        from huggingface_hub.utils import disable_progress_bars, enable_progress_bars
    except ImportError as e:  # pragma: no cover - a core dependency
        raise CheckpointError("huggingface_hub is not installed; pip install huggingface_hub") from e
    patterns = [f for f in REQUIRED_FILES] + ["preprocessor_config.json", "speech_tokenizer/*.json"]
    try:
        return Path(snapshot_download(name, allow_patterns=patterns, local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError, OSError):
        pass
    if _hub_offline():
        raise CheckpointError(f"{name} is not in the Hugging Face cache, and HF_HUB_OFFLINE is set, so Hearth does not "
                              f"download it; unset HF_HUB_OFFLINE to let it, or {_fetch_hint(name)}")
    if not progress:
        disable_progress_bars()
    try:  # the only time Hearth contacts anything off the machine: a model the user named, not yet here
        return Path(snapshot_download(name, allow_patterns=patterns))
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as e:
        raise CheckpointError(
            f"could not download {name} ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'no network'}); "
            f"on a machine with network, {_fetch_hint(name)}"
        ) from e
    finally:
        enable_progress_bars()


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint: its directory and its typed configuration."""

    path: Path
    config: ModelConfig
    codec: CodecDecoderConfig
    generation: SamplingOptions  # generation_config.json
    encoder: CodecEncoderConfig | None = None  # the speech tokenizer's encoder: read for Base checkpoints

    def tokenizer(self) -> TextTokenizer:
        try:
            return TextTokenizer.from_dir(self.path)
        except Exception as e:
            raise CheckpointError(
                f"{self.path}: vocab.json / merges.txt / tokenizer_config.json cannot be read ({e}); "
                f"re-download the checkpoint"
            ) from e


def open_checkpoint(model: str | os.PathLike[str], progress: bool = True) -> Checkpoint:
    path = resolve(model, progress=progress)
    missing = [f for f in REQUIRED_FILES if not (path / f).is_file()]
    if missing:
        raise CheckpointError(
            f"{path} is missing {', '.join(missing)}; it is not a complete Qwen3-TTS checkpoint. "
            + _fetch_hint(str(model))
        )
    try:
        config = ModelConfig.from_json(read_json(path / "config.json"), str(path / "config.json"))
        codec_path = path / "speech_tokenizer/config.json"
        codec = CodecDecoderConfig.from_json(read_json(codec_path), str(codec_path))
        gen_path = path / "generation_config.json"
        generation = SamplingOptions.from_json(read_json(gen_path), str(gen_path))
        encoder = None
        if config.model_type == "base":
            encoder = CodecEncoderConfig.from_json(read_json(codec_path), str(codec_path))
    except ConfigError as e:
        raise CheckpointError(str(e)) from e
    return Checkpoint(path, config, codec, generation, encoder)


def _shapes(module: nn.Module, prefix: str) -> dict[str, tuple[int, ...]]:
    return {prefix + k: tuple(v.shape) for k, v in module.state_dict().items()}


def talker_tensor_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor model.safetensors must hold, with its shape."""
    import torch

    from .model.speaker import SpeakerEncoder
    from .model.talker import Talker

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

    from .model.codec import CodecDecoder
    from .model.codec_encoder import CodecEncoder

    with torch.device("meta"):
        shapes = _shapes(CodecDecoder(codec), "decoder.")
        if encoder is not None:
            shapes.update(_shapes(CodecEncoder(encoder), "encoder."))
    return shapes


def open_verified(path: Path, expected: dict[str, tuple[int, ...]], ignore_prefix: str | None) -> SafetensorsFile:
    """The weights file, its tensor table checked against `expected` (names, shapes, float dtypes)."""
    try:
        f = SafetensorsFile(path)
    except SafetensorsError as e:
        raise CheckpointError(f"{e}") from e
    present = {n for n in f.tensors if ignore_prefix is None or not n.startswith(ignore_prefix)}
    missing = sorted(set(expected) - present)
    extra = sorted(present - set(expected))
    problems = []
    if missing:
        problems.append(f"{len(missing)} tensors missing (first: {', '.join(missing[:3])})")
    if extra:
        problems.append(f"{len(extra)} unexpected tensors (first: {', '.join(extra[:3])})")
    for name in sorted(set(expected) & present):
        info = f.tensors[name]
        if info.shape != expected[name]:
            problems.append(f"tensor {name} has shape {list(info.shape)}, the config implies {list(expected[name])}")
            break
        if not info.is_floating_point:
            problems.append(f"tensor {name} has dtype {info.dtype}, expected a floating-point type")
            break
    if problems:
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

    from .model.talker import Talker

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

    from .model.speaker import SpeakerEncoder

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

    from .model.codec_encoder import CodecEncoder

    with torch.device("meta"):
        encoder = CodecEncoder(ckpt.encoder)
    _assign(encoder, f, "encoder.", dtype)
    return encoder


def load_codec(ckpt: Checkpoint, dtype: torch.dtype | None = None) -> CodecDecoder:
    path = ckpt.path / "speech_tokenizer/model.safetensors"
    f = open_verified(path, codec_tensor_shapes(ckpt.codec), ignore_prefix="encoder.")
    import torch

    from .model.codec import CodecDecoder

    with torch.device("meta"):
        decoder = CodecDecoder(ckpt.codec)
    _assign(decoder, f, "decoder.", dtype)
    return decoder
