"""OpenVINO graph of the whole 15-step code-predictor loop, built op by op (`ov_graphs` holds the
layers it shares with the talker's graph).

The loop takes the talker's hidden state and codebook 0's embedding and returns codebooks 1..15
with the summed embedding of all 16, for a batch of rows, sampling inside the graph from uniform
draws the caller supplies (so a seeded request is reproducible and independent of chunking and of
its neighbours in a batch).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import openvino as ov
import openvino.opset13 as ops

from ..config import TalkerConfig
from .ov_graphs import F32, Builder, WeightSource, decoder_layer, int_const, ints_const, last_position, rms_norm

if TYPE_CHECKING:
    from .ov_int4 import Int4Weights

__all__ = ["build_predictor_loop"]


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
    before = ops.cumsum(probs, int_const(-1), exclusive=True)
    keep = ops.convert(ops.less(before, top_p), F32)
    cdf = ops.cumsum(ops.multiply(probs, keep), int_const(-1))
    total = ops.gather(cdf, ints_const([-1]), int_const(-1))
    target = ops.multiply(draw, total)
    below = ops.convert(ops.less_equal(cdf, target), ov.Type.i64)
    position = ops.reduce_sum(below, ints_const([-1]), False)  # [B]
    count = ops.gather(ops.shape_of(indices, "i64"), ints_const([-1]), int_const(0))
    position = ops.minimum(position, ops.subtract(count, int_const(1)))
    row = ops.unsqueeze(position, ints_const([1]))
    picked = ops.gather(indices, row, int_const(1), 1)  # [B, 1]
    return ops.reshape(picked, ints_const([-1]), False).output(0)


def build_predictor_loop(
    cfg: TalkerConfig, weights: WeightSource, fmt: str, teacher_forced: bool = False,
    compressed: Int4Weights | None = None, loop: bool | None = None,
) -> tuple[ov.Model, Builder]:
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
    b = Builder(weights, fmt, compressed)
    hidden_size = cfg.stack.hidden_size
    hidden = ops.parameter([-1, 1, hidden_size], F32, name="hidden")
    # [B, 1, H], declared [B, ?, H]: the loop's input is 2 positions at the first step, then 1, and
    # a length the runtime cannot infer as fixed keeps the step's shapes dynamic.
    first = ops.parameter([-1, -1, hidden_size], F32, name="first")
    draws = ops.parameter([-1, steps], F32, name="draws")
    temperature = ops.parameter([-1], F32, name="temperature")
    top_k = ops.parameter([], ov.Type.i64, name="top_k")
    top_p = ops.parameter([-1], F32, name="top_p")
    forced = ops.parameter([-1, steps], ov.Type.i64, name="forced")
    prefix = "talker.code_predictor."
    project = p.hidden_size != hidden_size
    column = ints_const([1])
    rows = ops.gather(ops.shape_of(hidden, "i64"), ints_const([0]), int_const(0))  # [1] = [B]

    def to_predictor(x: ov.Output) -> ov.Output:
        return b.linear(x, prefix + "small_to_mtp_projection", bias=True) if project else x

    # -- the body: one step ------------------------------------------------------------------------
    step = ops.parameter([], ov.Type.i64, name="step")
    x_in = ops.parameter([-1, -1, p.hidden_size], F32, name="x")
    summed_in = ops.parameter([-1, 1, hidden_size], F32, name="summed")
    cache_in = [[ops.parameter([-1, p.num_kv_heads, -1, p.head_dim], F32, name=f"{kind}{i}") for kind in "kv"]
                for i in range(p.num_layers)]
    draws_in = ops.parameter([-1, steps], F32, name="draws")
    temperature_in = ops.parameter([-1], F32, name="temperature")
    top_k_in = ops.parameter([], ov.Type.i64, name="top_k")
    top_p_in = ops.parameter([-1], F32, name="top_p")
    forced_in = ops.parameter([-1, steps], ov.Type.i64, name="forced")
    step_index = ops.unsqueeze(step, ints_const([0])).output(0)  # [1]

    # Positions [L, L + n): L the cached length, n this step's input length.
    cached = ops.gather(ops.shape_of(cache_in[0][0], "i64"), ints_const([2]), int_const(0))
    count = ops.gather(ops.shape_of(x_in, "i64"), ints_const([1]), int_const(0))
    total = ops.add(cached, count)
    positions = ops.range(ops.squeeze(cached, ints_const([0])), ops.squeeze(total, ints_const([0])), int_const(1),
                          "i64")
    import torch  # the torch reference's own tables: converting needs torch anyway

    from ..model.layers import Rotary

    rotary = Rotary(p.head_dim, p.rope_theta)
    cos_t, sin_t = rotary.get(0, steps + 1, torch.float32)
    cos = ops.gather(ops.constant(cos_t.numpy()), positions, int_const(0)).output(0)  # [n, d]
    sin = ops.gather(ops.constant(sin_t.numpy()), positions, int_const(0)).output(0)
    # Causal over [0, L + n): query i (at L + i) sees keys t <= L + i.
    keys = ops.range(int_const(0), ops.squeeze(total, ints_const([0])), int_const(1), "i64")
    visible = ops.less_equal(ops.unsqueeze(keys, ints_const([0])), ops.unsqueeze(positions, ints_const([1])))
    mask = ops.select(visible, ops.constant(np.float32(0)), ops.constant(np.float32(-np.inf)))
    mask = ops.unsqueeze(mask, ints_const([0, 1])).output(0)  # [1, 1, n, L + n]
    cache_out: list[list[ov.Output]] = []
    x = x_in.output(0)
    for i in range(p.num_layers):
        def past(k: ov.Output, v: ov.Output, i: int = i) -> tuple[ov.Output, ov.Output]:
            k = ops.concat([cache_in[i][0], k], 2).output(0)
            v = ops.concat([cache_in[i][1], v], 2).output(0)
            cache_out.append([k, v])
            return k, v

        x = decoder_layer(b, x, f"{prefix}model.layers.{i}.", p, cos, sin, past, mask)
    h = rms_norm(last_position(x), b.vector(prefix + "model.norm.weight"), p.rms_norm_eps)
    head = b.stacked_matrix([f"{prefix}lm_head.{j}.weight" for j in range(steps)], step.output(0))  # [V, Hp]
    logits = ops.reshape(ops.matmul(h, head, False, True), ints_const([0, -1]), True).output(0)  # [B, V]
    if teacher_forced:
        code = ops.reshape(ops.gather(forced_in, step_index, int_const(1)), ints_const([-1]), False).output(0)
    else:
        draw = ops.gather(draws_in, step_index, int_const(1))  # [B, 1]
        code = _sample(logits, draw.output(0), ops.unsqueeze(temperature_in, column).output(0), top_k_in.output(0),
                       ops.unsqueeze(top_p_in, column).output(0))
    row = b.stacked_rows([f"{prefix}model.codec_embedding.{j}.weight" for j in range(steps)], step.output(0), code)
    embedded = ops.unsqueeze(row, column).output(0)  # [B, 1, H]
    body_results = {
        "x": ops.result(to_predictor(embedded)), "summed": ops.result(ops.add(summed_in, embedded)),
        "code": ops.result(ops.unsqueeze(code, column)), "logits": ops.result(ops.unsqueeze(logits, ints_const([0]))),
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
    stepper.set_merged_input(summed_in, ops.reshape(first, ints_const([0, 1, hidden_size]), True).output(0),
                          body_results["summed"].output(0))
    empty_shape = ops.concat([rows, ints_const([p.num_kv_heads, 0, p.head_dim])], 0)
    empty = ops.broadcast(ops.constant(np.float32(0)), empty_shape).output(0)  # [B, kv, 0, d]
    for pair_in, pair_out in zip(cache_in, cache_results, strict=True):
        for param, result in zip(pair_in, pair_out, strict=True):
            stepper.set_merged_input(param, empty, result.output(0))
    if teacher_forced:  # sampling's inputs are unused: constants of the right shapes
        ones = ops.broadcast(ops.constant(np.float32(1)), rows).output(0)
        invariant = {draws_in: ops.broadcast(ops.constant(np.float32(0)), ops.concat([rows, ints_const([steps])], 0)),
                     temperature_in: ones, top_k_in: int_const(1), top_p_in: ones, forced_in: forced}
    else:
        invariant = {draws_in: draws, temperature_in: temperature, top_k_in: top_k, top_p_in: top_p,
                     forced_in: ops.broadcast(int_const(0), ops.concat([rows, ints_const([steps])], 0))}
    for param, value in invariant.items():
        stepper.set_invariant_input(param, value.output(0) if hasattr(value, "output") else value)
    codes = stepper.get_concatenated_slices(body_results["code"].output(0), 0, 1, 1, -1, 1)  # [B, G-1]
    summed = stepper.get_iter_value(body_results["summed"].output(0), -1)
    all_logits = stepper.get_concatenated_slices(body_results["logits"].output(0), 0, 1, 1, -1, 0)  # [G-1, B, V]
    all_logits = ops.reshape(all_logits, ints_const([-1, p.vocab_size]), False).output(0)  # [(G-1) * B, V], step-major
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
) -> tuple[ov.Model, Builder]:
    """`build_predictor_loop`'s graph with its steps unrolled: each step's products read the same
    weight nodes. Faster than the Loop for int8 (predictor frame 67 against 81 ms at 0.6B here:
    no per-step body overhead), and the runtime keeps one copy of int8 weights used fifteen times;
    of int4 weights it keeps a repacked copy per use (696 MB instead of 104 MB at 0.6B)."""
    p = cfg.predictor
    groups = cfg.num_code_groups
    b = Builder(weights, fmt, compressed)
    hidden_size = cfg.stack.hidden_size
    hidden = ops.parameter([-1, 1, hidden_size], F32, name="hidden")
    first = ops.parameter([-1, 1, hidden_size], F32, name="first")
    draws = ops.parameter([-1, groups - 1], F32, name="draws")
    temperature = ops.parameter([-1], F32, name="temperature")
    top_k = ops.parameter([], ov.Type.i64, name="top_k")
    top_p = ops.parameter([-1], F32, name="top_p")
    forced = ops.parameter([-1, groups - 1], ov.Type.i64, name="forced")
    prefix = "talker.code_predictor."
    project = p.hidden_size != hidden_size
    column = ints_const([1])
    temperature_rows = ops.unsqueeze(temperature, column).output(0)  # [B, 1]
    top_p_rows = ops.unsqueeze(top_p, column).output(0)

    def to_predictor(x: ov.Output) -> ov.Output:
        return b.linear(x, prefix + "small_to_mtp_projection", bias=True) if project else x

    import torch  # the torch reference's own tables: converting needs torch anyway

    from ..model.layers import Rotary

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

            x = decoder_layer(b, x, f"{prefix}model.layers.{i}.", p, cos, sin, past, mask)
        return rms_norm(last_position(x), b.vector(prefix + "model.norm.weight"), p.rms_norm_eps)

    x = to_predictor(ops.concat([hidden, first], 1).output(0))
    h = run_stack(x, 0, 2)
    codes = []
    all_logits = []
    summed = first.output(0)
    for j in range(groups - 1):
        logits = ops.reshape(b.linear(h, f"{prefix}lm_head.{j}"), ints_const([0, -1]), True)  # [B, V]
        if teacher_forced:
            all_logits.append(logits.output(0))
            code = ops.reshape(ops.gather(forced, ints_const([j]), int_const(1)), ints_const([-1]), False).output(0)
        else:
            draw = ops.gather(draws, ints_const([j]), int_const(1))  # [B, 1]
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
