"""The OpenVINO backend: the same generation algorithm, executed by the OpenVINO runtime.

The first load converts the checkpoint into the cache (`conversions`); a second start reads the
cached IR and the runtime's compiled blobs instead of the safetensors. Prompt embeddings (a few
rows of the text table through a small projection) stay in torch, as in the reference backend.
One talker over a paged KV cache serves single sessions and batches (`ov_paged`).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hearth.backends.conversions import (
    ConvertedModel,
    Converter,
    bounded_mapping,
    cache_entry,
    compiled_dir,
    handed_in,
    release_mapped_files,
    require_converter,
    tool_version,
    weights_mb,
)
from hearth.backends.embedder import load_embedder
from hearth.backends.formats import INT4_RATIO, OPENVINO_FORMATS
from hearth.backends.rotary import RotaryTable
from hearth.backends.row_pairs import ROW_PAIR, PooledLanguageModel, paired
from hearth.backends.vocoder_step import VOCODER_FRAMES, VOCODER_VERSION, SteppedVocoder
from hearth.checkpoint.loading import Checkpoint
from hearth.checkpoint.safetensors_mmap import SafetensorsFile
from hearth.platform.process import locale_kept
from hearth.platform.topology import simd

__all__ = ["OpenVINOLanguageModel", "OpenVINOVocoder", "language_model_refusal", "predictor_for_rows",
           "runtime_properties"]

if TYPE_CHECKING:
    from hearth.backends.ov_paged import PagedBatch

log = logging.getLogger(__name__)

# Bump when a graph changes, so stale cached conversions are never reused.
GRAPH_VERSION = "lm-8"  # 8: the predictor loop stored for a pair of rows (`predictor_for_rows`)


@locale_kept()  # (OpenVINO's compiles change the process's locale: see process.py)
def _core(device: str):  # noqa: ANN202 - the runtime's own type
    """The runtime, after checking that `device` exists on this machine (before any conversion).
    The first call also opens every library OpenVINO loads later (its plugins, the IR reader) and
    keeps them open, so that networks may then compile on several threads at once: a library
    opened on one thread while another starts threads is what glibc does not survive (see
    `factory.create`)."""
    import openvino as ov

    core = ov.Core()
    base = device.split(".")[0].split(":")[0]
    with _OPENING:
        if not _OPENED:
            # The devices, asked once a process: each asking loads every device's plugin, and one
            # that cannot load stays closed, so it is opened and dropped again at every asking (the
            # GPU plugin without libOpenCL.so.1: strace showed it on a compile thread while another
            # started threads).
            _DEVICES.extend(core.available_devices)
            _OPENED.append(ov.frontend.FrontEndManager().load_by_framework("ir"))
            _OPENED.extend(_hold_open("openvino"))  # (a runtime whose last core is gone closes its plugins)
    if base in ("CPU", "GPU", "NPU") and not any(d.split(".")[0] == base for d in _DEVICES):
        raise ValueError(f"OpenVINO device {device} is not available here; devices found: "
                         f"{', '.join(_DEVICES)} (see `hearth doctor`)")
    return core


_OPENING = threading.Lock()
_OPENED: list[Any] = []  # the IR reader and the runtime's libraries, held open for the process's life
_DEVICES: list[str] = []  # what the runtime found, asked once (see `_core`)


def _hold_open(name: str) -> list[Any]:
    """A handle on each shared library of this process whose file name starts with lib`name`
    (opened already: the handle only keeps it from being closed), so that no later use opens it
    again (Linux; none elsewhere)."""
    import ctypes

    try:
        maps = Path("/proc/self/maps").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    paths = {line.split(maxsplit=5)[-1] for line in maps if f"/lib{name}" in line and ".so" in line}
    return [ctypes.CDLL(p) for p in sorted(paths)]


def open_runtime(*devices: str) -> None:
    """Every library OpenVINO opens to compile for `devices`, opened on this thread (see `_core`)."""
    for device in devices:
        _core(device)


def convert_language_model(ckpt: Checkpoint, weights: str, root: Path | None = None,
                           converter: Converter | None = None) -> ConvertedModel:
    """The talker and predictor-loop IRs for this checkpoint and weight format (built once by
    `converter`, then cached)."""
    if weights not in OPENVINO_FORMATS:
        raise ValueError(f"weights must be one of {', '.join(OPENVINO_FORMATS)}, got {weights!r}")
    path = ckpt.path / "model.safetensors"
    options: dict[str, object] = {"graph": GRAPH_VERSION, "weights": weights}
    if weights == "int4":
        options |= {"nncf": tool_version("nncf"), "int4_ratio": INT4_RATIO}
    directory, key_source, done = cache_entry(f"lm-{weights}", options, path, root)
    if done is not None:
        return done
    what = "The language model (OpenVINO)"
    require_converter(what)
    if weights == "int4" and options["nncf"] is None:
        raise ValueError("int4 weights are made by NNCF, which is not installed: pip install 'hearth-tts[int4]' "
                         "(or choose weights int8, the default)")
    return handed_in(converter, what).openvino_language_model(ckpt, weights, directory, key_source)


def language_model_refusal(device: str = "CPU") -> str | None:
    """Why OpenVINO's language model cannot run on this machine's `device`, or None where it can.
    Its talker needs the CPU plugin's paged-attention kernel, which exists for x86 with AVX2 and up
    only: on ARM "AttentionExecutor creation fails"; on an x86 without AVX2 (SSE4.2: Atom, Celeron
    and Pentium N/J, the NAS class) its first step fails with "brgemm executor Init Failure"
    (OpenVINO 2026.4, shown through `--cpu sse42`)."""
    from hearth.platform.topology import is_arm

    if device.split(".")[0] != "CPU":
        return None
    if is_arm():
        return ("OpenVINO's CPU plugin has no paged-attention kernel on ARM ('AttentionExecutor creation fails'), "
                "so its language model cannot run here: use backend='onnxruntime' (ARM's default; --backend "
                "onnxruntime) or backend='torch'")
    if simd().split("+")[0] not in ("avx2", "avx512"):
        return (f"OpenVINO's CPU plugin has no paged-attention kernel for a CPU without AVX2 (this one: {simd()}; "
                "'brgemm executor Init Failure'), so its language model cannot run here: use backend='onnxruntime' "
                "(the default here; --backend onnxruntime) or backend='torch'")
    return None


def predictor_for_rows(model: Any, rows: int) -> Any:  # noqa: ANN401 - the runtime's own type
    """The predictor loop `model` for exactly `rows` rows. Its graph takes any number, but compiled
    for a fixed number its products run faster: for one row 77-80 ms a frame against 88-99 ms
    (0.6B, int8, 2-vCPU Zen 4, alternating calls; 898bc18's one-row graph 79 ms), for four rows
    87-95 against 99-115 ms. The conversion stores it for a pair of rows (a lone row goes beside
    a copy of itself: the determinism rule in `lm_rows`); a batching engine makes it wider
    at load (`OpenVINOLanguageModel`), and pads a batch of fewer rows (`PagedBatch`)."""
    import openvino as ov

    model.reshape({
        p: ov.PartialShape([ov.Dimension(rows), *list(p.get_partial_shape())[1:]])
        for p in model.inputs if p.get_partial_shape().rank.get_length() > 0
    })
    return model


def runtime_properties(
    device: str, weights: str, threads: int | None, precise: bool, core_type: str = "ANY_CORE"
) -> dict[str, object]:
    """Compile options: latency first; fp32 arithmetic where the weights are fp32 (the accurate mode)."""
    props: dict[str, object] = {"PERFORMANCE_HINT": "LATENCY"}
    if device == "CPU":
        if threads:
            props["INFERENCE_NUM_THREADS"] = threads
        props["SCHEDULING_CORE_TYPE"] = core_type
        props["ENABLE_HYPER_THREADING"] = False  # memory-bound: one thread per physical core
        if precise or weights != "fp32":
            # int8 weights: f32 activations with dynamic int8 quantization of the activations is
            # at least as fast as bf16 arithmetic (a 28-layer talker step on a 2-vCPU Zen 5 with
            # AVX-512 BF16: 18 ms against 19 ms), and more accurate.
            props["INFERENCE_PRECISION_HINT"] = "f32"
        if weights in ("int8", "int4"):
            props["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = 128
        # The unrolled predictor has ~700 fusable element-wise groups. As JIT "snippets" they cost
        # ~70 MB of code and buffers for a predictor loop 10-15 % faster here (medians of repeated
        # runs); off, the engine stays within 1.5 GB at 0.6B. Memory first on small machines.
        props["SNIPPETS_MODE"] = "DISABLE"
        if precise:
            props["KV_CACHE_PRECISION"] = "f32"
    return props


class OpenVINOLanguageModel(PooledLanguageModel):
    """The talker (over a paged KV cache, see `ov_paged`) and the 15-step predictor loop, each one
    compiled OpenVINO model, serving single sessions and batches alike.

    Sessions are independent: each is the one row of a batch of its own (its own infer requests and
    cache blocks), taken from a small pool of idle ones and given back when it closes, so any
    number can be open at once without touching each other (the runtime runs requests of one
    compiled model from several threads). `batch(n)` steps up to n rows in one call."""

    @locale_kept()  # (OpenVINO's compiles change the process's locale: see process.py)
    def __init__(
        self,
        ckpt: Checkpoint,
        weights: str = "int8",
        device: str = "CPU",
        threads: int | None = None,
        cache: Path | None = None,
        core_type: str = "ANY_CORE",
        rows: int = 1,
        converter: Converter | None = None,
    ):
        from hearth.backends.ov_paged import paged_talker_model
        from hearth.errors import InputError

        refusal = language_model_refusal(device)
        if refusal:  # (before anything converts)
            raise InputError(refusal, "backend")
        core = _core(device)
        self.config = ckpt.config
        # The predictor's compiled batch: every call has exactly this many rows.
        self.rows = paired(rows)
        self.weights = weights
        self.device = device
        self.converted = convert_language_model(ckpt, weights, cache, converter)
        compiled = compiled_dir(self.converted, simd())  # blobs hold ISA-specific code
        props = runtime_properties(device, weights, threads, precise=weights == "fp32", core_type=core_type)
        f = SafetensorsFile(ckpt.path / "model.safetensors")
        self.embedder = load_embedder(ckpt, f)
        stack = ckpt.config.talker.stack
        self.rotary = RotaryTable(stack.head_dim, stack.rope_theta)
        super().__init__()
        t0 = time.perf_counter()
        # One network at a time: compile, run once (the runtime lays out its weights on the first
        # call), and meanwhile keep dropping the pages of the cache files it has read, so the
        # mapped originals and the runtime's copy never sit in memory side by side.
        # The talker compiles without the runtime's cache: a compiled paged-attention network does not
        # import again (OpenVINO 2026.4 drops its nodes' head sizes from the blob), so a cached blob is
        # never used, and hashing the 450 MB network for its key cost 0.8 s of every start.
        # The two compile side by side: each compile runs on one thread (2.1 s for the 0.6B's
        # talker, 0.7 s for the predictor from its cached blob).
        with bounded_mapping([self.converted.directory]), ThreadPoolExecutor(1, "hearth-compile") as pool:
            later = pool.submit(self._compile_predictor, core, device, {**props, "CACHE_DIR": str(compiled)})
            self.talker = core.compile_model(paged_talker_model(str(self.converted.xml("talker"))), device, props)
            self.predictor = later.result()
            self._warm(2)  # the one-row batch becomes the pool's first
        log.debug("compiled and warmed up in %.1f s", time.perf_counter() - t0)

    def _compile_predictor(self, core: Any, device: str, props: dict[str, object]) -> Any:  # noqa: ANN401
        """The predictor loop compiled for `rows` rows: as stored (the runtime's cache is keyed by the
        file), else made wider first (keyed by the whole network, read to hash it)."""
        path = str(self.converted.xml("predictor"))
        if self.rows == ROW_PAIR:
            return core.compile_model(path, device, props)
        return core.compile_model(predictor_for_rows(core.read_model(path), self.rows), device, props)

    def _new_batch(self, max_rows: int) -> PagedBatch:
        from hearth.backends.ov_paged import PagedBatch

        return PagedBatch(self, max_rows)

    def warm_up(self) -> None:
        """A short utterance through a pooled session, then the mapped cache files are released
        (the runtime holds its own copy of the weights by then)."""
        self._warm(8)
        release_mapped_files([self.converted.directory])

    def weights_mb(self) -> dict[str, dict[str, float]]:
        return weights_mb(self.converted)


_RUNTIME_PRECISION = {"bf16": "bf16", "fp16": "f16", "fp32": "f32"}


def convert_vocoder(
    ckpt: Checkpoint, precision: str, root: Path | None = None, frames: int = VOCODER_FRAMES,
    converter: Converter | None = None,
) -> ConvertedModel:
    """The streaming vocoder step for 1 to `frames` frames per call as an IR (weights stored fp16 unless
    fp32), built once, then cached."""
    if precision not in _RUNTIME_PRECISION:
        raise ValueError(f"vocoder precision must be one of {', '.join(_RUNTIME_PRECISION)}, got {precision!r}")
    path = ckpt.path / "speech_tokenizer/model.safetensors"
    stored = "fp32" if precision == "fp32" else "fp16"
    options = {"graph": VOCODER_VERSION, "torch": tool_version("torch"), "stored": stored, "frames": frames}
    directory, key_source, done = cache_entry(f"vocoder-{stored}", options, path, root)
    if done is not None:
        return done
    what = "The vocoder (OpenVINO)"
    require_converter(what)
    return handed_in(converter, what).openvino_vocoder(ckpt, stored, frames, directory, key_source)


class OpenVINOVocoder(SteppedVocoder):
    """The streaming vocoder run by OpenVINO (bf16 by default). A call borrows an idle infer
    request (or makes one), so streams on several threads can decode at once."""

    @locale_kept()  # (OpenVINO's compiles change the process's locale: see process.py)
    def __init__(
        self,
        ckpt: Checkpoint,
        precision: str = "bf16",
        device: str = "CPU",
        threads: int | None = None,
        cache: Path | None = None,
        core_type: str = "ANY_CORE",
        frames: int = VOCODER_FRAMES,
        converter: Converter | None = None,
    ):
        core = _core(device)
        self.precision = precision
        super().__init__(ckpt.codec, convert_vocoder(ckpt, precision, cache, frames, converter), frames, device)
        core.set_property({"CACHE_DIR": str(compiled_dir(self.converted, simd()))})  # ISA-specific blobs
        props: dict[str, object] = {
            "PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": _RUNTIME_PRECISION[precision]
        }
        if device == "CPU":
            if threads:
                props["INFERENCE_NUM_THREADS"] = threads
            props["SCHEDULING_CORE_TYPE"] = core_type
        t0 = time.perf_counter()
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        with bounded_mapping([self.converted.directory]):  # as for the language model
            self.model = core.compile_model(str(self.converted.xml("vocoder")), device, props)
            self.warm_up()
        log.debug("compiled and warmed up in %.1f s", time.perf_counter() - t0)

    def infer(self, codes: np.ndarray, position: int, valid: int, tensors: list[np.ndarray]
               ) -> tuple[np.ndarray, list[np.ndarray]]:
        with self._lock:
            req = self._idle.pop() if self._idle else self.model.create_infer_request()
        try:
            req.infer([codes, np.array(position, np.int64), np.array(valid, np.int64), *tensors])
            audio = req.get_output_tensor(0).data.copy()
            return audio, [req.get_output_tensor(i + 1).data.copy() for i in range(len(tensors))]
        finally:
            with self._lock:
                if len(self._idle) < 2:
                    self._idle.append(req)

    def warm_up(self) -> None:
        super().warm_up()
        release_mapped_files([self.converted.directory])
