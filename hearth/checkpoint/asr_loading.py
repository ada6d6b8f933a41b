"""Find and describe a Qwen3-ASR or Qwen3-ForcedAligner checkpoint in the official Hugging Face
layout (no torch): its configs parsed, its tokenizer's special tokens checked against them, its
weight files listed (one `model.safetensors`, or the shards an index names). The weights are read
and checked by `hearth.model.asr_weights`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from hearth.checkpoint.asr_config import AsrConfig, FeatureConfig, check_greedy
from hearth.checkpoint.config import ConfigError, read_json
from hearth.checkpoint.loading import CheckpointError, resolve
from hearth.checkpoint.tokenizer import TextTokenizer

__all__ = ["ASR_FILES", "AsrCheckpoint", "AsrTokens", "open_asr_checkpoint"]

ASR_FILES = ("config.json", "preprocessor_config.json", "vocab.json", "merges.txt", "tokenizer_config.json")
_OPTIONAL = ("generation_config.json", "chat_template.json", "chat_template.jinja", "model.safetensors",
             "model.safetensors.index.json", "model-*.safetensors")
_FETCH = "hf download Qwen/Qwen3-ASR-0.6B --local-dir <dir>   (or Qwen/Qwen3-ForcedAligner-0.6B)"


@dataclass(frozen=True)
class AsrTokens:
    """The ids the prompts and the decoding loop use, read from the tokenizer by name."""

    im_start: int
    im_end: int
    end_of_text: int
    audio_start: int
    audio_pad: int
    audio_end: int
    asr_text: int | None  # `<asr_text>`: where the language tag ends (ASR)
    timestamp: int | None  # `<timestamp>`: one start or end time (aligner)


@dataclass(frozen=True)
class AsrCheckpoint:
    """One checkpoint: its directory, typed configuration and weight files."""

    path: Path
    config: AsrConfig
    features: FeatureConfig
    weight_files: tuple[Path, ...]
    chat_template: str | None  # as shipped; Hearth lays the prompt out itself (hearth.listen.prompt)

    @property
    def kind(self) -> str:
        return self.config.kind

    def tokenizer(self) -> tuple[TextTokenizer, AsrTokens]:
        """The Qwen2 tokenizer of the checkpoint and the special ids, checked against config.json."""
        try:
            tok = TextTokenizer.from_dir(self.path)
        except Exception as e:
            raise CheckpointError(f"{self.path}: vocab.json / merges.txt / tokenizer_config.json cannot be read "
                                  f"({e}); re-download the checkpoint") from e

        def need(text: str) -> int:
            token_id = tok.token_id(text)
            if token_id is None:
                raise CheckpointError(f"{self.path / 'tokenizer_config.json'} has no {text} token; it is not the "
                                      f"tokenizer of a {self.kind} checkpoint. Re-download it: {_FETCH}")
            return token_id

        cfg = self.config
        tokens = AsrTokens(
            im_start=need("<|im_start|>"), im_end=need("<|im_end|>"), end_of_text=need("<|endoftext|>"),
            audio_start=need("<|audio_start|>"), audio_pad=need("<|audio_pad|>"), audio_end=need("<|audio_end|>"),
            asr_text=need("<asr_text>") if cfg.aligner is None else tok.token_id("<asr_text>"),
            timestamp=need("<timestamp>") if cfg.aligner is not None else tok.token_id("<timestamp>"),
        )
        pairs: list[tuple[str, int | None, int]] = [("audio_token_id", tokens.audio_pad, cfg.audio_token_id)]
        if cfg.aligner is not None:
            pairs.append(("timestamp_token_id", tokens.timestamp, cfg.aligner.timestamp_token_id))
        for key, ours, theirs in pairs:
            if ours != theirs:
                raise CheckpointError(f"{self.path}: config.json's {key} is {theirs} but the tokenizer gives {ours}; "
                                      f"the tokenizer files and config.json come from different models")
        size = max(tok.token_id(t) or 0 for t in tok.added_tokens()) + 1
        if size > cfg.decoder.vocab_size:
            raise CheckpointError(f"{self.path}: the tokenizer has ids up to {size - 1}, beyond the decoder's "
                                  f"vocab_size {cfg.decoder.vocab_size}; the files come from different models")
        return tok, tokens


def _weight_files(path: Path) -> tuple[Path, ...]:
    single = path / "model.safetensors"
    if single.is_file():
        return (single,)
    index = path / "model.safetensors.index.json"
    if not index.is_file():
        raise CheckpointError(f"{path} has neither model.safetensors nor model.safetensors.index.json; "
                              f"fetch the checkpoint with: {_FETCH}")
    try:
        names = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as e:
        raise CheckpointError(f"{index}: not a safetensors index (no weight_map); re-download the checkpoint") from e
    missing = [n for n in names if not (path / n).is_file()]
    if missing:
        raise CheckpointError(f"{path} is missing {', '.join(missing)} (named by {index.name}); re-download it")
    return tuple(path / n for n in names)


def _chat_template(path: Path) -> str | None:
    if (path / "chat_template.jinja").is_file():
        return (path / "chat_template.jinja").read_text(encoding="utf-8")
    for name, key in (("chat_template.json", "chat_template"), ("tokenizer_config.json", "chat_template")):
        if (path / name).is_file():
            value = read_json(path / name).get(key)
            if isinstance(value, str):
                return value
    return None


def open_asr_checkpoint(model: str | os.PathLike[str], progress: bool = True,
                        expect: str | None = None) -> AsrCheckpoint:
    """The checkpoint at `model` (a directory, or a hub id fetched into the Hugging Face cache).
    `expect` ("asr" or "aligner") refuses the other kind with a message saying which to pass."""
    path = resolve(model, progress=progress, patterns=ASR_FILES + _OPTIONAL, example="Qwen/Qwen3-ASR-0.6B")
    missing = [f for f in ASR_FILES if not (path / f).is_file()]
    if missing:
        raise CheckpointError(f"{path} is missing {', '.join(missing)}; it is not a complete Qwen3-ASR or "
                              f"Qwen3-ForcedAligner checkpoint. Fetch one with: {_FETCH}")
    try:
        config = AsrConfig.from_json(read_json(path / "config.json"), str(path / "config.json"))
        features = FeatureConfig.from_json(read_json(path / "preprocessor_config.json"),
                                           str(path / "preprocessor_config.json"))
        if (path / "generation_config.json").is_file():
            check_greedy(read_json(path / "generation_config.json"), str(path / "generation_config.json"))
    except ConfigError as e:
        raise CheckpointError(str(e)) from e
    if features.feature_size != config.encoder.num_mel_bins:
        raise CheckpointError(f"{path}: preprocessor_config.json makes {features.feature_size} mel bins but the "
                              f"audio encoder takes {config.encoder.num_mel_bins}; the files are of different models")
    wanted = {"asr": "Qwen3-ASR", "aligner": "Qwen3-ForcedAligner"}.get(expect or "")
    if wanted is not None and config.kind != wanted:
        other = "a Qwen3-ForcedAligner (e.g. Qwen/Qwen3-ForcedAligner-0.6B)" if expect == "aligner" else \
            "a Qwen3-ASR checkpoint (e.g. Qwen/Qwen3-ASR-0.6B)"
        raise CheckpointError(f"{path} is a {config.kind} checkpoint; this needs {other}")
    return AsrCheckpoint(path, config, features, _weight_files(path), _chat_template(path))
