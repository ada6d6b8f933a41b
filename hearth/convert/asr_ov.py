"""OpenVINO graphs of the hearing models (`asr_networks`' recipe, written with OpenVINO's operations):
the encoder's convolutions, its windowed transformer, and the decoder over a KV cache kept as the
infer request's state (ReadValue / Assign), each as an IR in the cache entry the runtime named.

Weights of the products are stored as `ov_graphs.Builder` stores the talker's (int8 per output row,
or fp32); the convolutions' (2.4 M values at 0.6B, compute-bound) stay fp32.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops

from hearth.backends.conversions import ConvertedModel
from hearth.checkpoint.asr_config import AsrConfig
from hearth.checkpoint.asr_loading import AsrCheckpoint
from hearth.convert import asr_networks as asr
from hearth.convert.ov_graphs import F32, Builder, int_const, ints_const

__all__ = ["AsrBuilder", "build", "conv_model", "decoder_model", "windows_model"]

log = logging.getLogger("hearth.backends.asr_openvino")  # the lines a user sees come from the backend's logger


class AsrBuilder(Builder):
    """`ov_graphs.Builder` with the encoder's operations (`asr_networks.EncoderWriter`)."""

    def _fp32(self, name: str) -> ov.Output:
        w = self.weights(name).astype(np.float32)
        self.bytes_fp32 += w.nbytes
        self.bytes_stored += w.nbytes
        return ops.constant(w).output(0)

    def conv2d(self, x: ov.Output, name: str) -> ov.Output:
        weight = self._fp32(name + ".weight")
        bias = self._fp32(name + ".bias")
        y = ops.convolution(x, weight, [2, 2], [1, 1], [1, 1], [1, 1])
        return ops.add(y, ops.reshape(bias, ints_const([1, -1, 1, 1]), False)).output(0)

    def layer_norm(self, x: ov.Output, name: str, eps: float) -> ov.Output:
        normed = ops.mvn(x, ints_const([-1]), True, eps, "inside_sqrt")
        return ops.add(ops.multiply(normed, self.vector(name + ".weight")), self.vector(name + ".bias")).output(0)

    def gelu(self, x: ov.Output) -> ov.Output:
        return ops.gelu(x, "erf").output(0)

    def self_attention(self, q: ov.Output, k: ov.Output, v: ov.Output, heads: int, head_dim: int) -> ov.Output:
        def split(x: ov.Output) -> ov.Output:  # [B, n, heads * d] -> [B, heads, n, d]
            return ops.transpose(ops.reshape(x, ints_const([0, 0, heads, head_dim]), True), ints_const([0, 2, 1, 3]))

        out = ops.scaled_dot_product_attention(split(q), split(k), split(v), None,
                                               ops.constant(np.float32(head_dim**-0.5)))
        joined = ops.transpose(out, ints_const([0, 2, 1, 3]))
        return ops.reshape(joined, ints_const([0, 0, heads * head_dim]), True).output(0)

    def flatten_steps(self, x: ov.Output) -> ov.Output:
        return ops.reshape(ops.transpose(x, ints_const([0, 3, 1, 2])), ints_const([0, 0, -1]), True).output(0)

    def add_positions(self, x: ov.Output, table: np.ndarray) -> ov.Output:
        steps = ops.gather(ops.shape_of(x, "i64"), ints_const([1]), int_const(0))
        rows = ops.slice(ops.constant(table.astype(np.float32)), ints_const([0]), steps, ints_const([1]),
                         ints_const([0]))
        return ops.add(x, rows).output(0)


def _named(model_outputs: list[tuple[ov.Output, str]], inputs: list[Any], name: str, sinks: list[Any] | None = None
           ) -> ov.Model:
    results = []
    for output, label in model_outputs:
        r = ops.result(output, name=label)
        r.output(0).get_tensor().set_names({label})
        results.append(r)
    return ov.Model(results, sinks or [], inputs, name)


def conv_model(b: AsrBuilder, cfg: AsrConfig) -> ov.Model:
    e = cfg.encoder
    chunks = ops.parameter([-1, 1, e.num_mel_bins, -1], F32, name="chunks")
    return _named([(asr.conv_front(b, chunks.output(0), e), "steps")], [chunks], "hearth_asr_conv")


def windows_model(b: AsrBuilder, cfg: AsrConfig) -> ov.Model:
    e = cfg.encoder
    x = ops.parameter([-1, -1, e.d_model], F32, name="windows")
    return _named([(asr.window_stack(b, x.output(0), e), "embeddings")], [x], "hearth_asr_windows")


def _rotate(x: ov.Output, cos: ov.Output, sin: ov.Output) -> ov.Output:
    """x [1, heads, n, d] with cos / sin [n, d]: x * cos + rotate_half(x) * sin."""
    first, second = ops.split(x, int_const(-1), 2).outputs()
    rotated = ops.concat([ops.negative(second), first], -1)
    return ops.add(ops.multiply(x, cos), ops.multiply(rotated, sin)).output(0)


def _causal_mask(queries: ov.Output, keys: ov.Output) -> ov.Output:
    """[n, L] additive mask: query i (at position L - n + i) sees keys 0 .. L - n + i."""
    n = ops.gather(ops.shape_of(queries, "i64"), int_const(2), int_const(0))
    total = ops.gather(ops.shape_of(keys, "i64"), int_const(2), int_const(0))
    rows = ops.add(ops.range(int_const(0), n, int_const(1), "i64"), ops.subtract(total, n))
    cols = ops.range(int_const(0), total, int_const(1), "i64")
    seen = ops.less_equal(ops.unsqueeze(cols, int_const(0)), ops.unsqueeze(rows, int_const(1)))
    lowest = np.float32(np.finfo(np.float32).min)
    return ops.select(seen, ops.constant(np.float32(0)), ops.constant(lowest)).output(0)


def decoder_model(b: AsrBuilder, cfg: AsrConfig) -> ov.Model:
    """embeds [1, n, H] at positions past .. past + n - 1 (cos / sin [n, head_dim] of them), select
    [k] (rows of this call) -> logits [k, head]; keys and values kept as state across calls."""
    s = cfg.decoder
    d, kv = s.head_dim, s.num_kv_heads
    embeds = ops.parameter([1, -1, s.hidden_size], F32, name="embeds")
    cos = ops.parameter([-1, d], F32, name="cos")
    sin = ops.parameter([-1, d], F32, name="sin")
    select = ops.parameter([-1], ov.Type.i64, name="select")
    empty = ops.constant(np.zeros((1, kv, 0, d), np.float32))
    sinks: list[Any] = []
    groups = s.num_heads // kv

    def to_bhnd(x: ov.Output, heads: int) -> ov.Output:  # [1, n, heads(, d)] -> [1, heads, n, d]
        return ops.transpose(ops.reshape(x, ints_const([0, 0, heads, d]), True), ints_const([0, 2, 1, 3])).output(0)

    def expand(x: ov.Output) -> ov.Output:  # [1, kv, L, d] -> [1, heads, L, d]
        if groups == 1:
            return x
        e = ops.broadcast(ops.unsqueeze(x, ints_const([2])), ints_const([1, 1, groups, 1, 1]),
                          broadcast_spec="BIDIRECTIONAL")
        return ops.reshape(e, ints_const([0, s.num_heads, -1, d]), True).output(0)

    def attend(q: ov.Output, k: ov.Output, v: ov.Output, layer: int) -> ov.Output:
        q = _rotate(to_bhnd(q, s.num_heads), cos.output(0), sin.output(0))
        full = []
        for kind, new in (("k", _rotate(to_bhnd(k, kv), cos.output(0), sin.output(0))), ("v", to_bhnd(v, kv))):
            var = f"past.{layer}.{kind}"
            cat = ops.concat([ops.read_value(empty, var, F32, [1, kv, -1, d]), new], 2)
            sinks.append(ops.assign(cat, var))
            full.append(cat.output(0))
        out = ops.scaled_dot_product_attention(q, expand(full[0]), expand(full[1]), _causal_mask(q, full[0]),
                                               ops.constant(np.float32(d**-0.5)))
        joined = ops.transpose(out, ints_const([0, 2, 1, 3]))
        return ops.reshape(joined, ints_const([0, 0, s.num_heads * d]), True).output(0)

    def selected(x: ov.Output) -> ov.Output:
        return ops.gather(ops.reshape(x, ints_const([-1, s.hidden_size]), False), select, int_const(0)).output(0)

    logits = asr.decoder(b, embeds.output(0), cfg, attend, selected)
    return _named([(logits, "logits")], [embeds, cos, sin, select], "hearth_asr_decoder", sinks)


def build(ckpt: AsrCheckpoint, weights: str, directory: Path, key_source: dict[str, object]) -> ConvertedModel:
    """conv.xml, windows.xml and decoder.xml of `ckpt` (`weights` int8 or fp32) into `directory`."""
    cfg = ckpt.config

    def networks(source: asr.recipe.WeightSource, manifest: dict[str, Any]) -> Iterator[tuple[str, Any, Any]]:
        for name, make in (("conv", conv_model), ("windows", windows_model), ("decoder", decoder_model)):
            b = AsrBuilder(source, weights)
            yield name, make(b, cfg), b

    def save(model: Any, directory: Path, network: str) -> None:  # noqa: ANN401
        ov.save_model(model, directory / f"{network}.xml", compress_to_fp16=False)

    return asr.build_asr(ckpt, weights, directory, key_source, runtime="OpenVINO", log=log, networks=networks,
                         save=save)
