"""Converting for OpenVINO: the language model's IRs (talker and predictor loop, built by
`ov_graphs` and `ov_predictor`, int4 by NNCF in `ov_int4`) and the vocoder's (torch's exported
streaming step through `ov.convert_model`), written into the cache entry the runtime named
(`hearth.backends.openvino` looks it up and calls these when it is missing)."""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hearth.backends.conversions import ConvertedModel, progress, staging
from hearth.backends.formats import INT4_RATIO
from hearth.backends.openvino import predictor_for_rows
from hearth.backends.row_pairs import ROW_PAIR
from hearth.checkpoint.loading import Checkpoint
from hearth.convert.networks import WeightSource, convert_language_model
from hearth.convert.vocoder_export import export_step, publish_vocoder
from hearth.model.weights import verify_weights

__all__ = ["build_language_model", "build_vocoder"]

log = logging.getLogger("hearth.backends.openvino")  # the lines a user sees come from the backend's logger


def build_language_model(ckpt: Checkpoint, weights: str, directory: Path, key_source: dict[str, object]
                         ) -> ConvertedModel:
    """The talker and predictor-loop IRs of `weights` into the cache entry `directory`."""
    import openvino as ov

    from hearth.convert.ov_graphs import build_talker
    from hearth.convert.ov_predictor import build_predictor_loop

    def networks(source: WeightSource, manifest: dict[str, Any]) -> Iterator[tuple[str, Any, Any]]:
        compressed = None
        if weights == "int4":
            from hearth.convert.ov_int4 import compress_int4, int4_candidates

            log.info("compressing the transformer layers to int4 with NNCF (data-free, group-wise)")
            compressed = compress_int4(int4_candidates(ckpt.config.talker), source, INT4_RATIO)
            manifest["int4_layers"] = len(compressed.int4)
            manifest["int8_layers"] = len(compressed.outputs) - len(compressed.int4)
        yield "talker", *build_talker(ckpt.config.talker, source, weights, compressed=compressed)
        yield "predictor", *build_predictor_loop(ckpt.config.talker, source, weights, compressed=compressed)

    def save(model: Any, directory: Path, network: str) -> None:  # noqa: ANN401
        if network == "predictor":
            model = predictor_for_rows(model, ROW_PAIR)
        ov.save_model(model, directory / f"{network}.xml", compress_to_fp16=False)

    return convert_language_model(ckpt, weights, directory, key_source, runtime="OpenVINO", log=log,
                                  networks=networks, save=save)


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
