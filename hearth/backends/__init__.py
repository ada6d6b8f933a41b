"""What executes the networks: the torch reference, or the OpenVINO fast path.

The streaming pipeline and the service see only two interfaces: a `LanguageModel` (prompt
embeddings and per-utterance sessions, `hearth.generate`) and a `Vocoder` (`start()` a stream,
`decode(codes, stream)` the next frames). `BackendOptions` says which implementation serves each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch

__all__ = ["BACKENDS", "LM_WEIGHTS", "VOCODER_PRECISIONS", "BackendOptions", "Vocoder"]

BACKENDS = ("torch", "openvino")
LM_WEIGHTS = ("int8", "fp16", "fp32")
VOCODER_PRECISIONS = ("torch", "bf16", "fp16", "fp32")
CORE_TYPES = ("ANY_CORE", "PCORE_ONLY", "ECORE_ONLY")


class Vocoder(Protocol):
    def start(self) -> Any: ...

    def decode(self, codes: torch.Tensor, stream: Any) -> torch.Tensor: ...

    def __call__(self, codes: torch.Tensor) -> torch.Tensor: ...


@dataclass(frozen=True)
class BackendOptions:
    """backend "torch" (reference) or "openvino"; for OpenVINO the language model's weight format
    and device, the vocoder's precision ("torch" keeps the torch fp32 vocoder) and device, and
    thread counts (None: the runtime's choice)."""

    backend: str = "torch"
    weights: str = "int8"
    device: str = "CPU"
    threads: int | None = None
    vocoder: str | None = None  # None: "torch" with the torch backend, "bf16" with OpenVINO
    vocoder_device: str = "CPU"
    vocoder_threads: int | None = None
    lm_core_type: str = "ANY_CORE"  # OpenVINO SCHEDULING_CORE_TYPE: ANY_CORE, PCORE_ONLY, ECORE_ONLY
    vocoder_core_type: str = "ANY_CORE"
    # Whether generation goes on while a chunk is decoded. None: yes where the vocoder has cores
    # (or a device) of its own, or with the torch backend; no where both share the same cores.
    overlap: bool | None = None

    @property
    def vocoder_precision(self) -> str:
        if self.vocoder is not None:
            return self.vocoder
        return "torch" if self.backend == "torch" else "bf16"

    def validate(self) -> None:
        """Raises ValueError naming the allowed values."""
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.weights not in LM_WEIGHTS:
            raise ValueError(f"weights must be one of {', '.join(LM_WEIGHTS)}, got {self.weights!r}")
        if self.vocoder_precision not in VOCODER_PRECISIONS:
            raise ValueError(f"vocoder must be one of {', '.join(VOCODER_PRECISIONS)}, got {self.vocoder!r}")
        for name in ("lm_core_type", "vocoder_core_type"):
            if getattr(self, name) not in CORE_TYPES:
                raise ValueError(f"{name} must be one of {', '.join(CORE_TYPES)}")
        for name in ("threads", "vocoder_threads"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1")
        uses_openvino = self.backend == "openvino" or self.vocoder_precision != "torch"
        if uses_openvino:
            from .openvino import available

            if not available():
                raise ValueError("the OpenVINO backend needs the 'fast' extra: pip install 'hearth-tts[fast]'")
