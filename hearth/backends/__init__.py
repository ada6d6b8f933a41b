"""What executes the networks: the torch reference, or the OpenVINO fast path, behind one factory.

The engine sees a `Backend`: a `LanguageModel` (prompt embeddings and per-utterance sessions), a
`Vocoder` (per-stream state and decode steps), whether the two should run at once, and one
`warm_up()`. It never asks which implementation it got; `create` is the only place that knows.

Concurrency contract: sessions are independent. Any number may be open at once, on any threads;
each owns its caches and its sampling generator, so interleaving them changes no code. Vocoder
states are independent in the same way. One session or vocoder state must not be used from two
threads at once.
"""

from __future__ import annotations

from hearth.backends.choices import (
    BACKENDS,
    COMPILED_VOCODERS,
    CORE_TYPES,
    DEVICES,
    LM_WEIGHTS,
    ORT_WEIGHTS,
    TORCH_DTYPES,
    VOCODER_PRECISIONS,
    BackendOptions,
    default_vocoder,
    onnxruntime_available,
    openvino_available,
)
from hearth.backends.factory import Backend, create, create_vocoder, prepare_side_by_side
from hearth.backends.interfaces import LanguageModel, LMBatch, LMSession, SequentialBatch, Vocoder

__all__ = [
    "BACKENDS",
    "COMPILED_VOCODERS",
    "CORE_TYPES",
    "DEVICES",
    "LM_WEIGHTS",
    "ORT_WEIGHTS",
    "TORCH_DTYPES",
    "VOCODER_PRECISIONS",
    "Backend",
    "BackendOptions",
    "LMBatch",
    "LMSession",
    "LanguageModel",
    "SequentialBatch",
    "Vocoder",
    "create",
    "create_vocoder",
    "default_vocoder",
    "onnxruntime_available",
    "openvino_available",
    "prepare_side_by_side",
]
