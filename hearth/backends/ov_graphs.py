"""OpenVINO graphs of the talker and of the whole 15-step code-predictor loop, built op by op.

The graphs compute what `hearth.model.talker` computes (same layer math, fp32 activations); only
weight storage differs by option: fp32, fp16, int8 per output channel (symmetric, scale per row,
the scheme of NNCF's INT8_SYM weight compression), which the CPU plugin executes as compressed
matrix products, or int4 (NNCF's own compression, `ov_int4`). The talker is built in the form of
OpenVINO's paged-attention transformation (`ov_paged`): tokens of several sequences side by side,
keys and values in a block cache the caller lays out. The predictor loop takes the talker's hidden
state and codebook 0's embedding and returns codebooks 1..15 with the summed embedding of all 16,
for a batch of rows, sampling inside the graph from uniform draws the caller supplies (so a
seeded request is reproducible and independent of chunking and of its neighbours in a batch).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import torch

from ..config import TalkerConfig, TransformerConfig
from ..model.layers import Rotary

if TYPE_CHECKING:
    from .ov_int4 import Int4Weights

__all__ = ["WEIGHT_FORMATS", "WeightSource", "build_predictor_loop", "build_talker", "compress_int8"]

WEIGHT_FORMATS = ("fp32", "fp16", "int8", "int4")

# name -> float32 array; `done(name)` lets the source drop the file pages once a tensor is converted.
WeightSource = Callable[[str], np.ndarray]

_F32 = ov.Type.f32


def _ints(values: list[int]) -> ov.Output:
    return ops.constant(np.array(values, dtype=np.int64)).output(0)


def _int(value: int) -> ov.Output:
    return ops.constant(np.array(value, dtype=np.int64)).output(0)


def compress_int8(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row symmetric int8: w ~= q * scale, q in [-127, 127], scale [rows, 1] float32."""
    peak = np.abs(w).max(axis=1, keepdims=True)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale


@dataclass
class _Builder:
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
        if fmt == "int4":  # output heads and embedding tables
            fmt = "int8"
        if fmt == "int8":
            q, scale = compress_int8(w)
            self.bytes_stored += q.nbytes + scale.nbytes
            return ops.multiply(ops.convert(ops.constant(q), _F32), ops.constant(scale)).output(0)
        if fmt == "fp16":
            half = w.astype(np.float16)
            self.bytes_stored += half.nbytes
            return ops.convert(ops.constant(half), _F32).output(0)
        self.bytes_stored += w.nbytes
        return ops.constant(w).output(0)

    def rows(self, name: str, index: ov.Output) -> ov.Output:
        """Rows `index` of an embedding table, gathered in the stored format and only then widened,
        so the runtime never materialises the whole table in float32."""
        if name not in self._made:
            w = self.weights(name)
            self.bytes_fp32 += w.size * 4
            fmt = "int8" if self.fmt == "int4" else self.fmt
            if fmt == "int8":
                q, scale = compress_int8(w)
                self.bytes_stored += q.nbytes + scale.nbytes
                self._tables[name] = (ops.constant(q).output(0), ops.constant(scale).output(0))
            elif fmt == "fp16":
                half = w.astype(np.float16)
                self.bytes_stored += half.nbytes
                self._tables[name] = (ops.constant(half).output(0), None)
            else:
                self.bytes_stored += w.nbytes
                self._tables[name] = (ops.constant(w).output(0), None)
            self._made[name] = self._tables[name][0]
        table, row_scale = self._tables[name]
        row = ops.convert(ops.gather(table, index, _int(0)), _F32)
        if row_scale is not None:
            row = ops.multiply(row, ops.gather(row_scale, index, _int(0)))
        return row.output(0)

    def _stack(self, names: list[str]) -> tuple[ov.Output, ov.Output | None, int]:
        """Same-shaped weights stacked [S, rows, cols] in the stored format (int4: int8), with per-row
        scales [S, rows, 1] for int8; and the rows of one."""
        arrays = [self.weights(name) for name in names]
        stack = np.stack(arrays)
        self.bytes_fp32 += stack.size * 4
        fmt = "int8" if self.fmt == "int4" else self.fmt
        if fmt == "int8":
            q, scale = compress_int8(stack.reshape(-1, stack.shape[-1]))
            self.bytes_stored += q.nbytes + scale.nbytes
            return (ops.constant(q.reshape(stack.shape)).output(0),
                    ops.constant(scale.reshape(*stack.shape[:2], 1)).output(0), stack.shape[1])
        if fmt == "fp16":
            half = stack.astype(np.float16)
            self.bytes_stored += half.nbytes
            return ops.constant(half).output(0), None, stack.shape[1]
        self.bytes_stored += stack.nbytes
        return ops.constant(stack.astype(np.float32)).output(0), None, stack.shape[1]

    def stacked_matrix(self, names: list[str], index: ov.Output) -> ov.Output:
        """Weight `index` (a scalar) of `names`, same-shaped matrices stored once, stacked."""
        key = "stack:" + names[0]
        if key not in self._made:
            table, scale, _ = self._stack(names)
            self._tables[key] = (table, scale)
            self._made[key] = table
        table, scale = self._tables[key]
        w = ops.convert(ops.gather(table, index, _int(0)), _F32)
        if scale is not None:
            w = ops.multiply(w, ops.gather(scale, index, _int(0)))
        return w.output(0)

    def stacked_rows(self, names: list[str], index: ov.Output, rows: ov.Output) -> ov.Output:
        """Rows `rows` [B] of table `index` (a scalar) of `names`, same-shaped tables stacked."""
        key = "rows:" + names[0]
        if key not in self._made:
            table, scale, height = self._stack(names)
            flat = ops.reshape(table, _ints([-1, int(table.get_partial_shape()[2].get_length())]), False).output(0)
            flat_scale = None if scale is None else ops.reshape(scale, _ints([-1, 1]), False).output(0)
            self._tables[key] = (flat, flat_scale)
            self._made[key] = flat
            self._heights[key] = height
        table, scale = self._tables[key]
        at = ops.add(ops.multiply(index, _int(self._heights[key])), rows)
        row = ops.convert(ops.gather(table, at, _int(0)), _F32)
        if scale is not None:
            row = ops.multiply(row, ops.gather(scale, at, _int(0)))
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


def _rms_norm(x: ov.Output, weight: ov.Output, eps: float) -> ov.Output:
    mean = ops.reduce_mean(ops.power(x, ops.constant(np.float32(2.0))), _ints([-1]), True)
    inv = ops.divide(ops.constant(np.float32(1.0)), ops.sqrt(ops.add(mean, ops.constant(np.float32(eps)))))
    return ops.multiply(ops.multiply(x, inv), weight).output(0)


def _rotate(x: ov.Output, cos: ov.Output, sin: ov.Output, head_dim: int) -> ov.Output:
    """x [1, heads, n, d] with cos/sin broadcastable [n, d]: x * cos + rotate_half(x) * sin."""
    first, second = ops.split(x, _int(-1), 2).outputs()
    rotated = ops.concat([ops.negative(second), first], -1)
    return ops.add(ops.multiply(x, cos), ops.multiply(rotated, sin)).output(0)


def _heads(x: ov.Output, heads: int, head_dim: int) -> ov.Output:
    """[B, n, heads * d] -> [B, n, heads, d]"""
    return ops.reshape(x, _ints([0, -1, heads, head_dim]), True).output(0)


def _to_bhnd(x: ov.Output) -> ov.Output:
    return ops.transpose(x, _ints([0, 2, 1, 3])).output(0)


def _expand_kv(kv: ov.Output, groups: int, heads: int, head_dim: int) -> ov.Output:
    """[B, kv, L, d] -> [B, kv * groups, L, d] (each kv head serves `groups` query heads)."""
    if groups == 1:
        return kv
    e = ops.unsqueeze(kv, _ints([2]))
    e = ops.broadcast(e, _ints([1, 1, groups, 1, 1]), broadcast_spec="BIDIRECTIONAL")
    return ops.reshape(e, _ints([0, heads, -1, head_dim]), True).output(0)


def _attention_block(
    b: _Builder, x: ov.Output, p: str, cfg: TransformerConfig, cos: ov.Output, sin: ov.Output,
    past: Callable[[ov.Output, ov.Output], tuple[ov.Output, ov.Output]], mask: ov.Output | None,
) -> ov.Output:
    """One attention sub-block (after the input norm). `past(k, v)` returns the full keys/values."""
    d = cfg.head_dim
    q = _heads(b.linear(x, p + "q_proj"), cfg.num_heads, d)
    k = _heads(b.linear(x, p + "k_proj"), cfg.num_kv_heads, d)
    v = _heads(b.linear(x, p + "v_proj"), cfg.num_kv_heads, d)
    q = _to_bhnd(_rms_norm(q, b.vector(p + "q_norm.weight"), cfg.rms_norm_eps))
    k = _to_bhnd(_rms_norm(k, b.vector(p + "k_norm.weight"), cfg.rms_norm_eps))
    v = _to_bhnd(v)
    q = _rotate(q, cos, sin, d)
    k = _rotate(k, cos, sin, d)
    keys, values = past(k, v)
    groups = cfg.num_heads // cfg.num_kv_heads
    keys = _expand_kv(keys, groups, cfg.num_heads, d)
    values = _expand_kv(values, groups, cfg.num_heads, d)
    scale = ops.constant(np.float32(d**-0.5))
    if mask is None:
        out = ops.scaled_dot_product_attention(q, keys, values, None, scale)
    else:
        out = ops.scaled_dot_product_attention(q, keys, values, mask, scale)
    out = ops.reshape(_to_bhnd(out.output(0)), _ints([0, -1, cfg.num_heads * d]), True)
    return b.linear(out.output(0), p + "o_proj")


def _mlp(b: _Builder, x: ov.Output, p: str) -> ov.Output:
    gate = ops.swish(b.linear(x, p + "gate_proj"))
    return b.linear(ops.multiply(gate, b.linear(x, p + "up_proj")).output(0), p + "down_proj")


def _decoder_layer(
    b: _Builder, x: ov.Output, p: str, cfg: TransformerConfig, cos: ov.Output, sin: ov.Output,
    past: Callable[[ov.Output, ov.Output], tuple[ov.Output, ov.Output]], mask: ov.Output | None,
) -> ov.Output:
    h = _rms_norm(x, b.vector(p + "input_layernorm.weight"), cfg.rms_norm_eps)
    x = ops.add(x, _attention_block(b, h, p + "self_attn.", cfg, cos, sin, past, mask)).output(0)
    h = _rms_norm(x, b.vector(p + "post_attention_layernorm.weight"), cfg.rms_norm_eps)
    return ops.add(x, _mlp(b, h, p + "mlp.")).output(0)


def _last_position(x: ov.Output) -> ov.Output:
    """[1, n, H] -> [1, 1, H]"""
    return ops.gather(x, _ints([-1]), _int(1)).output(0)


def build_talker(cfg: TalkerConfig, weights: WeightSource, fmt: str,
                 compressed: Int4Weights | None = None) -> tuple[ov.Model, _Builder]:
    """The talker step for many sequences in one call, ready for OpenVINO's paged-attention
    transformation (`ov_paged`), which replaces its state with a block-table KV cache: one row per
    token, inputs_embeds [T, 1, H] and cos/sin [T, 1, 1, head_dim] for the tokens of all sequences
    laid end to end, and `select` [S] (the rows whose hidden state and logits are wanted: each
    sequence's last token) -> hidden [S, 1, H], logits [S, vocab].
    """
    s = cfg.stack
    b = _Builder(weights, fmt, compressed)
    embeds = ops.parameter([-1, 1, s.hidden_size], _F32, name="inputs_embeds")
    cos = ops.parameter([-1, 1, 1, s.head_dim], _F32, name="cos")
    sin = ops.parameter([-1, 1, 1, s.head_dim], _F32, name="sin")
    select = ops.parameter([-1], ov.Type.i64, name="select")
    beam = ops.parameter([-1], ov.Type.i32, name="beam_idx")
    empty = ops.constant(np.zeros((1, s.num_kv_heads, 0, s.head_dim), np.float32))
    sinks = []

    def stateful(layer: int) -> Callable[[ov.Output, ov.Output], tuple[ov.Output, ov.Output]]:
        def past(k: ov.Output, v: ov.Output) -> tuple[ov.Output, ov.Output]:
            full = []
            for kind, new in (("k", k), ("v", v)):
                var = f"past.{layer}.{kind}"
                read = ops.read_value(empty, var, _F32, [-1, s.num_kv_heads, -1, s.head_dim])
                reordered = ops.gather(read, beam, _int(0))
                cat = ops.concat([reordered, new], 2)
                sinks.append(ops.assign(cat, var))
                full.append(cat.output(0))
            return full[0], full[1]

        return past

    x = embeds.output(0)
    for i in range(s.num_layers):
        prefix = f"talker.model.layers.{i}."
        x = _decoder_layer(b, x, prefix, s, cos.output(0), sin.output(0), stateful(i), None)
    last = _rms_norm(ops.gather(x, select, _int(0)).output(0), b.vector("talker.model.norm.weight"), s.rms_norm_eps)
    logits = ops.reshape(b.linear(last, "talker.codec_head"), _ints([0, -1]), True)
    hidden = ops.result(last, name="hidden")
    out = ops.result(logits, name="logits")
    model = ov.Model([hidden, out], sinks, [embeds, cos, sin, select, beam], "hearth_talker_paged")
    hidden.output(0).get_tensor().set_names({"hidden"})
    out.output(0).get_tensor().set_names({"logits"})
    return model, b


def _sample(
    logits: ov.Output, draw: ov.Output, temperature: ov.Output, top_k: ov.Output, top_p: ov.Output
) -> ov.Output:
    """Per row: temperature, top-k, top-p, then inverse-CDF sampling with one uniform draw in [0, 1).
    logits [B, V], draw / temperature / top_p [B, 1], top_k a scalar (the same for every row) -> [B] i64

    Greedy decoding is top_k = 1. Kept candidates are the longest prefix (by descending probability)
    whose preceding mass stays below top_p, so the most likely code is always kept.
    """
    scaled = ops.divide(logits, temperature)
    values, indices = ops.topk(scaled, top_k, -1, "max", "value", "i64").outputs()
    probs = ops.softmax(values, -1)
    before = ops.cumsum(probs, _int(-1), exclusive=True)
    keep = ops.convert(ops.less(before, top_p), _F32)
    cdf = ops.cumsum(ops.multiply(probs, keep), _int(-1))
    total = ops.gather(cdf, _ints([-1]), _int(-1))
    target = ops.multiply(draw, total)
    below = ops.convert(ops.less_equal(cdf, target), ov.Type.i64)
    position = ops.reduce_sum(below, _ints([-1]), False)  # [B]
    count = ops.gather(ops.shape_of(indices, "i64"), _ints([-1]), _int(0))
    position = ops.minimum(position, ops.subtract(count, _int(1)))
    row = ops.unsqueeze(position, _ints([1]))
    picked = ops.gather(indices, row, _int(1), 1)  # [B, 1]
    return ops.reshape(picked, _ints([-1]), False).output(0)


def build_predictor_loop(
    cfg: TalkerConfig, weights: WeightSource, fmt: str, teacher_forced: bool = False,
    compressed: Int4Weights | None = None, loop: bool | None = None,
) -> tuple[ov.Model, _Builder]:
    """One frame's codebooks 1..G-1 for B independent rows (B utterances stepped together):
    (hidden [B,1,H], first [B,1,H], draws [B,G-1], temperature [B], top_k (a scalar: rows with
    different top-k go in different calls), top_p [B]) -> (codes [B,G-1] i64, summed [B,1,H] = first +
    the embeddings of codes 1..G-1).

    int4: the G-1 steps are one OpenVINO Loop whose body is one step, so each weight appears once in
    the graph (the runtime keeps a repacked copy of an int4 weight per use: unrolled, fifteen).
    Other formats are unrolled (`_unrolled_predictor`): faster, and int8 weights are not copied.
    `loop` overrides the choice.
    Step j runs the stack on its input (step 0: the talker's hidden state and codebook 0's
    embedding, two positions; then the previous code's embedding), extends the per-layer caches it
    carries, takes codebook j+1's logits from head j (the heads and the embedding tables are
    stacked, and step j gathers its own), samples, and embeds the code.

    teacher_forced (for accuracy measurements): the codes are an input ("forced" [B,G-1] i64) instead
    of sampled, and the output is every step's logits ("logits" [(G-1) * B, vocab], step-major) plus
    summed.
    """
    if not (fmt == "int4" if loop is None else loop):
        return _unrolled_predictor(cfg, weights, fmt, teacher_forced, compressed)
    p = cfg.predictor
    steps = cfg.num_code_groups - 1
    b = _Builder(weights, fmt, compressed)
    hidden_size = cfg.stack.hidden_size
    hidden = ops.parameter([-1, 1, hidden_size], _F32, name="hidden")
    # [B, 1, H], declared [B, ?, H]: the loop's input is 2 positions at the first step, then 1, and
    # a length the runtime cannot infer as fixed keeps the step's shapes dynamic.
    first = ops.parameter([-1, -1, hidden_size], _F32, name="first")
    draws = ops.parameter([-1, steps], _F32, name="draws")
    temperature = ops.parameter([-1], _F32, name="temperature")
    top_k = ops.parameter([], ov.Type.i64, name="top_k")
    top_p = ops.parameter([-1], _F32, name="top_p")
    forced = ops.parameter([-1, steps], ov.Type.i64, name="forced")
    prefix = "talker.code_predictor."
    project = p.hidden_size != hidden_size
    column = _ints([1])
    rows = ops.gather(ops.shape_of(hidden, "i64"), _ints([0]), _int(0))  # [1] = [B]

    def to_predictor(x: ov.Output) -> ov.Output:
        return b.linear(x, prefix + "small_to_mtp_projection", bias=True) if project else x

    # -- the body: one step ------------------------------------------------------------------------
    step = ops.parameter([], ov.Type.i64, name="step")
    x_in = ops.parameter([-1, -1, p.hidden_size], _F32, name="x")
    summed_in = ops.parameter([-1, 1, hidden_size], _F32, name="summed")
    cache_in = [[ops.parameter([-1, p.num_kv_heads, -1, p.head_dim], _F32, name=f"{kind}{i}") for kind in "kv"]
                for i in range(p.num_layers)]
    draws_in = ops.parameter([-1, steps], _F32, name="draws")
    temperature_in = ops.parameter([-1], _F32, name="temperature")
    top_k_in = ops.parameter([], ov.Type.i64, name="top_k")
    top_p_in = ops.parameter([-1], _F32, name="top_p")
    forced_in = ops.parameter([-1, steps], ov.Type.i64, name="forced")
    step_index = ops.unsqueeze(step, _ints([0])).output(0)  # [1]

    # Positions [L, L + n): L the cached length, n this step's input length.
    cached = ops.gather(ops.shape_of(cache_in[0][0], "i64"), _ints([2]), _int(0))
    count = ops.gather(ops.shape_of(x_in, "i64"), _ints([1]), _int(0))
    total = ops.add(cached, count)
    positions = ops.range(ops.squeeze(cached, _ints([0])), ops.squeeze(total, _ints([0])), _int(1), "i64")
    rotary = Rotary(p.head_dim, p.rope_theta)
    cos_t, sin_t = rotary.get(0, steps + 1, torch.float32)
    cos = ops.gather(ops.constant(cos_t.numpy()), positions, _int(0)).output(0)  # [n, d]
    sin = ops.gather(ops.constant(sin_t.numpy()), positions, _int(0)).output(0)
    # Causal over [0, L + n): query i (at L + i) sees keys t <= L + i.
    keys = ops.range(_int(0), ops.squeeze(total, _ints([0])), _int(1), "i64")
    visible = ops.less_equal(ops.unsqueeze(keys, _ints([0])), ops.unsqueeze(positions, _ints([1])))
    mask = ops.select(visible, ops.constant(np.float32(0)), ops.constant(np.float32(-np.inf)))
    mask = ops.unsqueeze(mask, _ints([0, 1])).output(0)  # [1, 1, n, L + n]
    cache_out: list[list[ov.Output]] = []
    x = x_in.output(0)
    for i in range(p.num_layers):
        def past(k: ov.Output, v: ov.Output, i: int = i) -> tuple[ov.Output, ov.Output]:
            k = ops.concat([cache_in[i][0], k], 2).output(0)
            v = ops.concat([cache_in[i][1], v], 2).output(0)
            cache_out.append([k, v])
            return k, v

        x = _decoder_layer(b, x, f"{prefix}model.layers.{i}.", p, cos, sin, past, mask)
    h = _rms_norm(_last_position(x), b.vector(prefix + "model.norm.weight"), p.rms_norm_eps)
    head = b.stacked_matrix([f"{prefix}lm_head.{j}.weight" for j in range(steps)], step.output(0))  # [V, Hp]
    logits = ops.reshape(ops.matmul(h, head, False, True), _ints([0, -1]), True).output(0)  # [B, V]
    if teacher_forced:
        code = ops.reshape(ops.gather(forced_in, step_index, _int(1)), _ints([-1]), False).output(0)
    else:
        draw = ops.gather(draws_in, step_index, _int(1))  # [B, 1]
        code = _sample(logits, draw.output(0), ops.unsqueeze(temperature_in, column).output(0), top_k_in.output(0),
                       ops.unsqueeze(top_p_in, column).output(0))
    row = b.stacked_rows([f"{prefix}model.codec_embedding.{j}.weight" for j in range(steps)], step.output(0), code)
    embedded = ops.unsqueeze(row, column).output(0)  # [B, 1, H]
    body_results = {
        "x": ops.result(to_predictor(embedded)), "summed": ops.result(ops.add(summed_in, embedded)),
        "code": ops.result(ops.unsqueeze(code, column)), "logits": ops.result(ops.unsqueeze(logits, _ints([0]))),
        "go": ops.result(ops.constant(True)),
    }
    cache_results = [[ops.result(t) for t in pair] for pair in cache_out]
    body_params = [step, x_in, summed_in, *[t for pair in cache_in for t in pair], draws_in, temperature_in,
                   top_k_in, top_p_in, forced_in]
    body_outputs = [*body_results.values(), *[t for pair in cache_results for t in pair]]
    body = ov.Model(body_outputs, body_params, "hearth_predictor_step")

    # -- the loop ----------------------------------------------------------------------------------
    stepper = ops.loop(ops.constant(np.int64(steps)), ops.constant(True))
    stepper.set_function(body)
    stepper.set_special_body_ports([0, 4])  # step counter: parameter 0; continue: result 4 ("go")
    stepper.set_merged_input(x_in, to_predictor(ops.concat([hidden, first], 1).output(0)), body_results["x"].output(0))
    stepper.set_merged_input(summed_in, ops.reshape(first, _ints([0, 1, hidden_size]), True).output(0),
                          body_results["summed"].output(0))
    empty_shape = ops.concat([rows, _ints([p.num_kv_heads, 0, p.head_dim])], 0)
    empty = ops.broadcast(ops.constant(np.float32(0)), empty_shape).output(0)  # [B, kv, 0, d]
    for pair_in, pair_out in zip(cache_in, cache_results, strict=True):
        for param, result in zip(pair_in, pair_out, strict=True):
            stepper.set_merged_input(param, empty, result.output(0))
    if teacher_forced:  # sampling's inputs are unused: constants of the right shapes
        ones = ops.broadcast(ops.constant(np.float32(1)), rows).output(0)
        invariant = {draws_in: ops.broadcast(ops.constant(np.float32(0)), ops.concat([rows, _ints([steps])], 0)),
                     temperature_in: ones, top_k_in: _int(1), top_p_in: ones, forced_in: forced}
    else:
        invariant = {draws_in: draws, temperature_in: temperature, top_k_in: top_k, top_p_in: top_p,
                     forced_in: ops.broadcast(_int(0), ops.concat([rows, _ints([steps])], 0))}
    for param, value in invariant.items():
        stepper.set_invariant_input(param, value.output(0) if hasattr(value, "output") else value)
    codes = stepper.get_concatenated_slices(body_results["code"].output(0), 0, 1, 1, -1, 1)  # [B, G-1]
    summed = stepper.get_iter_value(body_results["summed"].output(0), -1)
    all_logits = stepper.get_concatenated_slices(body_results["logits"].output(0), 0, 1, 1, -1, 0)  # [G-1, B, V]
    all_logits = ops.reshape(all_logits, _ints([-1, p.vocab_size]), False).output(0)  # [(G-1) * B, V], step-major
    summed_out = ops.result(summed, name="summed")
    summed_out.output(0).get_tensor().set_names({"summed"})
    if teacher_forced:
        logits_out = ops.result(all_logits, name="logits")
        logits_out.output(0).get_tensor().set_names({"logits"})
        return ov.Model([logits_out, summed_out], [hidden, first, forced], "hearth_predictor_forced"), b
    codes_out = ops.result(codes, name="codes")
    codes_out.output(0).get_tensor().set_names({"codes"})
    inputs = [hidden, first, draws, temperature, top_k, top_p]
    model = ov.Model([codes_out, summed_out], inputs, "hearth_predictor_loop")
    return model, b


def _unrolled_predictor(
    cfg: TalkerConfig, weights: WeightSource, fmt: str, teacher_forced: bool = False,
    compressed: Int4Weights | None = None,
) -> tuple[ov.Model, _Builder]:
    """`build_predictor_loop`'s graph with its steps unrolled: each step's products read the same
    weight nodes. Faster than the Loop for int8 (predictor frame 67 against 81 ms at 0.6B here:
    no per-step body overhead), and the runtime keeps one copy of int8 weights used fifteen times;
    of int4 weights it keeps a repacked copy per use (696 MB instead of 104 MB at 0.6B)."""
    p = cfg.predictor
    groups = cfg.num_code_groups
    b = _Builder(weights, fmt, compressed)
    hidden_size = cfg.stack.hidden_size
    hidden = ops.parameter([-1, 1, hidden_size], _F32, name="hidden")
    first = ops.parameter([-1, 1, hidden_size], _F32, name="first")
    draws = ops.parameter([-1, groups - 1], _F32, name="draws")
    temperature = ops.parameter([-1], _F32, name="temperature")
    top_k = ops.parameter([], ov.Type.i64, name="top_k")
    top_p = ops.parameter([-1], _F32, name="top_p")
    forced = ops.parameter([-1, groups - 1], ov.Type.i64, name="forced")
    prefix = "talker.code_predictor."
    project = p.hidden_size != hidden_size
    column = _ints([1])
    temperature_rows = ops.unsqueeze(temperature, column).output(0)  # [B, 1]
    top_p_rows = ops.unsqueeze(top_p, column).output(0)

    def to_predictor(x: ov.Output) -> ov.Output:
        return b.linear(x, prefix + "small_to_mtp_projection", bias=True) if project else x

    rotary = Rotary(p.head_dim, p.rope_theta)
    cos_t, sin_t = rotary.get(0, groups, torch.float32)
    cos_all, sin_all = cos_t.numpy(), sin_t.numpy()
    caches: list[list[ov.Output]] = [[] for _ in range(p.num_layers)]

    def run_stack(x: ov.Output, start: int, n: int) -> ov.Output:
        cos = ops.constant(cos_all[start : start + n]).output(0)
        sin = ops.constant(sin_all[start : start + n]).output(0)
        mask = None
        if n > 1:
            causal = np.triu(np.full((n, n), -np.inf, np.float32), 1)[None, None]
            mask = ops.constant(causal).output(0)
        for i in range(p.num_layers):
            def past(k: ov.Output, v: ov.Output, i: int = i) -> tuple[ov.Output, ov.Output]:
                if caches[i]:
                    k = ops.concat([caches[i][0], k], 2).output(0)
                    v = ops.concat([caches[i][1], v], 2).output(0)
                caches[i] = [k, v]
                return k, v

            x = _decoder_layer(b, x, f"{prefix}model.layers.{i}.", p, cos, sin, past, mask)
        return _rms_norm(_last_position(x), b.vector(prefix + "model.norm.weight"), p.rms_norm_eps)

    x = to_predictor(ops.concat([hidden, first], 1).output(0))
    h = run_stack(x, 0, 2)
    codes = []
    all_logits = []
    summed = first.output(0)
    for j in range(groups - 1):
        logits = ops.reshape(b.linear(h, f"{prefix}lm_head.{j}"), _ints([0, -1]), True)  # [B, V]
        if teacher_forced:
            all_logits.append(logits.output(0))
            code = ops.reshape(ops.gather(forced, _ints([j]), _int(1)), _ints([-1]), False).output(0)
        else:
            draw = ops.gather(draws, _ints([j]), _int(1))  # [B, 1]
            code = _sample(logits.output(0), draw.output(0), temperature_rows, top_k.output(0), top_p_rows)
        codes.append(ops.unsqueeze(code, column).output(0))
        row = b.rows(f"{prefix}model.codec_embedding.{j}.weight", code)  # [B, H]
        embedded = ops.unsqueeze(row, column)  # [B, 1, H]
        summed = ops.add(summed, embedded).output(0)
        if j < groups - 2:
            h = run_stack(to_predictor(embedded.output(0)), j + 2, 1)
    summed_out = ops.result(summed, name="summed")
    summed_out.output(0).get_tensor().set_names({"summed"})
    if teacher_forced:
        logits_out = ops.result(ops.concat(all_logits, 0), name="logits")
        logits_out.output(0).get_tensor().set_names({"logits"})
        return ov.Model([logits_out, summed_out], [hidden, first, forced], "hearth_predictor_forced"), b
    codes_out = ops.result(ops.concat(codes, 1), name="codes")
    codes_out.output(0).get_tensor().set_names({"codes"})
    inputs = [hidden, first, draws, temperature, top_k, top_p]
    model = ov.Model([codes_out, summed_out], inputs, "hearth_predictor_loop")
    return model, b
