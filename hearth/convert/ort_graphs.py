"""ONNX graphs of the talker and of the whole 15-step code-predictor loop, for ONNX Runtime.

The same computation as `ov_graphs` (and `hearth.model.talker`), written for the runtime whose
kernels read quantized weights fastest on CPUs without AVX-512: ONNX Runtime's `MatMulNBits`
multiplies 8- or 4-bit block-quantized weights with activations quantized to int8 on the fly
(`accuracy_level` 4). On a 2-core AVX2 machine a [3072 x 1024] product takes about 100 us with
8-bit weights, against 330-390 us in OpenVINO 2026.4's int8 kernels for that ISA (see
docs/performance.md).

Weights: "int8" (8-bit, symmetric, one scale per block of 128 inputs), "int4" (4-bit, blocks of
32) or "fp32" (plain MatMul: the accurate mode). Embedding tables are stored int8 (fp32 in the
accurate mode) with one scale per row and widened row by row.

The talker uses ONNX Runtime's GroupQueryAttention over a key/value buffer per layer that the caller
owns and binds as both the past and the present (it is written in place): rows of a batch are the
buffer's first dimension, each with its own length (`seqlens_k`); the rotary embedding is applied
inside the attention, at the positions the lengths imply. The predictor loop needs no cache across
frames; its 15 steps are unrolled, every step reading the same weight initializers (the runtime
packs each once), and it samples inside the graph from uniform draws the caller supplies, as the
OpenVINO loop does (`ov_predictor._sample`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backends.ort import BLOCKS, WEIGHT_FORMATS
from ..config import TalkerConfig, TransformerConfig

__all__ = ["BLOCKS", "WEIGHT_FORMATS", "build_predictor_loop", "build_talker"]

_MS = "com.microsoft"

WeightSource = Callable[[str], np.ndarray]


@dataclass
class _Graph:
    """ONNX nodes, initializers and constants, with generated value names."""

    nodes: list[Any] = field(default_factory=list)
    initializers: list[Any] = field(default_factory=list)
    _count: int = 0
    _constants: dict[tuple[str, bytes], str] = field(default_factory=dict)

    def name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def op(self, op_type: str, inputs: list[str], outputs: int = 1, domain: str = "", **attrs: Any) -> Any:  # noqa: ANN401
        from onnx import helper

        names = [self.name(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names, domain=domain or None, **attrs))
        return names[0] if outputs == 1 else names

    def tensor(self, array: np.ndarray, hint: str = "w") -> str:
        from onnx import numpy_helper

        name = self.name(hint)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def const(self, values: Any, dtype: Any = np.int64) -> str:  # noqa: ANN401
        array = np.asarray(values, dtype=dtype)
        key = (f"{array.dtype}{array.shape}", array.tobytes())
        if key not in self._constants:
            self._constants[key] = self.tensor(array, "c")
        return self._constants[key]


def quantize_blocks(w: np.ndarray, bits: int, block: int) -> tuple[np.ndarray, np.ndarray]:
    """[N, K] float -> (MatMulNBits' packed uint8 [N, K/block, block*bits/8], scales [N * K/block])."""
    n, k = w.shape
    if k % block:
        raise ValueError(f"the input width {k} is not a multiple of the quantization block {block}")
    blocks = w.reshape(n, k // block, block).astype(np.float32)
    top = (1 << (bits - 1)) - 1  # symmetric: [-127, 127] or [-7, 7], stored with the default zero point
    peak = np.abs(blocks).max(axis=2, keepdims=True)
    scale = np.where(peak > 0, peak / top, 1.0).astype(np.float32)
    q = (np.clip(np.rint(blocks / scale), -top, top) + (1 << (bits - 1))).astype(np.uint8)
    if bits == 4:
        q = q[..., 0::2] | (q[..., 1::2] << 4)
    return np.ascontiguousarray(q), scale.reshape(-1)


@dataclass
class _Weights:
    """Weights of the checkpoint as graph values in the chosen format, each stored once."""

    g: _Graph
    source: WeightSource
    fmt: str
    bytes_stored: int = 0
    bytes_fp32: int = 0
    _made: dict[str, Any] = field(default_factory=dict)
    _sources: dict[str, np.ndarray] = field(default_factory=dict)

    def fused(self, x: str, names: list[str]) -> list[str]:
        """Several products of the same input as one (their weights stacked): fewer, larger
        products read the weights faster. The outputs, split again."""
        key = "+".join(names)
        if key not in self._made:
            parts = [self.source(n + ".weight") for n in names]
            self._sources[key] = np.concatenate(parts)
            self._made[key + ":sizes"] = [p.shape[0] for p in parts]
        y = self.linear(x, key)
        return self.g.op("Split", [y, self.g.const(self._made[key + ":sizes"])], outputs=len(names), axis=-1)

    def linear(self, x: str, name: str, bias: bool = False) -> str:
        if name not in self._made:
            w = self._sources.pop(name) if name in self._sources else self.source(name + ".weight")
            self.bytes_fp32 += w.nbytes
            if self.fmt == "fp32":
                self.bytes_stored += w.nbytes
                self._made[name] = ("fp32", self.g.tensor(w.T.astype(np.float32), "w"), w.shape)
            else:
                bits, block = (8 if self.fmt == "int8" else 4), BLOCKS[self.fmt]
                if w.shape[1] % block:  # a narrow input (a tiny test model): the largest block that divides it
                    block = max(b for b in (16, 32, 64, 128) if w.shape[1] % b == 0)
                q, scale = quantize_blocks(w, bits, block)
                self.bytes_stored += q.nbytes + scale.nbytes
                self._made[name] = ((bits, block), (self.g.tensor(q, "q"), self.g.tensor(scale, "s")), w.shape)
        kind, stored, (n, k) = self._made[name]
        if kind == "fp32":
            y = self.g.op("MatMul", [x, stored])
        else:
            bits, block = kind
            y = self.g.op("MatMulNBits", [x, *stored], domain=_MS, K=k, N=n, bits=bits, block_size=block,
                          accuracy_level=4)
        if bias:
            y = self.g.op("Add", [y, self.vector(name + ".bias")])
        return y

    def vector(self, name: str) -> str:
        if name not in self._made:
            w = self.source(name).astype(np.float32)
            self.bytes_fp32 += w.nbytes
            self.bytes_stored += w.nbytes
            self._made[name] = self.g.tensor(w, "v")
        return self._made[name]

    def rows(self, name: str, index: str) -> str:
        """Rows `index` of an embedding table, gathered in the stored format and widened."""
        if name not in self._made:
            w = self.source(name)
            self.bytes_fp32 += w.nbytes
            if self.fmt == "fp32":
                self.bytes_stored += w.nbytes
                self._made[name] = (self.g.tensor(w.astype(np.float32), "t"), None)
            else:
                peak = np.abs(w).max(axis=1, keepdims=True)
                scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
                q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
                self.bytes_stored += q.nbytes + scale.nbytes
                self._made[name] = (self.g.tensor(q, "t"), self.g.tensor(scale, "ts"))
        table, scale = self._made[name]
        row = self.g.op("Gather", [table, index], axis=0)
        if scale is None:
            return row
        return self.g.op("Mul", [self.g.op("Cast", [row], to=1), self.g.op("Gather", [scale, index], axis=0)])


def _norm(g: _Graph, x: str, weight: str, eps: float) -> str:
    return g.op("SimplifiedLayerNormalization", [x, weight], axis=-1, epsilon=eps)


def _head_norm(g: _Graph, x: str, weight: str, heads: int, head_dim: int, eps: float) -> str:
    """RMSNorm over each head of x [B, S, heads * d]."""
    split = g.op("Reshape", [x, g.const([0, 0, heads, head_dim])])
    return g.op("Reshape", [_norm(g, split, weight, eps), g.const([0, 0, heads * head_dim])])


def _rotary_cache(cfg: TransformerConfig, positions: int) -> tuple[np.ndarray, np.ndarray]:
    """[positions, head_dim / 2] cos and sin: the halves of `Rotary`'s rotate-half tables."""
    import torch  # the torch reference's own tables: converting needs torch anyway

    from ..model.layers import Rotary

    cos, sin = Rotary(cfg.head_dim, cfg.rope_theta).get(0, positions, torch.float32)
    half = cfg.head_dim // 2
    return cos[:, :half].numpy().copy(), sin[:, :half].numpy().copy()


def _layer(
    w: _Weights, x: str, p: str, cfg: TransformerConfig, attend: Callable[[str, str, str, int], str]
) -> str:
    """One decoder layer on x [B, S, H]; `attend(q, k, v, layer)` returns the attention output."""
    g = w.g
    h = _norm(g, x, w.vector(p + "input_layernorm.weight"), cfg.rms_norm_eps)
    q, k, v = w.fused(h, [p + "self_attn.q_proj", p + "self_attn.k_proj", p + "self_attn.v_proj"])
    q = _head_norm(g, q, w.vector(p + "self_attn.q_norm.weight"), cfg.num_heads, cfg.head_dim, cfg.rms_norm_eps)
    k = _head_norm(g, k, w.vector(p + "self_attn.k_norm.weight"), cfg.num_kv_heads, cfg.head_dim, cfg.rms_norm_eps)
    x = g.op("Add", [x, w.linear(attend(q, k, v, int(p.rsplit(".", 2)[-2])), p + "self_attn.o_proj")])
    h = _norm(g, x, w.vector(p + "post_attention_layernorm.weight"), cfg.rms_norm_eps)
    gate, up = w.fused(h, [p + "mlp.gate_proj", p + "mlp.up_proj"])
    act = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]), up])
    return g.op("Add", [x, w.linear(act, p + "mlp.down_proj")])


def _model(g: _Graph, inputs: list[Any], outputs: list[Any], name: str) -> Any:  # noqa: ANN401
    from onnx import helper

    graph = helper.make_graph(g.nodes, name, inputs, outputs, g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(_MS, 1)],
                             producer_name="hearth")


def build_talker(cfg: TalkerConfig, source: WeightSource, fmt: str, max_positions: int) -> tuple[Any, _Weights]:
    """The talker: embeds [B, S, H] -> hidden [B, 1, H] (normed) and logits [B, vocab] of the
    positions `select` [B] (flat indices into B * S: each row's last real token).

    Per layer i, inputs key_i / value_i [B, kv_heads, capacity, head_dim] are the cache, bound by the
    caller as the outputs present_key_i / present_value_i too (written in place). `seqlens_k` [B]
    int32 is each row's length after this call minus one, `total` (int32 scalar) the longest.
    Several tokens per row (a prompt, right-padded to the longest) only for rows starting at 0."""
    from onnx import TensorProto as T
    from onnx import helper

    s = cfg.stack
    g = _Graph()
    w = _Weights(g, source, fmt)
    cos, sin = _rotary_cache(s, max_positions)
    cos_cache, sin_cache = g.tensor(cos, "cos"), g.tensor(sin, "sin")
    cache_shape: list[str | int] = ["B", s.num_kv_heads, "capacity", s.head_dim]
    inputs = [helper.make_tensor_value_info("embeds", T.FLOAT, ["B", "S", s.hidden_size]),
              helper.make_tensor_value_info("select", T.INT64, ["B"]),
              helper.make_tensor_value_info("seqlens_k", T.INT32, ["B"]),
              helper.make_tensor_value_info("total", T.INT32, [])]
    outputs = []
    for i in range(s.num_layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"{kind}_{i}", T.FLOAT, cache_shape))
            outputs.append(helper.make_tensor_value_info(f"present_{kind}_{i}", T.FLOAT, cache_shape))

    def attend(q: str, k: str, v: str, layer: int) -> str:
        out, key, value = g.op(
            "GroupQueryAttention", [q, k, v, f"key_{layer}", f"value_{layer}", "seqlens_k", "total", cos_cache,
                                    sin_cache], outputs=3, domain=_MS, num_heads=s.num_heads,
            kv_num_heads=s.num_kv_heads, do_rotary=1, rotary_interleaved=0, scale=float(s.head_dim**-0.5))
        g.nodes[-1].output[1:] = [f"present_key_{layer}", f"present_value_{layer}"]
        return out

    x = "embeds"
    for i in range(s.num_layers):
        x = _layer(w, x, f"talker.model.layers.{i}.", s, attend)
    flat = g.op("Reshape", [x, g.const([-1, s.hidden_size])])
    last = _norm(g, g.op("Gather", [flat, "select"], axis=0), w.vector("talker.model.norm.weight"), s.rms_norm_eps)
    g.op("Identity", [g.op("Unsqueeze", [last, g.const([1])])])
    g.nodes[-1].output[0] = "hidden"
    g.op("Identity", [w.linear(last, "talker.codec_head")])
    g.nodes[-1].output[0] = "logits"
    outputs = [helper.make_tensor_value_info("hidden", T.FLOAT, ["B", 1, s.hidden_size]),
               helper.make_tensor_value_info("logits", T.FLOAT, ["B", s.vocab_size]), *outputs]
    return _model(g, inputs, outputs, "hearth_talker"), w


def _sample(g: _Graph, logits: str, draw: str, temperature: str, top_k: str, top_p: str) -> str:
    """Per row: temperature, top-k, top-p, then inverse-CDF sampling with one uniform draw in [0, 1)
    (the arithmetic of `ov_predictor._sample`). logits [B, V], draw / temperature / top_p [B, 1],
    top_k [1] int64 -> [B] int64."""
    scaled = g.op("Div", [logits, temperature])
    values, indices = g.op("TopK", [scaled, top_k], outputs=2, axis=-1, largest=1, sorted=1)
    probs = g.op("Softmax", [values], axis=-1)
    last = g.const(-1)
    before = g.op("CumSum", [probs, last], exclusive=1)
    keep = g.op("Cast", [g.op("Less", [before, top_p])], to=1)
    cdf = g.op("CumSum", [g.op("Mul", [probs, keep]), last])
    total = g.op("Gather", [cdf, g.const([-1])], axis=-1)
    target = g.op("Mul", [draw, total])
    below = g.op("Cast", [g.op("LessOrEqual", [cdf, target])], to=7)
    position = g.op("ReduceSum", [below, g.const([-1])], keepdims=1)  # [B, 1]
    count = g.op("Sub", [g.op("Gather", [g.op("Shape", [indices]), g.const([-1])], axis=0), g.const([1])])
    position = g.op("Min", [position, count])
    picked = g.op("GatherElements", [indices, position], axis=1)  # [B, 1]
    return g.op("Reshape", [picked, g.const([-1])])


def build_predictor_loop(cfg: TalkerConfig, source: WeightSource, fmt: str, teacher_forced: bool = False
                         ) -> tuple[Any, _Weights]:
    """One frame's codebooks 1..G-1 for B rows, as `ov_predictor.build_predictor_loop` (unrolled): inputs
    hidden [B, 1, H], first [B, 1, H], draws [B, G-1], temperature [B], top_k [] int64, top_p [B];
    outputs codes [B, G-1] int64 and summed [B, 1, H] (first + the embeddings of codes 1..G-1).

    teacher_forced (accuracy measurements): the codes are an input ("forced" [B, G-1] int64) and the
    outputs are every step's logits ("logits" [(G-1) * B, vocab], step-major) and summed."""
    from onnx import TensorProto as T
    from onnx import helper

    p = cfg.predictor
    groups = cfg.num_code_groups
    g = _Graph()
    w = _Weights(g, source, fmt)
    hidden_size = cfg.stack.hidden_size
    prefix = "talker.code_predictor."
    project = p.hidden_size != hidden_size
    cos, sin = _rotary_cache(p, groups + 1)
    cos_cache, sin_cache = g.tensor(cos, "cos"), g.tensor(sin, "sin")
    rows = g.op("Gather", [g.op("Shape", ["hidden"]), g.const([0])], axis=0)  # [1] = [B]
    if not teacher_forced:
        temperature = g.op("Unsqueeze", ["temperature", g.const([1])])  # [B, 1]
        top_p = g.op("Unsqueeze", ["top_p", g.const([1])])
        top_k = g.op("Reshape", ["top_k", g.const([1])])
    caches: dict[int, tuple[str, str]] = {}
    length = [0]

    def attend(q: str, k: str, v: str, layer: int) -> str:
        # Every row has the same length here: seqlens_k is that length - 1, for each of the B rows.
        seqlens = g.op("Expand", [g.const([length[0] - 1], np.int32), rows])
        total = g.const(length[0], np.int32)
        past = caches.get(layer, ("", ""))
        out, key, value = g.op("GroupQueryAttention", [q, k, v, *past, seqlens, total, cos_cache, sin_cache],
                               outputs=3, domain=_MS, num_heads=p.num_heads, kv_num_heads=p.num_kv_heads, do_rotary=1,
                               rotary_interleaved=0, scale=float(p.head_dim**-0.5))
        caches[layer] = (key, value)
        return out

    def to_predictor(x: str) -> str:
        return w.linear(x, prefix + "small_to_mtp_projection", bias=True) if project else x

    def run_stack(x: str, n: int) -> str:
        length[0] += n
        for i in range(p.num_layers):
            x = _layer(w, x, f"{prefix}model.layers.{i}.", p, attend)
        last = g.op("Gather", [x, g.const([-1])], axis=1)  # [B, 1, Hp]
        return _norm(g, last, w.vector(prefix + "model.norm.weight"), p.rms_norm_eps)

    h = run_stack(to_predictor(g.op("Concat", ["hidden", "first"], axis=1)), 2)
    codes, summed, all_logits = [], "first", []
    for j in range(groups - 1):
        logits = g.op("Reshape", [w.linear(h, f"{prefix}lm_head.{j}"), g.const([0, -1])])  # [B, V]
        if teacher_forced:
            all_logits.append(logits)
            code = g.op("Reshape", [g.op("Gather", ["forced", g.const([j])], axis=1), g.const([-1])])
        else:
            draw = g.op("Gather", ["draws", g.const([j])], axis=1)  # [B, 1]
            code = _sample(g, logits, draw, temperature, top_k, top_p)
        codes.append(g.op("Unsqueeze", [code, g.const([1])]))
        embedded = g.op("Unsqueeze", [w.rows(f"{prefix}model.codec_embedding.{j}.weight", code), g.const([1])])
        summed = g.op("Add", [summed, embedded])
        if j < groups - 2:
            h = run_stack(to_predictor(embedded), 1)
    g.op("Identity", [summed])
    g.nodes[-1].output[0] = "summed"
    state = [helper.make_tensor_value_info("hidden", T.FLOAT, ["B", 1, hidden_size]),
             helper.make_tensor_value_info("first", T.FLOAT, ["B", 1, hidden_size])]
    summed_out = helper.make_tensor_value_info("summed", T.FLOAT, ["B", 1, hidden_size])
    if teacher_forced:
        g.op("Identity", [g.op("Concat", all_logits, axis=0)])
        g.nodes[-1].output[0] = "logits"
        inputs = [*state, helper.make_tensor_value_info("forced", T.INT64, ["B", groups - 1])]
        outputs = [helper.make_tensor_value_info("logits", T.FLOAT, ["steps", p.vocab_size]), summed_out]
        return _model(g, inputs, outputs, "hearth_predictor_forced"), w
    g.op("Identity", [g.op("Concat", codes, axis=1)])
    g.nodes[-1].output[0] = "codes"
    inputs = [*state, helper.make_tensor_value_info("draws", T.FLOAT, ["B", groups - 1]),
              helper.make_tensor_value_info("temperature", T.FLOAT, ["B"]),
              helper.make_tensor_value_info("top_k", T.INT64, []),
              helper.make_tensor_value_info("top_p", T.FLOAT, ["B"])]
    outputs = [helper.make_tensor_value_info("codes", T.INT64, ["B", groups - 1]), summed_out]
    return _model(g, inputs, outputs, "hearth_predictor_loop"), w
