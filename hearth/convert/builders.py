"""The converter a loader hands to the backends (`hearth.backends.conversions.Converter`): each
runtime's graphs built from the checkpoint into the cache entry the backend named."""

from __future__ import annotations

from pathlib import Path

from hearth.backends.conversions import ConvertedModel
from hearth.checkpoint.asr_loading import AsrCheckpoint
from hearth.checkpoint.loading import Checkpoint
from hearth.convert import to_onnxruntime, to_openvino

__all__ = ["BUILDERS", "Builders"]


class Builders:
    """`Converter` (and `AsrConverter`) by `hearth.convert.to_openvino` and `hearth.convert.to_onnxruntime`."""

    def openvino_language_model(self, ckpt: Checkpoint, weights: str, directory: Path,
                                key_source: dict[str, object]) -> ConvertedModel:
        return to_openvino.build_language_model(ckpt, weights, directory, key_source)

    def openvino_vocoder(self, ckpt: Checkpoint, stored: str, frames: int, directory: Path,
                         key_source: dict[str, object]) -> ConvertedModel:
        return to_openvino.build_vocoder(ckpt, stored, frames, directory, key_source)

    def onnxruntime_language_model(self, ckpt: Checkpoint, weights: str, directory: Path,
                                   key_source: dict[str, object]) -> ConvertedModel:
        return to_onnxruntime.build_language_model(ckpt, weights, directory, key_source)

    def onnxruntime_vocoder(self, ckpt: Checkpoint, frames: int, directory: Path, key_source: dict[str, object],
                            weights: str) -> ConvertedModel:
        return to_onnxruntime.build_vocoder(ckpt, frames, directory, key_source, weights)

    def asr_networks(self, ckpt: AsrCheckpoint, runtime: str, weights: str, directory: Path,
                     key_source: dict[str, object]) -> ConvertedModel:
        """A hearing model's graphs (`hearth.backends.asr_compiled.AsrConverter`)."""
        if runtime == "openvino":
            from hearth.convert import asr_ov

            return asr_ov.build(ckpt, weights, directory, key_source)
        from hearth.convert import asr_ort

        return asr_ort.build(ckpt, weights, directory, key_source)


BUILDERS = Builders()
