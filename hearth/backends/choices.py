"""The backend options a load can choose, what each needs installed, and their checks."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from hearth.backends.formats import OPENVINO_VOCODERS, ORT_VOCODERS, VOCODER_FRAMES
from hearth.errors import CONVERT_EXTRA

__all__ = ["BACKENDS", "COMPILED_VOCODERS", "CORE_TYPES", "DEVICES", "LM_WEIGHTS", "ORT_WEIGHTS", "TORCH_DTYPES",
           "VOCODER_PRECISIONS", "BackendOptions", "default_vocoder", "onnxruntime_available", "openvino_available",
           "torch_available"]

BACKENDS = ("openvino", "onnxruntime", "torch")
# The formats ONNX Runtime's language model takes. "mix": the talker (and with it the first
# codebook) in int8, the predictor (the other 15 codebooks) in 4 bits.
ORT_WEIGHTS = ("int8", "int4", "mix", "fp32")
LM_WEIGHTS = ("int8", "int4", "mix", "fp16", "fp32")
# OpenVINO's three, ONNX Runtime's ("onnxruntime": fp32; "onnxruntime-int8": its products' weights
# in 8 bits), the torch reference's.
COMPILED_VOCODERS = (*OPENVINO_VOCODERS, *ORT_VOCODERS)
VOCODER_PRECISIONS = (*COMPILED_VOCODERS, "torch")
TORCH_DTYPES = ("float32", "bfloat16")
CORE_TYPES = ("ANY_CORE", "PCORE_ONLY", "ECORE_ONLY")
DEVICES = ("CPU", "GPU", "NPU", "AUTO", "HETERO", "MULTI")  # OpenVINO device names, before any ".N" / ":"


def onnxruntime_available() -> bool:
    """Installed (found, not imported); converting for it also needs onnx (the convert extra)."""
    return importlib.util.find_spec("onnxruntime") is not None


def default_vocoder() -> str:
    """OpenVINO's bf16 vocoder on x86; on ARM ONNX Runtime's fp32 one (else OpenVINO's in fp32).
    OpenVINO turns a bf16 network into f16 on ARM, and oneDNN there has no f16 MatMul for the
    one-position steps of the streaming vocoder ("could not create a primitive descriptor"), so
    the x86 default never ran on a Neoverse N1 (arm64 under qemu-user; scripts/arm64.sh)."""
    from hearth.platform.topology import is_arm

    if not is_arm():
        return "bf16"
    return "onnxruntime" if onnxruntime_available() else "fp32"


def torch_available() -> bool:
    """Installed (by its package metadata; not imported): it converts models and runs the reference.
    The runtime alone (`pip install hearth-tts`) has none."""
    from hearth.backends.conversions import tool_version

    return tool_version("torch") is not None


def openvino_available() -> bool:
    """Installed (found, not imported: an engine that does not use OpenVINO never loads it)."""
    return importlib.util.find_spec("openvino") is not None


@dataclass(frozen=True)
class BackendOptions:
    """Which implementation runs each network, and how.

    backend: "openvino" (the fast path), "onnxruntime" (the language model on ONNX Runtime, whose
    quantized kernels are the faster ones on CPUs without AVX-512) or "torch" (the reference:
    bit-exact with the official package; `dtype` float32 or bfloat16). For the compiled backends:
    the language model's weight format, its device and threads; the vocoder's precision on
    OpenVINO ("bf16", "fp16", "fp32"), on ONNX Runtime ("onnxruntime": fp32; "onnxruntime-int8":
    the products' weights in 8 bits, the small preset's) or "torch" (the torch fp32 vocoder), its
    device, and the most frames a compiled vocoder decodes per call (fewer: smaller buffers, more
    calls; the audio is the same to float rounding).
    None means "the runtime's choice" for threads, and "decided from the CPU topology" for
    `overlap` (whether generation goes on while a chunk is decoded).
    """

    backend: str = "openvino"
    weights: str = "int8"
    device: str = "CPU"
    threads: int | None = None
    vocoder: str | None = None  # None: see `vocoder_precision`
    vocoder_device: str = "CPU"
    vocoder_threads: int | None = None
    lm_core_type: str = "ANY_CORE"  # OpenVINO SCHEDULING_CORE_TYPE
    vocoder_core_type: str = "ANY_CORE"
    overlap: bool | None = None
    dtype: str = "float32"  # torch backend only
    vocoder_call_frames: int | None = None  # the most frames per compiled-vocoder call (1 to VOCODER_FRAMES; None: all)
    # The rows the language model steps together at most (a batching server's max batch): OpenVINO
    # compiles its predictor loop for exactly that many (see `OpenVINOLanguageModel`).
    batch_rows: int = 1

    @property
    def vocoder_precision(self) -> str:
        """The vocoder given, else torch's with the torch backend and OpenVINO's in bf16 otherwise.
        ONNX Runtime's ("onnxruntime") is not the default beside ONNX Runtime's language model on
        CPUs without bf16, though it takes 100 MB less and starts 1.3 s sooner there: its chunks
        cost 5-10 % more, and the real-time factor came out 2-13 % worse in each of five sittings
        (docs/performance.md). `hearth tune` measures both on the machine at hand and keeps the
        faster."""
        if self.vocoder is not None:
            return self.vocoder
        return "torch" if self.backend == "torch" else default_vocoder()

    @property
    def vocoder_on_onnxruntime(self) -> bool:
        return self.vocoder_precision in ORT_VOCODERS

    @property
    def uses_openvino(self) -> bool:
        return self.backend == "openvino" or not (self.vocoder_precision == "torch" or self.vocoder_on_onnxruntime)

    @property
    def loads_side_by_side(self) -> bool:
        """One runtime for both networks, ONNX Runtime's or OpenVINO's: once its libraries are open
        (`factory.prepare_side_by_side`) it opens none, so its networks (and the tokenizer) may
        load on several threads at once (see `create`)."""
        if self.backend == "onnxruntime":
            return self.vocoder_on_onnxruntime
        return self.backend == "openvino" and self.vocoder_precision in OPENVINO_VOCODERS

    def validate(self) -> None:
        """Raises ValueError naming the allowed values."""
        choices = {"backend": BACKENDS, "weights": LM_WEIGHTS, "dtype": TORCH_DTYPES,
                   "lm_core_type": CORE_TYPES, "vocoder_core_type": CORE_TYPES}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        if self.vocoder_precision not in VOCODER_PRECISIONS:
            raise ValueError(f"vocoder must be one of {', '.join(VOCODER_PRECISIONS)}, got {self.vocoder!r}")
        for name in ("device", "vocoder_device"):
            value = getattr(self, name)
            if not isinstance(value, str) or value.split(".")[0].split(":")[0] not in DEVICES:
                raise ValueError(f"{name} must be an OpenVINO device ({', '.join(DEVICES)}), got {value!r}")
        for name in ("threads", "vocoder_threads", "batch_rows"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
        calls = self.vocoder_call_frames
        if calls is not None and (isinstance(calls, bool) or not isinstance(calls, int)
                                  or not 1 <= calls <= VOCODER_FRAMES):
            raise ValueError(f"vocoder_call_frames must be a whole number from 1 to {VOCODER_FRAMES}, got {calls!r}")
        if self.vocoder_on_onnxruntime:
            if self.vocoder_device != "CPU":
                raise ValueError(f"the {self.vocoder_precision} vocoder runs on the CPU; for a GPU choose vocoder "
                                 "bf16, fp16 or fp32 (OpenVINO) with vocoder_device GPU")
            if not onnxruntime_available():
                raise ValueError(f"the {self.vocoder_precision} vocoder needs onnxruntime: pip install onnxruntime "
                                 "(or choose vocoder bf16)")
        if self.backend == "onnxruntime":
            if self.weights not in ORT_WEIGHTS:
                raise ValueError(f"weights with onnxruntime must be one of {', '.join(ORT_WEIGHTS)}, "
                                 f"got {self.weights!r}")
            if self.device != "CPU":
                raise ValueError("the onnxruntime backend runs the language model on the CPU; for a GPU choose backend "
                                 "openvino with device GPU")
            if not onnxruntime_available():
                raise ValueError("the onnxruntime backend needs onnxruntime: pip install onnxruntime "
                                 "(or choose backend openvino)")
        if self.backend == "openvino" and self.weights == "mix":
            raise ValueError("weights mix (an int8 talker, a 4-bit predictor) runs on ONNX Runtime: add backend "
                             "onnxruntime (--backend onnxruntime)")
        if self.backend != "torch" and self.dtype != "float32":
            raise ValueError("dtype applies to the torch backend; OpenVINO's precision is chosen with weights "
                             f"({', '.join(LM_WEIGHTS)})")
        if (self.backend == "torch" or self.vocoder_precision == "torch") and not torch_available():
            raise ValueError(f"the torch reference needs torch, which is not installed: {CONVERT_EXTRA} (or choose a "
                             "compiled backend: openvino or onnxruntime)")
        if self.uses_openvino and not openvino_available():
            raise ValueError("this needs OpenVINO, which is not installed: pip install openvino "
                             "(or choose the torch reference: backend 'torch', vocoder 'torch')")
