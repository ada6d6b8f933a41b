"""Find, download and describe a checkpoint in the official Hugging Face layout (no torch).

Every file the engine needs must be there, and its configs parse into typed configs; the weights
themselves are checked against the config and loaded by `hearth.model.weights` (torch: the
reference, converting, cloning).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from hearth.checkpoint.config import CodecDecoderConfig, CodecEncoderConfig, ConfigError, ModelConfig, read_json
from hearth.checkpoint.sampling import SamplingOptions
from hearth.checkpoint.tokenizer import TextTokenizer

__all__ = [
    "DEFAULT_MODEL",
    "Checkpoint",
    "CheckpointError",
    "open_checkpoint",
    "resolve",
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


def _fetch_hint(model: str, example: str = DEFAULT_MODEL) -> str:
    repo = model if _HUB_ID.match(model) else example
    return f"fetch it with: hf download {repo} --local-dir <dir>   (then pass --model <dir>)"


def _hub_offline() -> bool:
    """HF_HUB_OFFLINE as huggingface_hub read it at its import, or as the environment says now (a
    program may set it later; huggingface_hub would not notice)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in (
        "1", "ON", "YES", "TRUE")


def resolve(model: str | os.PathLike[str], progress: bool = True, patterns: tuple[str, ...] | None = None,
            example: str = DEFAULT_MODEL) -> Path:
    """A local checkpoint directory, or a hub id fetched into the Hugging Face cache (the files
    matching `patterns`; default: a Qwen3-TTS checkpoint's). `example` is the hub id error messages
    suggest."""
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    name = str(model)
    if path.exists():
        raise CheckpointError(f"{path} is a file; pass the checkpoint directory that contains config.json")
    if not _HUB_ID.match(name) or name.startswith((".", "/", "~")):
        raise CheckpointError(f"checkpoint directory {path} does not exist; {_fetch_hint(name, example)}")
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
        from huggingface_hub.utils import disable_progress_bars, enable_progress_bars
    except ImportError as e:  # pragma: no cover - a core dependency
        raise CheckpointError("huggingface_hub is not installed; pip install huggingface_hub") from e
    if patterns is None:
        patterns = (*REQUIRED_FILES, "preprocessor_config.json", "speech_tokenizer/*.json")
    try:
        return Path(snapshot_download(name, allow_patterns=list(patterns), local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError, OSError):
        pass
    if _hub_offline():
        raise CheckpointError(f"{name} is not in the Hugging Face cache, and HF_HUB_OFFLINE is set, so Hearth does not "
                              f"download it; unset HF_HUB_OFFLINE to let it, or {_fetch_hint(name)}")
    if not progress:
        disable_progress_bars()
    try:  # the only time Hearth contacts anything off the machine: a model the user named, not yet here
        return Path(snapshot_download(name, allow_patterns=list(patterns)))
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
