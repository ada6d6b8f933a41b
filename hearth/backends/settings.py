"""Process-wide settings, decided here and nowhere else: the cache directory, the settings saved by
`hearth tune`, the backend options a load ends up with, threads and the allocator's behaviour.

The CLI and `hearth.load()` both resolve their options through `backend_options`, so a flag and
the same keyword give the same engine: explicit values first, then tuned ones (measured for the
backend in use), then the defaults (OpenVINO int8 where OpenVINO is installed, else the torch
reference with a warning).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hearth.backends import COMPILED_VOCODERS, BackendOptions, openvino_available
from hearth.backends.formats import OPENVINO_VOCODERS
from hearth.platform.process import cache_dir, return_large_buffers_to_os

__all__ = [
    "DEFAULT_CHUNK_FRAMES",
    "DEFAULT_MAX_BATCH",
    "backend_options",
    "cache_dir",
    "chunk_frames",
    "configure_process",
    "listening_backend",
    "listening_threads",
    "load_tuned",
    "max_batch",
    "save_tuned",
    "tuned_path",
]

log = logging.getLogger(__name__)

DEFAULT_CHUNK_FRAMES = 5  # 0.4 s of audio per streamed chunk after the first
DEFAULT_MAX_BATCH = 4  # sentences a server generates together (`hearth bench --streams` measures it)


def tuned_path() -> Path:
    return cache_dir() / "tuned.json"


def load_tuned() -> dict[str, Any]:
    """Options saved by `hearth tune` (empty when there are none, or HEARTH_IGNORE_TUNED is set)."""
    if os.environ.get("HEARTH_IGNORE_TUNED"):
        return {}
    try:
        data = json.loads(tuned_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    options = data.get("options") if isinstance(data, dict) else None
    return dict(options) if isinstance(options, dict) else {}


def save_tuned(options: Mapping[str, Any], evidence: Mapping[str, Any]) -> Path:
    path = tuned_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"options": dict(options), "evidence": dict(evidence)}, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path


def _default_backend(given: Mapping[str, Any]) -> str:
    """OpenVINO, but for the language model on ARM and on x86 CPUs without AVX-512: there ONNX Runtime's
    quantized kernels are the faster ones. Medians of four interleaved pairs of `hearth bench
    --frames 40 --runs 4` (0.6B, int8; the code paths of such CPUs via `--cpu`): AVX2 alone, ONNX
    Runtime RTF 2.57 and first audio 0.50 s against OpenVINO's 3.18 and 0.57 s; AVX2 with
    AVX-VNNI 1.74 / 0.29 s against 2.29 / 0.34 s, in less memory (1.7 against 1.9-2.4 GB). With
    AVX-512 (+VNNI, BF16, AMX) ONNX Runtime's real-time factor is better too (1.48 against 1.62) but
    its prompt is slower (first audio 0.26 against 0.24 s), so OpenVINO stays there: no loss
    where Hearth was already fastest (docs/performance.md)."""
    from hearth.backends import onnxruntime_available
    from hearth.platform.topology import is_arm, simd

    wants_openvino = given.get("weights") == "fp16" or given.get("device", "CPU") != "CPU"
    if is_arm() and not wants_openvino and onnxruntime_available():
        # OpenVINO's paged attention has no f32 executor on ARM cores without SVE (a Neoverse N1
        # under qemu-user failed there); ONNX Runtime runs on every arm64 core.
        return "onnxruntime"
    if openvino_available():
        without_avx512 = simd().split("+")[0] in ("avx2", "avx", "sse42")
        if not wants_openvino and without_avx512 and onnxruntime_available():
            return "onnxruntime"
        return "openvino"
    log.warning("OpenVINO is not installed, so the slow torch reference runs; pip install openvino to get "
                "the fast path (or pass backend='torch' to choose the reference and silence this)")
    return "torch"


def listening_threads(backend: str) -> int | None:
    """Threads of the hearing models on `backend` unless given: the speech model's tuned count where
    `hearth tune` measured this backend, else None (the runtime's choice: one per physical core)."""
    tuned = load_tuned()
    threads = tuned.get("threads")
    return threads if tuned.get("backend", "openvino") == backend and isinstance(threads, int) else None


def listening_backend() -> str:
    """The runtime of the hearing models (Qwen3-ASR, the aligner) unless one is named: the one
    `hearth tune` measured for speech, else the speaking side's default rule (`_default_backend`),
    so that both sides of a process run on the same runtime and thread plan."""
    tuned = load_tuned().get("backend")
    return tuned if isinstance(tuned, str) else _default_backend({})


def backend_options(**explicit: Any) -> BackendOptions:
    """The options of a load: `explicit` keywords (None meaning "not given") over tuned settings over
    the defaults; `fast=True` makes the fast combination the defaults, `small=True` the small one (the
    fast one with the vocoder's products in 8 bits on ONNX Runtime: the least memory). Tuned settings apply only to
    the backend they were measured with. Raises ValueError for an unknown keyword or value, naming
    the choices."""
    small = bool(explicit.pop("small", False))
    fast = bool(explicit.pop("fast", False)) or small
    given = {k: v for k, v in explicit.items() if v is not None}
    if small:  # for 1 GB on every CPU, bf16 or not (docs/performance.md, Memory)
        given.setdefault("vocoder", "onnxruntime-int8")
    if fast:  # the fastest combination measured: 4-bit weights on ONNX Runtime (docs/performance.md)
        from hearth.backends import onnxruntime_available

        if given.get("backend") == "torch":
            raise ValueError(f"{'small' if small else 'fast'} is for the compiled backends; the torch reference has "
                             "no such mode")
        given.setdefault("backend", "onnxruntime" if onnxruntime_available() else "openvino")
        given.setdefault("weights", "int4")
    tuned = load_tuned()
    backend = given.get("backend") or tuned.get("backend") or _default_backend(given)
    merged: dict[str, Any] = {}
    if tuned.get("backend", "openvino") == backend:
        fields = BackendOptions.__dataclass_fields__
        merged.update({k: v for k, v in tuned.items() if k in fields})
    merged.update(given)
    merged["backend"] = backend
    try:
        options = BackendOptions(**merged)
    except TypeError as e:
        raise ValueError(f"{e}; the options are those of hearth.BackendOptions") from e
    options.validate()
    # An option that would change nothing is a mistake to point out, not to ignore.
    lm_only = [k for k in ("weights", "device", "lm_core_type") if k in given]
    if backend == "torch" and lm_only:
        raise ValueError(f"{', '.join(lm_only)}: for the OpenVINO language model only, and the backend is torch; "
                         "leave it out or choose backend openvino")
    vocoder_only = [k for k in ("vocoder_device", "vocoder_threads", "vocoder_core_type", "vocoder_call_frames")
                    if k in given]
    if options.vocoder_precision == "torch" and vocoder_only:
        raise ValueError(f"{', '.join(vocoder_only)}: for a compiled vocoder only, and the vocoder is torch; "
                         f"leave it out or choose a compiled vocoder ({', '.join(COMPILED_VOCODERS)})")
    if options.vocoder_on_onnxruntime and "vocoder_core_type" in given:
        raise ValueError(f"vocoder_core_type: for an OpenVINO vocoder only, and the vocoder is "
                         f"{options.vocoder_precision}; leave it out or choose one of OpenVINO's "
                         f"({', '.join(OPENVINO_VOCODERS)})")
    return options


def chunk_frames() -> int:
    """Frames per streamed chunk unless a request says otherwise: tuned, else 5."""
    value = load_tuned().get("chunk_frames")
    return value if isinstance(value, int) and value > 0 else DEFAULT_CHUNK_FRAMES


def max_batch() -> int:
    """Sentences a server generates together unless told otherwise: tuned, else 4."""
    value = load_tuned().get("max_batch")
    return value if isinstance(value, int) and value > 0 else DEFAULT_MAX_BATCH


_configured: set[str] = set()


def configure_process(options: BackendOptions) -> None:
    """Threads and allocator for a load with `options` (process-wide; the first load decides)."""
    if options.backend == "torch" and options.threads and "threads" not in _configured:
        import torch

        torch.set_num_threads(options.threads)
        _configured.add("threads")
    if options.uses_openvino and "allocator" not in _configured:
        return_large_buffers_to_os()
        _configured.add("allocator")
    if options.backend != "torch" and "blas" not in _configured:
        # numpy's own matrix products (the text projection of the compiled backends, tens of MFLOP a
        # prompt) on one thread: OpenBLAS's workers spin for a while after each product, on the
        # cores the runtime is about to use. With two of them on 2 vCPUs the prefill that follows
        # took 127-133 ms against 77-83 on one thread, first audio 0.30 s against 0.23 (0.6B, Zen 4,
        # two alternating pairs). Process-wide: OpenBLAS has one setting.
        from threadpoolctl import threadpool_limits

        threadpool_limits(1, user_api="blas")
        _configured.add("blas")
