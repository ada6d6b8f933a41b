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

from hearth.backends.conversions import ConvertedModel, progress, staging
from hearth.backends.formats import BLOCKS, MAX_POSITIONS, part_formats
from hearth.checkpoint.loading import Checkpoint
from hearth.convert.networks import WeightSource, convert_language_model
from hearth.convert.vocoder_export import export_step, publish_vocoder
from hearth.model.weights import verify_weights

__all__ = ["build_language_model", "build_vocoder", "products_in_8_bits"]

log = logging.getLogger("hearth.backends.ort")  # the lines a user sees come from the backend's logger


def build_language_model(ckpt: Checkpoint, weights: str, directory: Path, key_source: dict[str, object]
                         ) -> ConvertedModel:
    """talker.onnx and predictor.onnx of `weights` (weights in .data files beside them) into the
    cache entry `directory`."""
    import onnx  # only to convert: its import alone takes most of a second

    from hearth.convert.ort_graphs import build_predictor_loop, build_talker

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


def build_vocoder(ckpt: Checkpoint, frames: int, directory: Path, key_source: dict[str, object],
                  weights: str = "fp32") -> ConvertedModel:
    """vocoder.onnx (weights beside it, fp32 or with the products' in 8 bits: `weights` int8) for
    1 to `frames` frames per call into the cache entry `directory`."""
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
            stored_bytes = products_in_8_bits(program.model) if weights == "int8" else fp32_bytes
        program.save(str(tmp / "vocoder.onnx"), external_data=True)
        return publish_vocoder(tmp, directory, key_source, state, fp32_bytes, stored_bytes, frames, t0)


def products_in_8_bits(model: Any) -> int:  # noqa: ANN401 (an onnx_ir Model)
    """Rewrite `model` (torch's export, in place) so that each MatMul by a constant [K, N] weight
    is a MatMulNBits on 8-bit blocks that computes on 8-bit inputs (accuracy level 4): blocks of
    `BLOCKS["int8"]` inputs, or the widest power of two down to 16 that divides K (else it stays
    fp32). The weights that are expressions of the checkpoint's (weight norm, the transposed
    convolution's reshapes) are folded into constants first. Returns the bytes of
    weights the model then holds."""
    import numpy as np
    from onnxscript import ir, optimizer

    from hearth.convert.ort_graphs import quantize_blocks

    unlimited = 1 << 40  # fold every constant expression, however large (the exporter stops at 1 MB)
    optimizer.fold_constants(model, input_size_limit=unlimited, output_size_limit=unlimited)
    graph = model.graph
    for node in list(graph):
        weight = node.inputs[1] if node.op_type == "MatMul" else None
        if weight is None or weight.const_value is None or len(weight.const_value.shape) != 2:
            continue
        k, n = weight.const_value.shape
        block = next((b for b in (BLOCKS["int8"] >> i for i in range(8)) if b >= 16 and k % b == 0), None)
        if block is None:
            continue
        packed, scales = quantize_blocks(weight.const_value.numpy().astype(np.float32).T, 8, block)
        stored = []
        for array, suffix in ((packed, "q8"), (scales, "scales")):
            name = f"{weight.name}.{suffix}"
            value = ir.Value(name=name, const_value=ir.tensor(array, name=name))
            graph.register_initializer(value)
            stored.append(value)
        product = ir.node("MatMulNBits", [node.inputs[0], *stored], domain="com.microsoft", name=f"{node.name}.q8",
                          attributes={"K": k, "N": n, "bits": 8, "block_size": block, "accuracy_level": 4})
        graph.insert_before(node, product)
        node.outputs[0].replace_all_uses_with(product.outputs[0], replace_graph_outputs=True)
        graph.remove(node, safe=True)
    for name in [name for name, value in graph.initializers.items() if not value.uses()]:
        del graph.initializers[name]
    model.opset_imports.setdefault("com.microsoft", 1)
    return sum(value.const_value.nbytes for value in graph.initializers.values() if value.const_value is not None)
