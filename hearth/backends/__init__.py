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

import importlib.util
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

import torch

if TYPE_CHECKING:
    from ..checkpoint import Checkpoint
    from ..sampling import SamplingOptions

__all__ = [
    "BACKENDS",
    "LM_WEIGHTS",
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
    "openvino_available",
]

BACKENDS = ("openvino", "onnxruntime", "torch")
# The formats ONNX Runtime's language model takes. "mix": the talker (and with it the first
# codebook) in int8, the predictor (the other 15 codebooks) in 4 bits.
ORT_WEIGHTS = ("int8", "int4", "mix", "fp32")
LM_WEIGHTS = ("int8", "int4", "mix", "fp16", "fp32")
VOCODER_PRECISIONS = ("bf16", "fp16", "fp32", "onnxruntime", "torch")  # "onnxruntime": fp32 on ONNX Runtime
TORCH_DTYPES = ("float32", "bfloat16")
CORE_TYPES = ("ANY_CORE", "PCORE_ONLY", "ECORE_ONLY")
DEVICES = ("CPU", "GPU", "NPU", "AUTO", "HETERO", "MULTI")  # OpenVINO device names, before any ".N" / ":"


def _onnxruntime_available() -> bool:
    return importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None


def default_vocoder() -> str:
    """OpenVINO's bf16 vocoder on x86; on ARM ONNX Runtime's fp32 one (else OpenVINO's in fp32).
    OpenVINO turns a bf16 network into f16 on ARM, and oneDNN there has no f16 MatMul for the
    one-position steps of the streaming vocoder ("could not create a primitive descriptor"), so
    the x86 default never ran on a Neoverse N1 (arm64 under qemu-user; scripts/arm64.sh)."""
    from ..topology import is_arm

    if not is_arm():
        return "bf16"
    return "onnxruntime" if _onnxruntime_available() else "fp32"


def openvino_available() -> bool:
    """Installed (found, not imported: an engine that does not use OpenVINO never loads it)."""
    return importlib.util.find_spec("openvino") is not None


class LMSession(Protocol):
    """One utterance's language-model state (KV caches, the last hidden state, its generator)."""

    def prefill(self, embeds: torch.Tensor) -> torch.Tensor:
        """The prompt [1, L, hidden] -> fp32 codebook-0 logits of its last position [1, vocab]."""
        ...

    def step(self, embeds: torch.Tensor) -> torch.Tensor:
        """The next talker input [1, 1, hidden] -> fp32 codebook-0 logits [1, vocab]."""
        ...

    def predict(self, cb0: int) -> tuple[list[int], torch.Tensor]:
        """Codebooks 1..G-1 of the current frame, and the summed embedding of all G codes [1, 1, hidden]."""
        ...

    def close(self) -> None:
        """Release what the session holds (idempotent)."""
        ...


class LMBatch(Protocol):
    """Utterances stepped together: per frame, one talker call and one predictor call for all the
    rows given (each row keeps its own caches, position and sampling generator), so the weights are
    read once for all of them. Rows come from `open` and are closed by their owner. Used from one
    thread at a time (the batcher's).

    Each call returns one item per row: its result, or the exception its row raised (a row's
    failure is its own where the backend can tell; a failed runtime call fails every row in it).
    """

    max_rows: int
    shared_calls: bool  # one runtime call computes every row given (its failure fails them all)

    def open(self, options: SamplingOptions, rng: torch.Generator | None, prompt_length: int,
             prefix: int = 0) -> LMSession:
        """A new row (its `close()` gives its caches back). `prefix`: how many leading positions of
        its prompt depend on nothing but the voice, language and instruction (a backend may keep
        their keys and values and reuse them for the next prompt that starts the same way)."""
        ...

    def talker(self, rows: list[LMSession], embeds: list[torch.Tensor], prefill: list[bool]
               ) -> list[torch.Tensor | BaseException]:
        """Each row's next talker input ([1, n, hidden]: its prompt when `prefill`, else one step)
        -> its fp32 codebook-0 logits [1, vocab]."""
        ...

    def predict(self, rows: list[LMSession], cb0: list[int]) -> list[tuple[list[int], torch.Tensor] | BaseException]:
        """Codebooks 1..G-1 of each row's current frame and its summed embedding, as `LMSession.predict`."""
        ...

    def close(self) -> None: ...


class SequentialBatch:
    """Rows computed one after another, each by its own session: exactly what each would compute
    alone (batch-invariant by construction), but the weights are read once per row. The torch
    reference's batch: matrix products of several rows round differently from one row's (measured:
    no row of a batched product equals its single-row product here), so exact equality with the
    official package rules out sharing the weight reads."""

    shared_calls = False

    def __init__(self, lm: LanguageModel, max_rows: int):
        self.lm = lm
        self.max_rows = max_rows

    def open(self, options: SamplingOptions, rng: torch.Generator | None, prompt_length: int,
             prefix: int = 0) -> LMSession:
        return self.lm.session(options, rng, prompt_length, prefix)

    def talker(self, rows: list[LMSession], embeds: list[torch.Tensor], prefill: list[bool]
               ) -> list[torch.Tensor | BaseException]:
        out: list[torch.Tensor | BaseException] = []
        for row, x, first in zip(rows, embeds, prefill, strict=True):
            try:
                out.append(row.prefill(x) if first else row.step(x))
            except Exception as e:  # noqa: BLE001 - this row's failure, reported to its owner
                out.append(e)
        return out

    def predict(self, rows: list[LMSession], cb0: list[int]) -> list[tuple[list[int], torch.Tensor] | BaseException]:
        out: list[tuple[list[int], torch.Tensor] | BaseException] = []
        for row, code in zip(rows, cb0, strict=True):
            try:
                out.append(row.predict(code))
            except Exception as e:  # noqa: BLE001 - as above
                out.append(e)
        return out

    def close(self) -> None:
        pass


class LanguageModel(Protocol):
    """The talker and its code predictor: prompt embeddings, sessions, and batches of sessions."""

    def embed_text(self, ids: list[int]) -> torch.Tensor: ...

    def embed_codec(self, ids: list[int]) -> torch.Tensor: ...

    def embed_frames(self, codes: torch.Tensor) -> torch.Tensor:
        """Whole frames [frames, groups] -> their summed code embeddings [1, frames, hidden]."""
        ...

    def session(self, options: SamplingOptions, rng: torch.Generator | None, prompt_length: int,
                prefix: int = 0) -> LMSession:
        """One utterance's session (`prefix`: as for `LMBatch.open`)."""
        ...

    def batch(self, max_rows: int) -> LMBatch: ...

    def warm_up(self) -> None: ...

    def weights_mb(self) -> dict[str, dict[str, float]]: ...


class Vocoder(Protocol):
    """Codes to audio, carrying a per-stream state: `decode(codes, state)` appends k frames' audio."""

    first_chunk_frames: int  # the best first chunk for this vocoder (see `Backend.first_chunk_frames`)

    def start(self) -> Any:
        """The state of a new audio stream."""
        ...

    def fork(self, state: Any) -> Any:  # noqa: ANN401 - the backend's own state
        """A copy of `state` that goes on independently (decoding one never changes the other)."""
        ...

    def decode(self, codes: torch.Tensor, state: Any) -> torch.Tensor:
        """[k, 16] codes -> float samples [k * samples_per_frame], advancing `state`."""
        ...

    def __call__(self, codes: torch.Tensor) -> torch.Tensor:
        """Whole-sequence decode: the same as `decode` on a fresh state."""
        ...

    def warm_up(self) -> None: ...

    def weights_mb(self) -> dict[str, dict[str, float]]: ...


@dataclass(frozen=True)
class BackendOptions:
    """Which implementation runs each network, and how.

    backend: "openvino" (the fast path), "onnxruntime" (the language model on ONNX Runtime, whose
    quantized kernels are the faster ones on CPUs without AVX-512) or "torch" (the reference:
    bit-exact with the official package; `dtype` float32 or bfloat16). For the compiled backends:
    the language model's weight format, its device and threads; the vocoder's precision on
    OpenVINO ("bf16", "fp16", "fp32"), or "onnxruntime" (fp32 on ONNX Runtime) or "torch" (the
    torch fp32 vocoder), and its device.
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
    def uses_openvino(self) -> bool:
        return self.backend == "openvino" or self.vocoder_precision not in ("torch", "onnxruntime")

    @property
    def loads_side_by_side(self) -> bool:
        """ONNX Runtime alone: it loads no shared library after its import, so its sessions (and
        the tokenizer) may be made on several threads at once (see `create`)."""
        return self.backend == "onnxruntime" and self.vocoder_precision == "onnxruntime"

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
        for name in ("threads", "vocoder_threads"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
        if self.vocoder_precision == "onnxruntime":
            if self.vocoder_device != "CPU":
                raise ValueError("the onnxruntime vocoder runs on the CPU; for a GPU choose vocoder bf16, fp16 or fp32 "
                                 "(OpenVINO) with vocoder_device GPU")
            if not _onnxruntime_available():
                raise ValueError("the onnxruntime vocoder needs onnxruntime and onnx: pip install onnxruntime onnx "
                                 "onnxscript (or choose vocoder bf16)")
        if self.backend == "onnxruntime":
            if self.weights not in ORT_WEIGHTS:
                raise ValueError(f"weights with onnxruntime must be one of {', '.join(ORT_WEIGHTS)}, "
                                 f"got {self.weights!r}")
            if self.device != "CPU":
                raise ValueError("the onnxruntime backend runs the language model on the CPU; for a GPU choose backend "
                                 "openvino with device GPU")
            if not _onnxruntime_available():
                raise ValueError("the onnxruntime backend needs onnxruntime and onnx: pip install onnxruntime onnx "
                                 "(or choose backend openvino)")
        if self.backend == "openvino" and self.weights == "mix":
            raise ValueError("weights mix (an int8 talker, a 4-bit predictor) runs on ONNX Runtime: add backend "
                             "onnxruntime (--backend onnxruntime)")
        if self.backend != "torch" and self.dtype != "float32":
            raise ValueError("dtype applies to the torch backend; OpenVINO's precision is chosen with weights "
                             f"({', '.join(LM_WEIGHTS)})")
        if self.backend == "openvino" and self.weights == "int4" and importlib.util.find_spec("nncf") is None:
            raise ValueError("int4 weights are made by NNCF, which is not installed: pip install 'hearth-tts[int4]' "
                             "(or choose weights int8, the default)")
        if self.uses_openvino and not openvino_available():
            raise ValueError("this needs OpenVINO, which is not installed: pip install openvino "
                             "(or choose the torch reference: backend 'torch', vocoder 'torch')")


@dataclass
class Backend:
    """A loaded language model and vocoder, and how to run them together."""

    options: BackendOptions
    lm: LanguageModel
    vocoder: Vocoder
    overlap: bool  # generation goes on while a chunk is decoded

    @property
    def first_chunk_frames(self) -> int:
        """Frames in the first chunk unless a request says otherwise."""
        return self.vocoder.first_chunk_frames

    def warm_up(self) -> None:
        """Run each network once, so the first request does not pay for lazy set-up."""
        from ..process import trim_heap

        self.lm.warm_up()
        self.vocoder.warm_up()
        trim_heap()

    def weights_mb(self) -> dict[str, dict[str, float]]:
        """MB per part, in fp32 and as this backend stores it."""
        return {**self.lm.weights_mb(), **self.vocoder.weights_mb()}

    def describe(self) -> dict[str, Any]:
        return {**asdict(self.options), "vocoder": self.options.vocoder_precision, "overlap": self.overlap,
                "first_chunk_frames": self.first_chunk_frames}


def _overlap_default(options: BackendOptions) -> bool:
    """With OpenVINO on CPU, where the vocoder shares the language model's cores (the plan of
    `hearth.topology`), the two take turns: run at once, each slows the other by about what the
    overlap gains (2 vCPUs, three pairs of 5-run benches: real-time factor 1.21-1.27 taking
    turns, 1.25-1.28 overlapped), and taking turns costs less CPU. The torch reference overlaps."""
    if options.backend == "torch" or options.vocoder_device != "CPU" or options.device != "CPU":
        return True
    from ..topology import detect, plan

    p = plan(detect())
    return set(p.vocoder_cpus).isdisjoint(p.lm_cpus)


def prepare_side_by_side(checkpoint: Checkpoint, options: BackendOptions) -> None:
    """For options that load side by side: convert what `create` loads, or find it in the cache,
    on this thread. Converting imports onnx and torch's exporter, and the first lookup imports ONNX
    Runtime: each opens shared libraries, which must not happen while other threads start theirs
    (see `create`). After this, loading opens none."""
    from .ort import convert_language_model
    from .ort_vocoder import convert_vocoder

    options.validate()
    convert_language_model(checkpoint, options.weights)
    convert_vocoder(checkpoint)


def create(checkpoint: Checkpoint, options: BackendOptions) -> Backend:
    """Load `checkpoint` for `options` (validated first; ValueError names what to change, and a
    damaged or mismatched checkpoint raises CheckpointError before anything is converted: each
    conversion verifies the weight files first, and a cached one was made from files of the same
    identity, tensor table included; the torch loaders check as they read)."""
    options.validate()
    lm: LanguageModel
    vocoder: Vocoder
    if options.backend == "torch":
        from .pytorch import TorchLanguageModel

        lm = TorchLanguageModel.load(checkpoint, getattr(torch, options.dtype))
        vocoder = create_vocoder(checkpoint, options)
    elif options.backend == "onnxruntime":
        from .ort import ORTLanguageModel, convert_language_model

        if options.loads_side_by_side:
            from .ort_vocoder import ORTVocoder

            prepare_side_by_side(checkpoint, options)  # (cache hits when the engine prepared already)
            with ThreadPoolExecutor(1, thread_name_prefix="hearth-load") as pool:
                later = pool.submit(ORTVocoder, checkpoint, options.vocoder_threads)
                lm = ORTLanguageModel(checkpoint, options.weights, options.threads)
                vocoder = later.result()
        else:
            convert_language_model(checkpoint, options.weights)
            # One after the other. Loading them side by side (OpenVINO compiling the vocoder on one
            # thread while ONNX Runtime started its thread pools on another) saved about a second,
            # but it let a runtime's dlopen race the other's thread creation, which glibc does not
            # survive: "Inconsistency detected by ld.so: dl-tls.c: _dl_allocate_tls_init: Assertion
            # ... failed", and the process exits with 127 (seen in 4 of 6 full test runs in a fresh
            # install). ONNX Runtime alone opens its libraries at its import (strace), so its own
            # sessions may load side by side.
            vocoder = create_vocoder(checkpoint, options)
            lm = ORTLanguageModel(checkpoint, options.weights, options.threads)
    else:  # one OpenVINO core with one cache folder at a time: the two compile in turn
        from .openvino import OpenVINOLanguageModel

        lm = OpenVINOLanguageModel(checkpoint, options.weights, options.device, options.threads,
                                   core_type=options.lm_core_type)
        vocoder = create_vocoder(checkpoint, options)
    overlap = options.overlap if options.overlap is not None else _overlap_default(options)
    return Backend(options, lm, vocoder, overlap)


def create_vocoder(checkpoint: Checkpoint, options: BackendOptions) -> Vocoder:
    """The vocoder `create` makes for these options (alone: `hearth voice add` primes it)."""
    if options.vocoder_precision == "torch":
        from .pytorch import TorchVocoder

        return TorchVocoder.load(checkpoint)
    if options.vocoder_precision == "onnxruntime":
        from .ort_vocoder import ORTVocoder

        return ORTVocoder(checkpoint, options.vocoder_threads)
    from .openvino import OpenVINOVocoder

    return OpenVINOVocoder(checkpoint, options.vocoder_precision, options.vocoder_device, options.vocoder_threads,
                           core_type=options.vocoder_core_type)
