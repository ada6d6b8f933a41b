"""int4 weights by NNCF's data-free weight compression, shared wherever a graph uses a weight twice.

NNCF compresses the weights of an OpenVINO model's matrix products. Run on the unrolled predictor
loop, where each weight feeds fifteen products (one per codebook), it would compress and store
every use on its own, fifteen copies. So it runs on a model made for it instead: one product per
unique weight (all of the talker's and the predictor's layers at once, so its mixed-precision
choice sees them all). Each product's compressed weight (the 4-bit constant with its group scales,
and the small subgraph that widens it) is then wired into the real graphs wherever the weight is
used, once. Output heads stay int8 (`ov_graphs`' own per-row scheme), as NNCF's defaults keep
embeddings and last layers at 8 bits.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import openvino as ov
import openvino.opset13 as ops

from hearth.checkpoint.config import TalkerConfig
from hearth.convert.networks import WeightSource

__all__ = ["INT4_GROUP", "Int4Weights", "compress_int4", "int4_candidates"]

log = logging.getLogger(__name__)

INT4_GROUP = 128  # weights per scale along the input dimension (NNCF adjusts it for narrow layers)
_PREFIX = "hearth.weight/"


@dataclass
class Int4Weights:
    """Compressed weights by tensor name: the graph value to use for each, and what it stores."""

    outputs: dict[str, ov.Output] = field(default_factory=dict)
    stored_bytes: dict[str, int] = field(default_factory=dict)
    int4: set[str] = field(default_factory=set)  # the ones NNCF made 4-bit (the rest its 8-bit backup)


def int4_candidates(cfg: TalkerConfig) -> list[str]:
    """The weights compressed to 4 bits where the error allows: every linear layer of the talker's
    and the predictor's transformer stacks (not the output heads, not the embedding tables)."""
    names = []
    for prefix, layers in (("talker.model.layers.", cfg.stack.num_layers),
                           ("talker.code_predictor.model.layers.", cfg.predictor.num_layers)):
        for i in range(layers):
            for part in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                         "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"):
                names.append(f"{prefix}{i}.{part}.weight")
    return names


def compress_int4(names: Iterable[str], weights: WeightSource, ratio: float = 1.0) -> Int4Weights:
    """NNCF INT4_SYM, group-wise, data-free, over `names` (fp32 arrays from `weights(name)`):
    `ratio` of them (by NNCF's weight-quantization-error sensitivity, least sensitive first) in 4
    bits, the rest INT8_SYM."""
    import nncf
    from nncf.quantization.advanced_parameters import AdvancedCompressionParameters, GroupSizeFallbackMode

    names = list(names)
    params, results = [], []
    for name in names:
        w = weights(name)
        x = ops.parameter([1, w.shape[1]], ov.Type.f32, name=f"x.{name}")
        product = ops.matmul(x, ops.constant(w), False, True)
        product.set_friendly_name(_PREFIX + name)
        params.append(x)
        results.append(ops.result(product))
    carrier = ov.Model(results, params, "hearth_weights")
    with _stdout_to_stderr():  # NNCF reports (and draws its progress bar) on stdout, which carries data
        compressed = nncf.compress_weights(
            carrier, mode=nncf.CompressWeightsMode.INT4_SYM, group_size=INT4_GROUP, ratio=ratio, all_layers=True,
            sensitivity_metric=nncf.SensitivityMetric.WEIGHT_QUANTIZATION_ERROR,
            backup_mode=nncf.BackupMode.INT8_SYM,
            advanced_parameters=AdvancedCompressionParameters(group_size_fallback_mode=GroupSizeFallbackMode.ADJUST),
        )
    out = Int4Weights()
    for op in compressed.get_ordered_ops():
        if op.get_type_name() != "MatMul" or not op.get_friendly_name().startswith(_PREFIX):
            continue
        name = op.get_friendly_name()[len(_PREFIX):]
        weight = op.input_value(1)
        out.outputs[name] = weight
        constants = _constants(weight.get_node())
        out.stored_bytes[name] = sum(c.get_byte_size() for c in constants)
        if any(c.get_element_type() in (ov.Type.i4, ov.Type.u4) for c in constants):
            out.int4.add(name)
    missing = set(names) - set(out.outputs)
    if missing:
        raise RuntimeError(f"NNCF's compressed model lacks {len(missing)} weights, e.g. {sorted(missing)[0]}")
    log.info("int4 weights: %d of %d layers in 4 bits", len(out.int4), len(out.outputs))
    return out


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    handlers = [h for h in logging.getLogger("nncf").handlers
                if isinstance(h, logging.StreamHandler) and h.stream is sys.stdout]
    for h in handlers:
        h.setStream(sys.stderr)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        for h in handlers:
            h.setStream(sys.stdout)


def _constants(node: ov.Node) -> list[ov.Node]:
    """The constants a weight's (decompression) subgraph reads."""
    seen: set[int] = set()
    todo, found = [node], []
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.get_type_name() == "Constant":
            found.append(n)
        todo.extend(i.get_source_output().get_node() for i in n.inputs())
    return found
