"""The converter `hearth.listen` hands to the compiled backends (`backends.asr_compiled.AsrConverter`):
`hearth.convert`'s builders, imported only when a conversion is missing from the cache, so that a
run-time-only install (no torch) never imports the converting code (as `engine.ConvertOnFirstUse`
for the speaking side)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hearth.backends.conversions import ConvertedModel
    from hearth.checkpoint.asr_loading import AsrCheckpoint

__all__ = ["CONVERT_ON_FIRST_USE", "ConvertOnFirstUse"]


class ConvertOnFirstUse:
    def asr_networks(self, ckpt: AsrCheckpoint, runtime: str, weights: str, directory: Path,
                     key_source: dict[str, object]) -> ConvertedModel:
        from hearth.convert.builders import BUILDERS

        return BUILDERS.asr_networks(ckpt, runtime, weights, directory, key_source)


CONVERT_ON_FIRST_USE = ConvertOnFirstUse()
