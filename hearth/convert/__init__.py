"""What converting needs, apart from what runs: the graphs each runtime is given (OpenVINO's IRs,
ONNX Runtime's models), built from a checkpoint with torch, onnx, onnxscript and NNCF (the convert
extra: `pip install 'hearth-tts[convert]'`).

The runtime (`hearth.backends`, the engine, the servers) imports only this file, for the converter
it hands to the backends (`CONVERT_ON_FIRST_USE`): it looks a conversion up (in a `hearth export`
directory or the cache) and calls in here only when one is missing and these tools are installed
(`backends.conversions.require_converter`); the converting modules are imported then. `hearth.model`
holds the torch networks they convert (also the reference backend's).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hearth.backends.conversions import ConvertedModel
    from hearth.checkpoint.asr_loading import AsrCheckpoint
    from hearth.checkpoint.loading import Checkpoint


class ConvertOnFirstUse:
    """The converter the engine hands to the backends (`hearth.backends.conversions.Converter`):
    this package's builders, imported only when a conversion is missing, so that a runtime-only
    install (exports and cached conversions) never imports the converting code."""

    def openvino_language_model(self, ckpt: Checkpoint, weights: str, directory: Path,
                                key_source: dict[str, object]) -> ConvertedModel:
        from hearth.convert import to_openvino

        return to_openvino.build_language_model(ckpt, weights, directory, key_source)

    def openvino_vocoder(self, ckpt: Checkpoint, stored: str, frames: int, directory: Path,
                         key_source: dict[str, object]) -> ConvertedModel:
        from hearth.convert import to_openvino

        return to_openvino.build_vocoder(ckpt, stored, frames, directory, key_source)

    def onnxruntime_language_model(self, ckpt: Checkpoint, weights: str, directory: Path,
                                   key_source: dict[str, object]) -> ConvertedModel:
        from hearth.convert import to_onnxruntime

        return to_onnxruntime.build_language_model(ckpt, weights, directory, key_source)

    def onnxruntime_vocoder(self, ckpt: Checkpoint, frames: int, directory: Path, key_source: dict[str, object],
                            weights: str) -> ConvertedModel:
        from hearth.convert import to_onnxruntime

        return to_onnxruntime.build_vocoder(ckpt, frames, directory, key_source, weights)



    def asr_networks(self, ckpt: AsrCheckpoint, runtime: str, weights: str, directory: Path,
                     key_source: dict[str, object]) -> ConvertedModel:
        """A hearing model's graphs (`hearth.backends.asr_compiled.AsrConverter`)."""
        if runtime == "openvino":
            from hearth.convert import asr_ov

            return asr_ov.build(ckpt, weights, directory, key_source)
        from hearth.convert import asr_ort

        return asr_ort.build(ckpt, weights, directory, key_source)


CONVERT_ON_FIRST_USE = ConvertOnFirstUse()
