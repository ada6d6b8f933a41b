"""`create`: the only place that knows which implementation runs each network."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from hearth.backends.choices import BackendOptions
from hearth.backends.formats import ORT_VOCODERS
from hearth.backends.interfaces import LanguageModel, Vocoder

if TYPE_CHECKING:
    from hearth.backends.conversions import Converter
    from hearth.backends.vocoder_step import SteppedVocoder
    from hearth.checkpoint.loading import Checkpoint

__all__ = ["Backend", "create", "create_vocoder", "prepare_side_by_side"]


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
        from hearth.platform.process import trim_heap

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
    `hearth.platform.topology`), the two take turns: run at once, each slows the other by about what the
    overlap gains (2 vCPUs, three pairs of 5-run benches: real-time factor 1.21-1.27 taking
    turns, 1.25-1.28 overlapped), and taking turns costs less CPU. The torch reference overlaps."""
    if options.backend == "torch" or options.vocoder_device != "CPU" or options.device != "CPU":
        return True
    from hearth.platform.topology import detect, plan

    p = plan(detect())
    return set(p.vocoder_cpus).isdisjoint(p.lm_cpus)


def prepare_side_by_side(checkpoint: Checkpoint, options: BackendOptions, converter: Converter | None = None) -> None:
    """For options that load side by side: convert what `create` loads, or find it in the cache,
    and open the runtime's libraries, on this thread. Converting imports onnx, torch's exporter or
    NNCF, the first lookup imports the runtime, and OpenVINO opens its plugins and IR reader on
    first use: each opens shared libraries, which must not happen while other threads start theirs
    (see `create`). After this, loading opens none."""
    import numpy.random  # noqa: F401 - (the samplers' generators: opened here too)

    options.validate()
    if options.backend == "onnxruntime":
        from hearth.backends import ort, ort_vocoder

        ort.convert_language_model(checkpoint, options.weights, converter=converter)
        ort_vocoder.convert_vocoder(checkpoint, weights=ORT_VOCODERS[options.vocoder_precision], converter=converter)
    else:
        from hearth.backends import openvino

        openvino.open_runtime(options.device, options.vocoder_device)
        openvino.convert_language_model(checkpoint, options.weights, converter=converter)
        openvino.convert_vocoder(checkpoint, options.vocoder_precision, converter=converter)


def create(checkpoint: Checkpoint, options: BackendOptions, converter: Converter | None = None) -> Backend:
    """Load `checkpoint` for `options`, converting what the cache lacks with `converter` (handed in:
    the backends never import `hearth.convert`). Options are validated first (ValueError names what to change, and a
    damaged or mismatched checkpoint raises CheckpointError before anything is converted: each
    conversion verifies the weight files first, and a cached one was made from files of the same
    identity, tensor table included; the torch loaders check as they read)."""
    options.validate()
    lm: LanguageModel
    vocoder: Vocoder
    if options.backend == "torch":
        import torch

        from hearth.backends.pytorch import TorchLanguageModel

        lm = TorchLanguageModel.load(checkpoint, getattr(torch, options.dtype))
        vocoder = create_vocoder(checkpoint, options)
    elif options.backend == "onnxruntime":
        from hearth.backends.ort import ORTLanguageModel, convert_language_model

        if options.loads_side_by_side:
            from hearth.backends.ort_vocoder import ORTVocoder

            prepare_side_by_side(checkpoint, options, converter)  # (cache hits when the engine prepared already)
            with ThreadPoolExecutor(1, thread_name_prefix="hearth-load") as pool:
                later = pool.submit(ORTVocoder, checkpoint, options.vocoder_threads,
                                    weights=ORT_VOCODERS[options.vocoder_precision], converter=converter)
                lm = ORTLanguageModel(checkpoint, options.weights, options.threads, converter=converter)
                vocoder = later.result()
        else:
            convert_language_model(checkpoint, options.weights, converter=converter)
            # One after the other. Loading them side by side (OpenVINO compiling the vocoder on one
            # thread while ONNX Runtime started its thread pools on another) saved about a second,
            # but it let a runtime's dlopen race the other's thread creation, which glibc does not
            # survive: "Inconsistency detected by ld.so: dl-tls.c: _dl_allocate_tls_init: Assertion
            # ... failed", and the process exits with 127 (seen in 4 of 6 full test runs in a fresh
            # install). ONNX Runtime alone opens its libraries at its import (strace), so its own
            # sessions may load side by side.
            vocoder = create_vocoder(checkpoint, options, converter)
            lm = ORTLanguageModel(checkpoint, options.weights, options.threads, converter=converter)
    else:
        from hearth.backends.openvino import OpenVINOLanguageModel

        # OpenVINO's vocoder compiles beside the language model (each compile runs on one thread):
        # start to ready 1.1-1.4 s shorter for the 0.6B. Safe once every library the runtime opens
        # is open and the conversions exist (`prepare_side_by_side`, on this thread; see the dl-tls
        # note above); another runtime's vocoder (ONNX Runtime's, torch's) opens its own, so it
        # loads after.
        def language_model() -> LanguageModel:
            return OpenVINOLanguageModel(checkpoint, options.weights, options.device, options.threads,
                                         core_type=options.lm_core_type, rows=options.batch_rows,
                                         converter=converter)

        if options.loads_side_by_side:
            prepare_side_by_side(checkpoint, options, converter)  # (cache hits when the engine prepared already)
            with ThreadPoolExecutor(1, thread_name_prefix="hearth-load") as pool:
                compiled = pool.submit(create_vocoder, checkpoint, options, converter)
                lm = language_model()
                vocoder = compiled.result()
        else:
            lm = language_model()
            vocoder = create_vocoder(checkpoint, options, converter)
    overlap = options.overlap if options.overlap is not None else _overlap_default(options)
    return Backend(options, lm, vocoder, overlap)


def create_vocoder(checkpoint: Checkpoint, options: BackendOptions, converter: Converter | None = None) -> Vocoder:
    """The vocoder `create` makes for these options (alone: `hearth voice add` primes it)."""
    if options.vocoder_precision == "torch":
        from hearth.backends.pytorch import TorchVocoder

        return TorchVocoder.load(checkpoint)
    stepped: SteppedVocoder
    if options.vocoder_on_onnxruntime:
        from hearth.backends.ort_vocoder import ORTVocoder

        stepped = ORTVocoder(checkpoint, options.vocoder_threads, weights=ORT_VOCODERS[options.vocoder_precision],
                             converter=converter)
    else:
        from hearth.backends.openvino import OpenVINOVocoder

        stepped = OpenVINOVocoder(checkpoint, options.vocoder_precision, options.vocoder_device,
                                  options.vocoder_threads, core_type=options.vocoder_core_type, converter=converter)
    if options.vocoder_call_frames is not None:
        stepped.call_frames = options.vocoder_call_frames
    return stepped
