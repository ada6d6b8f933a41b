"""Test helpers around the official qwen-tts package (see hearth.tools.reference)."""

from __future__ import annotations

from pathlib import Path

from hearth.tools.reference import import_official, load_official, official_generate

__all__ = ["import_official", "load_official", "official_codes", "reference_tokenizer"]

official_codes = official_generate


def reference_tokenizer(path: Path):
    """The standard Qwen2 tokenizer (hub-id behaviour: standard split regex), slow Python version."""
    from transformers import Qwen2Tokenizer

    return Qwen2Tokenizer.from_pretrained(str(path))
