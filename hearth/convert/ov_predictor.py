"""OpenVINO graphs of the whole 15-step code-predictor loop: `recipe.predictor_frame` written with
OpenVINO's operations (`ov_graphs.Builder`, `ov_graphs.attend`), unrolled; or, for int4, the same
step as the body of an OpenVINO Loop.

The loop takes the talker's hidden state and codebook 0's embedding and returns codebooks 1..15
with the summed embedding of all 16, for a batch of rows, sampling inside the graph from uniform
draws the caller supplies (so a seeded request is reproducible and independent of chunking and of
its neighbours in a batch).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import openvino as ov
import openvino.opset13 as ops

from hearth.checkpoint.config import TalkerConfig, TransformerConfig
from hearth.convert import networks as recipe
from hearth.convert.ov_graphs import F32, Builder, WeightSource, attend, int_const, ints_const

if TYPE_CHECKING:
    from hearth.convert.ov_int4 import Int4Weights

__all__ = ["build_predictor_loop"]


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
    rows = ops.gather(ops.shape_of(hidden, "i64"), ints_const([0]), int_const(0))  # [1] = [B]

    def to_predictor(x: ov.Output) -> ov.Output:
        return b.linear(x, prefix + "small_to_mtp_projection", bias=True) if project else x

    body = _step_body(cfg, b, to_predictor, teacher_forced)
    stepper = _loop(cfg, body, to_predictor, rows, hidden, first, teacher_forced,
                    {"draws": draws, "temperature": temperature, "top_k": top_k, "top_p": top_p, "forced": forced})
    return _loop_model(cfg, b, stepper, body, teacher_forced, [hidden, first, draws, temperature, top_k, top_p],
                       forced)


@dataclass
class _Step:
    """The loop body (one predictor step): its model, parameters by name and results by name."""

    model: ov.Model
    params: dict[str, Any]  # step, x, summed, draws, temperature, top_k, top_p, forced
    cache: list[list[Any]]  # per layer: the key and value caches carried in
    results: dict[str, Any]  # x, summed, code, logits, go
    cache_results: list[list[Any]]


def _step_body(cfg: TalkerConfig, b: Builder, to_predictor: Callable[[ov.Output], ov.Output],
               teacher_forced: bool) -> _Step:
    """Step j runs the stack on its input, extends the caches it carries, takes codebook j+1's
    logits from head j, samples (or takes the forced code) and embeds the code."""
    p = cfg.predictor
    steps = cfg.num_code_groups - 1
    hidden_size = cfg.stack.hidden_size
    prefix = "talker.code_predictor."
    column = ints_const([1])
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
    cos_t, sin_t = recipe.rotary_tables(p, steps + 1)
    cos = ops.gather(ops.constant(cos_t), positions, int_const(0)).output(0)  # [n, d]
    sin = ops.gather(ops.constant(sin_t), positions, int_const(0)).output(0)
    # Causal over [0, L + n): query i (at L + i) sees keys t <= L + i.
    keys = ops.range(int_const(0), ops.squeeze(total, ints_const([0])), int_const(1), "i64")
    visible = ops.less_equal(ops.unsqueeze(keys, ints_const([0])), ops.unsqueeze(positions, ints_const([1])))
    mask = ops.select(visible, ops.constant(np.float32(0)), ops.constant(np.float32(-np.inf)))
    mask = ops.unsqueeze(mask, ints_const([0, 1])).output(0)  # [1, 1, n, L + n]
    cache_out: list[list[ov.Output]] = []

    def step_attention(q: ov.Output, k: ov.Output, v: ov.Output, layer: int) -> ov.Output:
        def past(k: ov.Output, v: ov.Output) -> tuple[ov.Output, ov.Output]:
            k = ops.concat([cache_in[layer][0], k], 2).output(0)
            v = ops.concat([cache_in[layer][1], v], 2).output(0)
            cache_out.append([k, v])
            return k, v

        return attend(q, k, v, p, cos, sin, past, mask)

    x = recipe.stack(b, x_in.output(0), prefix + "model.", p, step_attention)
    h = b.rms_norm(b.last_position(x), b.vector(prefix + "model.norm.weight"), p.rms_norm_eps)
    head = b.stacked_matrix([f"{prefix}lm_head.{j}.weight" for j in range(steps)], step.output(0))  # [V, Hp]
    logits = ops.reshape(ops.matmul(h, head, False, True), ints_const([0, -1]), True).output(0)  # [B, V]
    if teacher_forced:
        code = ops.reshape(ops.gather(forced_in, step_index, int_const(1)), ints_const([-1]), False).output(0)
    else:
        draw = ops.gather(draws_in, step_index, int_const(1))  # [B, 1]
        code = recipe.sample(b, logits, draw.output(0), ops.unsqueeze(temperature_in, column).output(0),
                             top_k_in.output(0), ops.unsqueeze(top_p_in, column).output(0))
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
    params = {"step": step, "x": x_in, "summed": summed_in, "draws": draws_in, "temperature": temperature_in,
              "top_k": top_k_in, "top_p": top_p_in, "forced": forced_in}
    return _Step(ov.Model(body_outputs, body_params, "hearth_predictor_step"), params, cache_in, body_results,
                 cache_results)



def _loop(cfg: TalkerConfig, body: _Step, to_predictor: Callable[[ov.Output], ov.Output], rows: ov.Output,
          hidden: Any, first: Any, teacher_forced: bool, inputs: dict[str, Any]) -> Any:  # noqa: ANN401 - ov Nodes
    """The Loop of G-1 steps over `body`: the input and caches merged from step to step, sampling's
    inputs (or, teacher-forced, constants of their shapes and the forced codes) invariant."""
    p = cfg.predictor
    steps = cfg.num_code_groups - 1
    hidden_size = cfg.stack.hidden_size
    x_in, summed_in, draws_in = body.params["x"], body.params["summed"], body.params["draws"]
    temperature_in, top_k_in, top_p_in = body.params["temperature"], body.params["top_k"], body.params["top_p"]
    forced_in, cache_in, cache_results = body.params["forced"], body.cache, body.cache_results
    body_results = body.results
    draws, temperature, top_k, top_p, forced = (inputs[k] for k in ("draws", "temperature", "top_k", "top_p", "forced"))
    stepper = ops.loop(ops.constant(np.int64(steps)), ops.constant(True))
    stepper.set_function(body.model)
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
    return stepper


def _loop_model(cfg: TalkerConfig, b: Builder, stepper: Any, body: _Step, teacher_forced: bool,  # noqa: ANN401
                inputs: list[Any], forced: Any) -> tuple[ov.Model, Builder]:  # noqa: ANN401
    """The model around the loop: the codes (or every step's logits) and the summed embedding."""
    p = cfg.predictor
    body_results = body.results
    hidden, first = inputs[0], inputs[1]
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
    column = ints_const([1])
    temperature_rows = ops.unsqueeze(temperature, column).output(0)  # [B, 1]
    top_p_rows = ops.unsqueeze(top_p, column).output(0)

    cos_all, sin_all = recipe.rotary_tables(p, groups)
    attention = _Attention(p, cos_all, sin_all)

    def choose(j: int, logits: ov.Output) -> ov.Output:
        if teacher_forced:
            return ops.reshape(ops.gather(forced, ints_const([j]), int_const(1)), ints_const([-1]), False).output(0)
        draw = ops.gather(draws, ints_const([j]), int_const(1))  # [B, 1]
        return recipe.sample(b, logits, draw.output(0), temperature_rows, top_k.output(0), top_p_rows)

    codes, summed, all_logits = recipe.predictor_frame(b, cfg, hidden.output(0), first.output(0), attention, choose)
    summed_out = ops.result(summed, name="summed")
    summed_out.output(0).get_tensor().set_names({"summed"})
    if teacher_forced:
        logits_out = ops.result(ops.concat(all_logits, 0), name="logits")
        logits_out.output(0).get_tensor().set_names({"logits"})
        return ov.Model([logits_out, summed_out], [hidden, first, forced], "hearth_predictor_forced"), b
    codes_out = ops.result(ops.concat([ops.unsqueeze(code, column) for code in codes], 1), name="codes")
    codes_out.output(0).get_tensor().set_names({"codes"})
    inputs = [hidden, first, draws, temperature, top_k, top_p]
    model = ov.Model([codes_out, summed_out], inputs, "hearth_predictor_loop")
    return model, b


class _Attention:
    """`recipe.Attention` of the unrolled predictor: per layer, the keys and values of the frame's
    positions so far (concatenated in the graph); rotary tables and a causal mask per stack run."""

    def __init__(self, cfg: TransformerConfig, cos: np.ndarray, sin: np.ndarray):
        self.cfg, self.cos_all, self.sin_all = cfg, cos, sin
        self.length = 0
        self.caches: list[list[ov.Output]] = [[] for _ in range(cfg.num_layers)]

    def advance(self, n: int) -> None:
        start, self.length = self.length, self.length + n
        self.cos = ops.constant(self.cos_all[start : start + n]).output(0)
        self.sin = ops.constant(self.sin_all[start : start + n]).output(0)
        self.mask = None
        if n > 1:
            causal = np.triu(np.full((n, n), -np.inf, np.float32), 1)[None, None]
            self.mask = ops.constant(causal).output(0)

    def __call__(self, q: ov.Output, k: ov.Output, v: ov.Output, layer: int) -> ov.Output:
        def past(k: ov.Output, v: ov.Output) -> tuple[ov.Output, ov.Output]:
            cache = self.caches[layer]
            if cache:
                k = ops.concat([cache[0], k], 2).output(0)
                v = ops.concat([cache[1], v], 2).output(0)
            self.caches[layer] = [k, v]
            return k, v

        return attend(q, k, v, self.cfg, self.cos, self.sin, past, self.mask)
