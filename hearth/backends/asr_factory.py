"""The one place that knows which runtime runs Qwen3-ASR and Qwen3-ForcedAligner. `hearth.listen`
asks for a model by name and receives an object with the interfaces of `asr_interfaces`; a new
runtime adds its name to `ASR_BACKENDS` and its construction here.

The runtime is chosen as the speaking side's is (`settings.listening_backend`): ONNX Runtime on
x86 CPUs without AVX-512 and on ARM, OpenVINO elsewhere, the torch reference where neither is
installed; int8 weights by default, as the speaking side's. Speech and listening models then share
one process and its thread plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hearth.backends.asr_formats import ASR_WEIGHTS
from hearth.errors import CONVERT_EXTRA, InputError

if TYPE_CHECKING:
    from hearth.backends.asr_compiled import AsrConverter
    from hearth.backends.asr_interfaces import AlignerModel, AsrModel
    from hearth.checkpoint.asr_loading import AsrCheckpoint

__all__ = ["ASR_BACKENDS", "ASR_DTYPES", "ASR_WEIGHTS", "create_asr_model"]

ASR_BACKENDS = ("openvino", "onnxruntime", "torch")
ASR_DTYPES = ("float32", "bfloat16")  # the torch reference's


def _check(backend: str, dtype: str, weights: str | None, threads: int | None) -> None:
    if backend not in ASR_BACKENDS:
        raise InputError(f"backend {backend!r} cannot run Qwen3-ASR; choose one of: {', '.join(ASR_BACKENDS)}",
                         "backend")
    if dtype not in ASR_DTYPES:
        raise InputError(f"dtype {dtype!r} is not one of: {', '.join(ASR_DTYPES)} (float32 equals the official "
                         "package; bfloat16 halves the memory)", "dtype")
    if backend != "torch" and dtype != "float32":
        raise InputError(f"dtype is the torch reference's; the {backend} backend's precision is chosen with "
                         f"weights ({', '.join(ASR_WEIGHTS)})", "dtype")
    if backend == "torch" and weights is not None:
        raise InputError("weights is for the compiled backends (openvino, onnxruntime); the torch reference "
                         "takes dtype", "weights")
    if weights is not None and weights not in ASR_WEIGHTS:
        raise InputError(f"weights must be one of {', '.join(ASR_WEIGHTS)}, got {weights!r}", "weights")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise InputError(f"threads must be a whole number of at least 1, got {threads!r}", "threads")


def create_asr_model(ckpt: AsrCheckpoint, backend: str | None = None, dtype: str = "float32",
                     weights: str | None = None, threads: int | None = None,
                     converter: AsrConverter | None = None) -> AsrModel | AlignerModel:
    """The networks of `ckpt` on `backend` (None: this machine's default, see the module's
    docstring): an `AsrModel` for Qwen3-ASR, an `AlignerModel` for Qwen3-ForcedAligner (each
    implementation is both). `weights` (compiled backends: int8, the default, or fp32), `dtype`
    (torch: float32 or bfloat16), `threads` (None: as the speaking side's, tuned or the runtime's choice).
    A compiled backend reads its conversion from the cache, or makes it with `converter`."""
    from hearth.backends.settings import listening_backend, listening_threads

    backend = backend or listening_backend()
    _check(backend, dtype, weights, threads)
    threads = threads or listening_threads(backend)
    if backend == "openvino":
        from hearth.backends.asr_openvino import OpenVINOAsrModel
        from hearth.backends.choices import openvino_available

        if not openvino_available():
            raise InputError("the openvino backend needs OpenVINO: pip install openvino (or choose backend "
                             "onnxruntime)", "backend")
        return OpenVINOAsrModel(ckpt, weights or "int8", threads, converter)
    if backend == "onnxruntime":
        from hearth.backends.asr_ort import ORTAsrModel
        from hearth.backends.choices import onnxruntime_available

        if not onnxruntime_available():
            raise InputError("the onnxruntime backend needs onnxruntime: pip install onnxruntime (or choose "
                             "backend openvino)", "backend")
        return ORTAsrModel(ckpt, weights or "int8", threads, converter)
    try:
        import torch
    except ImportError as e:
        raise InputError(f"the torch backend needs torch: {CONVERT_EXTRA}", "backend") from e
    from hearth.backends.asr_torch import TorchAsrModel

    if threads:
        torch.set_num_threads(threads)
    return TorchAsrModel.load(ckpt, getattr(torch, dtype))
