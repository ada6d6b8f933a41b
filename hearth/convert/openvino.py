"""Converting for OpenVINO: the language model's IRs (talker and predictor loop, built by
`ov_graphs` and `ov_predictor`, int4 by NNCF in `ov_int4`) and the vocoder's (torch's exported
streaming step through `ov.convert_model`), written into the cache entry the runtime named
(`hearth.backends.openvino` looks it up and calls these when it is missing)."""

from __future__ import annotations

import logging
import time
import warnings
from pathlib import Path

from ..backends.conversions import ConvertedModel, progress, publish, staging
from ..backends.openvino import INT4_RATIO
from ..checkpoint import Checkpoint, talker_weights, verify_weights
from .vocoder_export import export_step, publish_vocoder

__all__ = ["build_language_model", "build_vocoder"]

log = logging.getLogger("hearth.backends.openvino")  # the lines a user sees come from the backend's logger


def build_language_model(ckpt: Checkpoint, weights: str, directory: Path, key_source: dict[str, object]
                         ) -> ConvertedModel:
    """The talker and predictor-loop IRs of `weights` into the cache entry `directory`."""
    verify_weights(ckpt)

    import openvino as ov

    from .ov_graphs import build_talker
    from .ov_predictor import build_predictor_loop

    t0 = time.perf_counter()
    log.info("converting the language model to OpenVINO (%s weights) into %s; once per checkpoint", weights, directory)
    source = talker_weights(ckpt)

    with staging(directory) as tmp, progress("converting the language model", log):
        compressed = None
        if weights == "int4":
            from .ov_int4 import compress_int4, int4_candidates

            log.info("compressing the transformer layers to int4 with NNCF (data-free, group-wise)")
            compressed = compress_int4(int4_candidates(ckpt.config.talker), source, INT4_RATIO)
        parts = {}
        networks = (("talker", build_talker), ("predictor", build_predictor_loop))
        for network, build in networks:
            model, builder = build(ckpt.config.talker, source, weights, compressed=compressed)
            ov.save_model(model, tmp / f"{network}.xml", compress_to_fp16=False)
            parts[network] = {"fp32_bytes": builder.bytes_fp32, "stored_bytes": builder.bytes_stored}
            del model, builder
        manifest = {"key": key_source, "weights": weights, "parts": parts, "convert_s": time.perf_counter() - t0}
        if compressed is not None:
            manifest["int4_layers"] = len(compressed.int4)
            manifest["int8_layers"] = len(compressed.outputs) - len(compressed.int4)
        log.info("converted in %.1f s", manifest["convert_s"])
        return publish(tmp, directory, manifest)


def build_vocoder(ckpt: Checkpoint, stored: str, frames: int, directory: Path, key_source: dict[str, object]
                  ) -> ConvertedModel:
    """The vocoder step's IR (weights stored as `stored`: fp16 or fp32) into the cache entry `directory`."""
    verify_weights(ckpt)

    import openvino as ov

    t0 = time.perf_counter()
    log.info("converting the vocoder to OpenVINO into %s; once per checkpoint", directory)
    with staging(directory) as tmp:  # from the start: another process needing it waits meanwhile
        with progress("converting the vocoder", log):
            exported, state, fp32_bytes = export_step(ckpt, frames)
            with warnings.catch_warnings():
                # torch's own decompositions copy a tree spec through a check it has deprecated itself
                # (torch 2.10+): nothing the user can act on, so not shown among the conversion's lines.
                warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)` is deprecated",
                                        category=FutureWarning)
                model = ov.convert_model(exported)
        ov.save_model(model, tmp / "vocoder.xml", compress_to_fp16=stored == "fp16")
        stored_bytes = fp32_bytes // 2 if stored == "fp16" else fp32_bytes
        return publish_vocoder(tmp, directory, key_source, state, fp32_bytes, stored_bytes, frames, t0)
