"""Converting for ONNX Runtime: the language model's graphs (talker and predictor loop, written
by `ort_graphs` with onnx) and the vocoder's (torch's ONNX exporter on the exported streaming step),
written into the cache entry the runtime named (`hearth.backends.ort` and `ort_vocoder` look it up
and call these when it is missing)."""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..backends.conversions import ConvertedModel, progress, staging
from ..backends.formats import MAX_POSITIONS, part_formats
from ..checkpoint import Checkpoint, verify_weights
from .recipe import WeightSource, convert_language_model
from .vocoder_export import export_step, publish_vocoder

__all__ = ["build_language_model", "build_vocoder"]

log = logging.getLogger("hearth.backends.ort")  # the lines a user sees come from the backend's logger


def build_language_model(ckpt: Checkpoint, weights: str, directory: Path, key_source: dict[str, object]
                         ) -> ConvertedModel:
    """talker.onnx and predictor.onnx of `weights` (weights in .data files beside them) into the
    cache entry `directory`."""
    import onnx  # only to convert: its import alone takes most of a second

    from .ort_graphs import build_predictor_loop, build_talker

    talker_format, predictor_format = part_formats(weights)

    def networks(source: WeightSource, manifest: dict[str, Any]) -> Iterator[tuple[str, Any, Any]]:
        yield "talker", *build_talker(ckpt.config.talker, source, talker_format, MAX_POSITIONS)
        yield "predictor", *build_predictor_loop(ckpt.config.talker, source, predictor_format)

    def save(model: Any, directory: Path, network: str) -> None:  # noqa: ANN401
        onnx.save_model(model, directory / f"{network}.onnx", save_as_external_data=True,
                        all_tensors_to_one_file=True, location=f"{network}.onnx.data", size_threshold=1024)

    return convert_language_model(ckpt, weights, directory, key_source, runtime="ONNX", log=log, networks=networks,
                                  save=save)


# The exporter's own lines (optional torchvision operators it skips, each initializer it merges):
# nothing a user can act on, so not shown among the conversion's lines.
_EXPORTER_LOGGERS = ("torch.onnx", "onnx_ir", "onnxscript")


@contextmanager
def _quiet(names: tuple[str, ...]) -> Iterator[None]:
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def build_vocoder(ckpt: Checkpoint, frames: int, directory: Path, key_source: dict[str, object]) -> ConvertedModel:
    """vocoder.onnx (fp32 weights beside it) for 1 to `frames` frames per call into the cache entry `directory`."""
    verify_weights(ckpt)
    import torch

    t0 = time.perf_counter()
    log.info("converting the vocoder to ONNX into %s; once per checkpoint", directory)
    with staging(directory) as tmp, progress("converting the vocoder", log):
        # ONNX Runtime's Sin is a vector kernel (OpenVINO's is scalar, hence its polynomial): with
        # it a 1-frame call took 64-73 ms against 72-88, a 5-frame one 265-307 against 276-346
        # (AVX2 path, two interleaved runs of six calls each).
        exported, state, fp32_bytes = export_step(ckpt, frames, polynomial_sine=False)
        with warnings.catch_warnings(), _quiet(_EXPORTER_LOGGERS):
            # As for OpenVINO's conversion: torch's decompositions trip a deprecation of its own.
            warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)` is deprecated",
                                    category=FutureWarning)
            program = torch.onnx.export(exported, dynamo=True, optimize=True, verbose=False)
        assert program is not None
        program.save(str(tmp / "vocoder.onnx"), external_data=True)
        return publish_vocoder(tmp, directory, key_source, state, fp32_bytes, fp32_bytes, frames, t0)
