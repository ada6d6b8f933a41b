"""OpenVINO graphs of the talker (`recipe`'s, written with OpenVINO's operations), and the writer
and attention the predictor's graphs (`ov_predictor`) share.

The graphs compute what `hearth.model.talker` computes (same layer math, fp32 activations); only
weight storage differs by option: fp32, fp16, int8 per output channel (symmetric, scale per row,
the scheme of NNCF's INT8_SYM weight compression), which the CPU plugin executes as compressed
matrix products, or int4 (NNCF's own compression, `ov_int4`). The talker is built in the form of
OpenVINO's paged-attention transformation (`ov_paged`): tokens of several sequences side by side,
keys and values in a block cache the caller lays out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import openvino as ov
import openvino.opset13 as ops

from hearth.checkpoint.config import TalkerConfig, TransformerConfig
from hearth.convert import networks as recipe
from hearth.convert.networks import stored_rows

if TYPE_CHECKING:
    from hearth.convert.ov_int4 import Int4Weights

__all__ = ["F32", "Builder", "WeightSource", "attend", "build_talker", "int_const", "ints_const"]

WeightSource = recipe.WeightSource

F32 = ov.Type.f32


def ints_const(values: list[int]) -> ov.Output:
    return ops.constant(np.array(values, dtype=np.int64)).output(0)


def int_const(value: int) -> ov.Output:
    return ops.constant(np.array(value, dtype=np.int64)).output(0)


@dataclass
class Builder:
    """OpenVINO's `recipe.Writer`: the checkpoint's weights as graph constants in the chosen format,
    and the operations the recipe writes with."""

    weights: WeightSource
    fmt: str
    compressed: Int4Weights | None = None  # int4: NNCF's compressed weights (`ov_int4`); others int8
    bytes_stored: int = 0
    bytes_fp32: int = 0
    _made: dict[str, ov.Output] = field(default_factory=dict)
    _tables: dict[str, tuple[ov.Output, ov.Output | None]] = field(default_factory=dict)
    _heights: dict[str, int] = field(default_factory=dict)

    def matrix(self, name: str, compress: bool = True) -> ov.Output:
        """A [rows, cols] weight as a float32 graph value, stored in the chosen format (made once)."""
        if name not in self._made:
            self._made[name] = self._matrix(name, compress)
        return self._made[name]

    def _matrix(self, name: str, compress: bool) -> ov.Output:
        fmt = self.fmt if compress else "fp32"
        if fmt == "int4" and self.compressed is not None and name in self.compressed.outputs:
            output = self.compressed.outputs[name]
            self.bytes_fp32 += 4 * int(np.prod(list(output.get_shape())))
            self.bytes_stored += self.compressed.stored_bytes[name]
            return output
        w = self.weights(name)
        self.bytes_fp32 += w.size * 4
        values, scale = self._store(w, fmt)  # int4: output heads and embedding tables are int8
        if values.dtype == np.float32:
            return ops.constant(values).output(0)
        wide = ops.convert(ops.constant(values), F32)
        return (wide if scale is None else ops.multiply(wide, ops.constant(scale))).output(0)

    def _store(self, w: np.ndarray, fmt: str) -> tuple[np.ndarray, np.ndarray | None]:
        values, scale = stored_rows(w, fmt)
        self.bytes_stored += values.nbytes + (0 if scale is None else scale.nbytes)
        return values, scale

    def rows(self, name: str, index: ov.Output) -> ov.Output:
        """Rows `index` of an embedding table, gathered in the stored format and only then widened,
        so the runtime never materialises the whole table in float32."""
        if name not in self._made:
            w = self.weights(name)
            self.bytes_fp32 += w.size * 4
            values, scale = self._store(w, self.fmt)
            scales = None if scale is None else ops.constant(scale).output(0)
            self._tables[name] = (ops.constant(values).output(0), scales)
            self._made[name] = self._tables[name][0]
        table, row_scale = self._tables[name]
        row = ops.convert(ops.gather(table, index, int_const(0)), F32)
        if row_scale is not None:
            row = ops.multiply(row, ops.gather(row_scale, index, int_const(0)))
        return row.output(0)

    def _stack(self, names: list[str]) -> tuple[ov.Output, ov.Output | None, int]:
        """Same-shaped weights stacked [S, rows, cols] in the stored format (int4: int8), with per-row
        scales [S, rows, 1] for int8; and the rows of one."""
        arrays = [self.weights(name) for name in names]
        stack = np.stack(arrays)
        self.bytes_fp32 += stack.size * 4
        values, scale = self._store(stack.reshape(-1, stack.shape[-1]), self.fmt)
        return (ops.constant(values.reshape(stack.shape)).output(0),
                None if scale is None else ops.constant(scale.reshape(*stack.shape[:2], 1)).output(0), stack.shape[1])

    def stacked_matrix(self, names: list[str], index: ov.Output) -> ov.Output:
        """Weight `index` (a scalar) of `names`, same-shaped matrices stored once, stacked."""
        key = "stack:" + names[0]
        if key not in self._made:
            table, scale, _ = self._stack(names)
            self._tables[key] = (table, scale)
            self._made[key] = table
        table, scale = self._tables[key]
        w = ops.convert(ops.gather(table, index, int_const(0)), F32)
        if scale is not None:
            w = ops.multiply(w, ops.gather(scale, index, int_const(0)))
        return w.output(0)

    def stacked_rows(self, names: list[str], index: ov.Output, rows: ov.Output) -> ov.Output:
        """Rows `rows` [B] of table `index` (a scalar) of `names`, same-shaped tables stacked."""
        key = "rows:" + names[0]
        if key not in self._made:
            table, scale, height = self._stack(names)
            flat = ops.reshape(table, ints_const([-1, int(table.get_partial_shape()[2].get_length())]), False).output(0)
            flat_scale = None if scale is None else ops.reshape(scale, ints_const([-1, 1]), False).output(0)
            self._tables[key] = (flat, flat_scale)
            self._made[key] = flat
            self._heights[key] = height
        table, scale = self._tables[key]
        at = ops.add(ops.multiply(index, int_const(self._heights[key])), rows)
        row = ops.convert(ops.gather(table, at, int_const(0)), F32)
        if scale is not None:
            row = ops.multiply(row, ops.gather(scale, at, int_const(0)))
        return row.output(0)

    def vector(self, name: str) -> ov.Output:
        if name not in self._made:
            w = self.weights(name)
            self.bytes_fp32 += w.size * 4
            self.bytes_stored += w.size * 4
            self._made[name] = ops.constant(w.astype(np.float32)).output(0)
        return self._made[name]

    def linear(self, x: ov.Output, name: str, bias: bool = False) -> ov.Output:
        y = ops.matmul(x, self.matrix(name + ".weight"), False, True).output(0)
        if bias:
            y = ops.add(y, self.vector(name + ".bias")).output(0)
        return y

    def linears(self, x: ov.Output, names: list[str]) -> list[ov.Output]:
        return [self.linear(x, name) for name in names]

    # -- the recipe's arithmetic ---------------------------------------------------------------------

    def rms_norm(self, x: ov.Output, weight: ov.Output, eps: float) -> ov.Output:
        mean = ops.reduce_mean(ops.power(x, ops.constant(np.float32(2.0))), ints_const([-1]), True)
        inv = ops.divide(ops.constant(np.float32(1.0)), ops.sqrt(ops.add(mean, ops.constant(np.float32(eps)))))
        return ops.multiply(ops.multiply(x, inv), weight).output(0)

    def head_norm(self, x: ov.Output, weight: ov.Output, heads: int, head_dim: int, eps: float) -> ov.Output:
        """[B, n, heads * d] -> [B, n, heads, d], each head normed (`attend` takes heads apart)."""
        return self.rms_norm(_heads(x, heads, head_dim), weight, eps)

    def add(self, a: ov.Output, b: ov.Output) -> ov.Output:
        return ops.add(a, b).output(0)

    def mul(self, a: ov.Output, b: ov.Output) -> ov.Output:
        return ops.multiply(a, b).output(0)

    def div(self, a: ov.Output, b: ov.Output) -> ov.Output:
        return ops.divide(a, b).output(0)

    def silu(self, x: ov.Output) -> ov.Output:
        return ops.swish(x).output(0)

    def last_position(self, x: ov.Output) -> ov.Output:
        return ops.gather(x, ints_const([-1]), int_const(1)).output(0)

    def positions(self, a: ov.Output, b: ov.Output) -> ov.Output:
        return ops.concat([a, b], 1).output(0)

    def as_position(self, x: ov.Output) -> ov.Output:
        return ops.unsqueeze(x, ints_const([1])).output(0)

    def flat_rows(self, x: ov.Output) -> ov.Output:
        return ops.reshape(x, ints_const([0, -1]), True).output(0)

    def top_k(self, x: ov.Output, k: ov.Output) -> tuple[ov.Output, ov.Output]:
        values, indices = ops.topk(x, k, -1, "max", "value", "i64").outputs()
        return values, indices

    def softmax(self, x: ov.Output) -> ov.Output:
        return ops.softmax(x, -1).output(0)

    def cumsum(self, x: ov.Output, exclusive: bool = False) -> ov.Output:
        return ops.cumsum(x, int_const(-1), exclusive=exclusive).output(0)

    def below(self, a: ov.Output, b: ov.Output) -> ov.Output:
        return ops.convert(ops.less(a, b), F32).output(0)

    def count_at_most(self, x: ov.Output, limit: ov.Output) -> ov.Output:
        """[B] here (`pick` takes it so)."""
        return ops.reduce_sum(ops.convert(ops.less_equal(x, limit), ov.Type.i64), ints_const([-1]), False).output(0)

    def last_column(self, x: ov.Output) -> ov.Output:
        return ops.gather(x, ints_const([-1]), int_const(-1)).output(0)

    def pick(self, indices: ov.Output, position: ov.Output) -> ov.Output:
        width = ops.gather(ops.shape_of(indices, "i64"), ints_const([-1]), int_const(0))
        position = ops.minimum(position, ops.subtract(width, int_const(1)))
        picked = ops.gather(indices, ops.unsqueeze(position, ints_const([1])), int_const(1), 1)  # [B, 1]
        return ops.reshape(picked, ints_const([-1]), False).output(0)


def _rotate(x: ov.Output, cos: ov.Output, sin: ov.Output) -> ov.Output:
    """x [1, heads, n, d] with cos/sin broadcastable [n, d]: x * cos + rotate_half(x) * sin."""
    first, second = ops.split(x, int_const(-1), 2).outputs()
    rotated = ops.concat([ops.negative(second), first], -1)
    return ops.add(ops.multiply(x, cos), ops.multiply(rotated, sin)).output(0)


def _heads(x: ov.Output, heads: int, head_dim: int) -> ov.Output:
    """[B, n, heads * d] -> [B, n, heads, d]"""
    return ops.reshape(x, ints_const([0, -1, heads, head_dim]), True).output(0)


def _to_bhnd(x: ov.Output) -> ov.Output:
    return ops.transpose(x, ints_const([0, 2, 1, 3])).output(0)


def _expand_kv(kv: ov.Output, groups: int, heads: int, head_dim: int) -> ov.Output:
    """[B, kv, L, d] -> [B, kv * groups, L, d] (each kv head serves `groups` query heads)."""
    if groups == 1:
        return kv
    e = ops.unsqueeze(kv, ints_const([2]))
    e = ops.broadcast(e, ints_const([1, 1, groups, 1, 1]), broadcast_spec="BIDIRECTIONAL")
    return ops.reshape(e, ints_const([0, heads, -1, head_dim]), True).output(0)


Past = Callable[[ov.Output, ov.Output], tuple[ov.Output, ov.Output]]


def attend(q: ov.Output, k: ov.Output, v: ov.Output, cfg: TransformerConfig, cos: ov.Output, sin: ov.Output,
           past: Past, mask: ov.Output | None) -> ov.Output:
    """Attention of q, k ([B, n, heads, d], head-normed: `Builder.head_norm`) and v [B, n, kv * d]:
    rotary at cos/sin, `past(k, v)` the full keys/values (the cache's and these) -> [B, n, heads * d]."""
    d = cfg.head_dim
    q = _rotate(_to_bhnd(q), cos, sin)
    k = _rotate(_to_bhnd(k), cos, sin)
    keys, values = past(k, _to_bhnd(_heads(v, cfg.num_kv_heads, d)))
    groups = cfg.num_heads // cfg.num_kv_heads
    keys = _expand_kv(keys, groups, cfg.num_heads, d)
    values = _expand_kv(values, groups, cfg.num_heads, d)
    scale = ops.constant(np.float32(d**-0.5))
    if mask is None:
        out = ops.scaled_dot_product_attention(q, keys, values, None, scale)
    else:
        out = ops.scaled_dot_product_attention(q, keys, values, mask, scale)
    return ops.reshape(_to_bhnd(out.output(0)), ints_const([0, -1, cfg.num_heads * d]), True).output(0)


def build_talker(cfg: TalkerConfig, weights: WeightSource, fmt: str,
                 compressed: Int4Weights | None = None) -> tuple[ov.Model, Builder]:
    """The talker step for many sequences in one call, ready for OpenVINO's paged-attention
    transformation (`ov_paged`), which replaces its state with a block-table KV cache: one row per
    token, inputs_embeds [T, 1, H] and cos/sin [T, 1, 1, head_dim] for the tokens of all sequences
    laid end to end, and `select` [S] (the rows whose hidden state and logits are wanted: each
    sequence's last token) -> hidden [S, 1, H], logits [S, vocab].
    """
    s = cfg.stack
    b = Builder(weights, fmt, compressed)
    embeds = ops.parameter([-1, 1, s.hidden_size], F32, name="inputs_embeds")
    cos = ops.parameter([-1, 1, 1, s.head_dim], F32, name="cos")
    sin = ops.parameter([-1, 1, 1, s.head_dim], F32, name="sin")
    select = ops.parameter([-1], ov.Type.i64, name="select")
    beam = ops.parameter([-1], ov.Type.i32, name="beam_idx")
    empty = ops.constant(np.zeros((1, s.num_kv_heads, 0, s.head_dim), np.float32))
    sinks = []

    def stateful(layer: int) -> Callable[[ov.Output, ov.Output], tuple[ov.Output, ov.Output]]:
        def past(k: ov.Output, v: ov.Output) -> tuple[ov.Output, ov.Output]:
            full = []
            for kind, new in (("k", k), ("v", v)):
                var = f"past.{layer}.{kind}"
                read = ops.read_value(empty, var, F32, [-1, s.num_kv_heads, -1, s.head_dim])
                reordered = ops.gather(read, beam, int_const(0))
                cat = ops.concat([reordered, new], 2)
                sinks.append(ops.assign(cat, var))
                full.append(cat.output(0))
            return full[0], full[1]

        return past

    def layer_attention(q: ov.Output, k: ov.Output, v: ov.Output, layer: int) -> ov.Output:
        return attend(q, k, v, s, cos.output(0), sin.output(0), stateful(layer), None)

    def selected(x: ov.Output) -> ov.Output:
        return ops.gather(x, select, int_const(0)).output(0)

    last, logits = recipe.talker(b, cfg, embeds.output(0), layer_attention, selected)
    logits = b.flat_rows(logits)
    hidden = ops.result(last, name="hidden")
    out = ops.result(logits, name="logits")
    model = ov.Model([hidden, out], sinks, [embeds, cos, sin, select, beam], "hearth_talker_paged")
    hidden.output(0).get_tensor().set_names({"hidden"})
    out.output(0).get_tensor().set_names({"logits"})
    return model, b
