"""ONNX graphs of the talker and of the whole 15-step code-predictor loop, for ONNX Runtime: the
`recipe`'s graphs (as `ov_graphs` writes them for OpenVINO), written with ONNX operations for the runtime whose
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
packs each once), and it samples inside the graph from uniform draws the caller supplies
(`recipe.sample`, as on OpenVINO).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hearth.backends.formats import BLOCKS
from hearth.checkpoint.config import TalkerConfig, TransformerConfig
from hearth.convert import networks as recipe

__all__ = ["BLOCKS", "Graph", "Writer", "build_predictor_loop", "build_talker", "onnx_model"]

_MS = "com.microsoft"

WeightSource = recipe.WeightSource


@dataclass
class Graph:
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
class Writer:
    """ONNX Runtime's `recipe.Writer`: the checkpoint's weights as initializers in the chosen format
    (each stored once), and the operations the recipe writes with."""

    g: Graph
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
            values, scale = recipe.stored_rows(w, self.fmt)
            self.bytes_stored += values.nbytes + (0 if scale is None else scale.nbytes)
            self._made[name] = (self.g.tensor(values, "t"), None if scale is None else self.g.tensor(scale, "ts"))
        table, scale = self._made[name]
        row = self.g.op("Gather", [table, index], axis=0)
        if scale is None:
            return row
        return self.g.op("Mul", [self.g.op("Cast", [row], to=1), self.g.op("Gather", [scale, index], axis=0)])

    def linears(self, x: str, names: list[str]) -> list[str]:
        return self.fused(x, names)

    # -- the recipe's arithmetic ---------------------------------------------------------------------

    def rms_norm(self, x: str, weight: str, eps: float) -> str:
        return self.g.op("SimplifiedLayerNormalization", [x, weight], axis=-1, epsilon=eps)

    def head_norm(self, x: str, weight: str, heads: int, head_dim: int, eps: float) -> str:
        """RMSNorm over each head of x [B, S, heads * d] (the shape kept)."""
        split = self.g.op("Reshape", [x, self.g.const([0, 0, heads, head_dim])])
        return self.g.op("Reshape", [self.rms_norm(split, weight, eps), self.g.const([0, 0, heads * head_dim])])

    def add(self, a: str, b: str) -> str:
        return self.g.op("Add", [a, b])

    def mul(self, a: str, b: str) -> str:
        return self.g.op("Mul", [a, b])

    def div(self, a: str, b: str) -> str:
        return self.g.op("Div", [a, b])

    def silu(self, x: str) -> str:
        return self.g.op("Mul", [x, self.g.op("Sigmoid", [x])])

    def last_position(self, x: str) -> str:
        return self.g.op("Gather", [x, self.g.const([-1])], axis=1)

    def positions(self, a: str, b: str) -> str:
        return self.g.op("Concat", [a, b], axis=1)

    def as_position(self, x: str) -> str:
        return self.g.op("Unsqueeze", [x, self.g.const([1])])

    def flat_rows(self, x: str) -> str:
        return self.g.op("Reshape", [x, self.g.const([0, -1])])

    def top_k(self, x: str, k: str) -> tuple[str, str]:
        values, indices = self.g.op("TopK", [x, k], outputs=2, axis=-1, largest=1, sorted=1)
        return values, indices

    def softmax(self, x: str) -> str:
        return self.g.op("Softmax", [x], axis=-1)

    def cumsum(self, x: str, exclusive: bool = False) -> str:
        if exclusive:
            return self.g.op("CumSum", [x, self.g.const(-1)], exclusive=1)
        return self.g.op("CumSum", [x, self.g.const(-1)])

    def below(self, a: str, b: str) -> str:
        return self.g.op("Cast", [self.g.op("Less", [a, b])], to=1)

    def count_at_most(self, x: str, limit: str) -> str:
        at_most = self.g.op("Cast", [self.g.op("LessOrEqual", [x, limit])], to=7)
        return self.g.op("ReduceSum", [at_most, self.g.const([-1])], keepdims=1)  # [B, 1]

    def last_column(self, x: str) -> str:
        return self.g.op("Gather", [x, self.g.const([-1])], axis=-1)

    def pick(self, indices: str, position: str) -> str:
        width = self.g.op("Gather", [self.g.op("Shape", [indices]), self.g.const([-1])], axis=0)
        position = self.g.op("Min", [position, self.g.op("Sub", [width, self.g.const([1])])])
        picked = self.g.op("GatherElements", [indices, position], axis=1)  # [B, 1]
        return self.g.op("Reshape", [picked, self.g.const([-1])])


def _rotary_cache(cfg: TransformerConfig, positions: int) -> tuple[np.ndarray, np.ndarray]:
    """[positions, head_dim / 2] cos and sin: the halves of the rotate-half tables GroupQueryAttention takes."""
    cos, sin = recipe.rotary_tables(cfg, positions)
    half = cfg.head_dim // 2
    return cos[:, :half].copy(), sin[:, :half].copy()


def onnx_model(g: Graph, inputs: list[Any], outputs: list[Any], name: str) -> Any:  # noqa: ANN401
    from onnx import helper

    graph = helper.make_graph(g.nodes, name, inputs, outputs, g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(_MS, 1)],
                             producer_name="hearth")


def build_talker(cfg: TalkerConfig, source: WeightSource, fmt: str, max_positions: int) -> tuple[Any, Writer]:
    """The talker: embeds [B, S, H] -> hidden [B, 1, H] (normed) and logits [B, vocab] of the
    positions `select` [B] (flat indices into B * S: each row's last real token).

    Per layer i, inputs key_i / value_i [B, kv_heads, capacity, head_dim] are the cache, bound by the
    caller as the outputs present_key_i / present_value_i too (written in place). `seqlens_k` [B]
    int32 is each row's length after this call minus one, `total` (int32 scalar) the longest.
    Several tokens per row (a prompt, right-padded to the longest) only for rows starting at 0."""
    from onnx import TensorProto as T
    from onnx import helper

    s = cfg.stack
    g = Graph()
    w = Writer(g, source, fmt)
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

    def selected(x: str) -> str:
        return g.op("Gather", [g.op("Reshape", [x, g.const([-1, s.hidden_size])]), "select"], axis=0)

    last, logits = recipe.talker(w, cfg, "embeds", attend, selected)
    g.op("Identity", [g.op("Unsqueeze", [last, g.const([1])])])
    g.nodes[-1].output[0] = "hidden"
    g.op("Identity", [logits])
    g.nodes[-1].output[0] = "logits"
    outputs = [helper.make_tensor_value_info("hidden", T.FLOAT, ["B", 1, s.hidden_size]),
               helper.make_tensor_value_info("logits", T.FLOAT, ["B", s.vocab_size]), *outputs]
    return onnx_model(g, inputs, outputs, "hearth_talker"), w


def build_predictor_loop(cfg: TalkerConfig, source: WeightSource, fmt: str, teacher_forced: bool = False
                         ) -> tuple[Any, Writer]:
    """One frame's codebooks 1..G-1 for B rows, as `ov_predictor.build_predictor_loop` (unrolled): inputs
    hidden [B, 1, H], first [B, 1, H], draws [B, G-1], temperature [B], top_k [] int64, top_p [B];
    outputs codes [B, G-1] int64 and summed [B, 1, H] (first + the embeddings of codes 1..G-1).

    teacher_forced (accuracy measurements): the codes are an input ("forced" [B, G-1] int64) and the
    outputs are every step's logits ("logits" [(G-1) * B, vocab], step-major) and summed."""
    from onnx import TensorProto as T
    from onnx import helper

    p = cfg.predictor
    groups = cfg.num_code_groups
    g = Graph()
    w = Writer(g, source, fmt)
    hidden_size = cfg.stack.hidden_size
    cos, sin = _rotary_cache(p, groups + 1)
    cos_cache, sin_cache = g.tensor(cos, "cos"), g.tensor(sin, "sin")
    rows = g.op("Gather", [g.op("Shape", ["hidden"]), g.const([0])], axis=0)  # [1] = [B]
    if not teacher_forced:
        temperature = g.op("Unsqueeze", ["temperature", g.const([1])])  # [B, 1]
        top_p = g.op("Unsqueeze", ["top_p", g.const([1])])
        top_k = g.op("Reshape", ["top_k", g.const([1])])
    attention = _PredictorAttention(g, p, rows, cos_cache, sin_cache)

    def choose(j: int, logits: str) -> str:
        if teacher_forced:
            return g.op("Reshape", [g.op("Gather", ["forced", g.const([j])], axis=1), g.const([-1])])
        draw = g.op("Gather", ["draws", g.const([j])], axis=1)  # [B, 1]
        return recipe.sample(w, logits, draw, temperature, top_k, top_p)

    codes, summed, all_logits = recipe.predictor_frame(w, cfg, "hidden", "first", attention, choose)
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
        return onnx_model(g, inputs, outputs, "hearth_predictor_forced"), w
    g.op("Identity", [g.op("Concat", [g.op("Unsqueeze", [code, g.const([1])]) for code in codes], axis=1)])
    g.nodes[-1].output[0] = "codes"
    inputs = [*state, helper.make_tensor_value_info("draws", T.FLOAT, ["B", groups - 1]),
              helper.make_tensor_value_info("temperature", T.FLOAT, ["B"]),
              helper.make_tensor_value_info("top_k", T.INT64, []),
              helper.make_tensor_value_info("top_p", T.FLOAT, ["B"])]
    outputs = [helper.make_tensor_value_info("codes", T.INT64, ["B", groups - 1]), summed_out]
    return onnx_model(g, inputs, outputs, "hearth_predictor_loop"), w


class _PredictorAttention:
    """`recipe.Attention` of the predictor: GroupQueryAttention over the keys and values of the
    frame's positions so far (each layer's present, the next run's past); every row has the same
    length, so `seqlens_k` is that length - 1 for each of the B rows."""

    def __init__(self, g: Graph, cfg: TransformerConfig, rows: str, cos: str, sin: str):
        self.g, self.cfg, self.rows, self.cos, self.sin = g, cfg, rows, cos, sin
        self.length = 0
        self.caches: dict[int, tuple[str, str]] = {}

    def advance(self, n: int) -> None:
        self.length += n

    def __call__(self, q: str, k: str, v: str, layer: int) -> str:
        g, p = self.g, self.cfg
        seqlens = g.op("Expand", [g.const([self.length - 1], np.int32), self.rows])
        total = g.const(self.length, np.int32)
        past = self.caches.get(layer, ("", ""))
        out, key, value = g.op("GroupQueryAttention", [q, k, v, *past, seqlens, total, self.cos, self.sin],
                               outputs=3, domain=_MS, num_heads=p.num_heads, kv_num_heads=p.num_kv_heads, do_rotary=1,
                               rotary_interleaved=0, scale=float(p.head_dim**-0.5))
        self.caches[layer] = (key, value)
        return out
