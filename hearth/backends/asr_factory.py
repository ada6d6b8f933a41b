"""The one place that knows which runtime runs Qwen3-ASR and Qwen3-ForcedAligner. `hearth.listen`
asks for a model by name and receives an object with the interfaces of `asr_interfaces`; a new
runtime adds its name to `ASR_BACKENDS` and its construction here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hearth.errors import CONVERT_EXTRA, InputError

if TYPE_CHECKING:
    from hearth.backends.asr_interfaces import AlignerModel, AsrModel
    from hearth.checkpoint.asr_loading import AsrCheckpoint

__all__ = ["ASR_BACKENDS", "ASR_DTYPES", "create_asr_model"]

ASR_BACKENDS = ("torch",)  # the fast runtimes (OpenVINO, ONNX Runtime) come next
ASR_DTYPES = ("float32", "bfloat16")


def create_asr_model(ckpt: AsrCheckpoint, backend: str = "torch", dtype: str = "float32") -> AsrModel | AlignerModel:
    """The networks of `ckpt` on `backend`: an `AsrModel` for Qwen3-ASR, an `AlignerModel` for
    Qwen3-ForcedAligner (the torch implementation is both)."""
    if backend not in ASR_BACKENDS:
        raise InputError(f"backend {backend!r} cannot run {ckpt.kind} yet; choose one of: {', '.join(ASR_BACKENDS)}",
                         "backend")
    if dtype not in ASR_DTYPES:
        raise InputError(f"dtype {dtype!r} is not one of: {', '.join(ASR_DTYPES)} (float32 equals the official "
                         "package; bfloat16 halves the memory)", "dtype")
    try:
        import torch
    except ImportError as e:
        raise InputError(f"the torch backend needs torch: {CONVERT_EXTRA}", "backend") from e
    from hearth.backends.asr_torch import TorchAsrModel

    return TorchAsrModel.load(ckpt, getattr(torch, dtype))
