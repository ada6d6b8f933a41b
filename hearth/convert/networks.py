"""The language model's compiled graphs, described once for both runtimes.

What the talker's step and the code predictor's frame compute (the layer math of
`hearth.model.talker`, and the in-graph sampler) is written here, against a `Writer`: the few
operations each runtime's graph writer offers (`ov_graphs.Builder` for OpenVINO,
`ort_graphs.Writer` for ONNX Runtime). What stays with a runtime is what only it has: how it stores
weights (OpenVINO's int8 per row and NNCF's int4; ONNX Runtime's `MatMulNBits` blocks), its attention
kernel and cache (OpenVINO's paged attention, ONNX Runtime's GroupQueryAttention over buffers the
caller binds), and the shapes its graphs take and give. The torch model stays the reference.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from hearth.backends.conversions import ConvertedModel, progress, publish, staging
from hearth.checkpoint.config import TalkerConfig, TransformerConfig
from hearth.checkpoint.loading import Checkpoint
from hearth.model.weights import talker_weights, verify_weights

__all__ = ["Attention", "Writer", "convert_language_model", "decoder_layer", "int8_rows", "predictor_frame",
           "rotary_tables", "sample", "stack", "stored_rows", "talker"]

V = Any  # a value of the graph being written (an OpenVINO output, an ONNX value name)


class Writer(Protocol):
    """The operations the recipe writes with; values are the runtime's own."""

    # Weights of the checkpoint, by name, stored in the writer's format (each once).
    def linear(self, x: V, name: str, bias: bool = False) -> V: ...  # x @ name.weight.T (+ name.bias)
    def linears(self, x: V, names: list[str]) -> list[V]: ...  # several products of the same input
    def vector(self, name: str) -> V: ...
    def rows(self, table: str, index: V) -> V: ...  # rows `index` [B] of an embedding table -> [B, width]

    # Arithmetic, over the last axis where it reduces.
    def rms_norm(self, x: V, weight: V, eps: float) -> V: ...
    def head_norm(self, x: V, weight: V, heads: int, head_dim: int, eps: float) -> V: ...  # per head
    def add(self, a: V, b: V) -> V: ...
    def mul(self, a: V, b: V) -> V: ...
    def div(self, a: V, b: V) -> V: ...
    def silu(self, x: V) -> V: ...
    def last_position(self, x: V) -> V: ...  # [B, S, H] -> [B, 1, H]
    def positions(self, a: V, b: V) -> V: ...  # [B, S1, H] and [B, S2, H] -> [B, S1 + S2, H]
    def as_position(self, x: V) -> V: ...  # [B, H] -> [B, 1, H]
    def flat_rows(self, x: V) -> V: ...  # [B, 1, H] -> [B, H]

    # The sampler's operations, per row of [B, V].
    def top_k(self, x: V, k: V) -> tuple[V, V]: ...  # values and indices, largest first
    def softmax(self, x: V) -> V: ...
    def cumsum(self, x: V, exclusive: bool = False) -> V: ...
    def below(self, a: V, b: V) -> V: ...  # 1.0 where a < b, else 0.0
    def count_at_most(self, x: V, limit: V) -> V: ...  # per row, the entries <= limit [B, 1] (int64)
    def last_column(self, x: V) -> V: ...  # [B, V] -> [B, 1]
    def pick(self, indices: V, position: V) -> V: ...  # indices[b, min(position[b], width - 1)] -> [B]


class Attention(Protocol):
    """A runtime's attention over the cache it keeps: `advance(n)` before a stack runs on n more
    positions; then, per layer, q/k (head-normed) and v of those positions -> their attention
    output [B, n, heads * head_dim], the rotary embedding applied at the positions the cache implies."""

    def advance(self, n: int) -> None: ...
    def __call__(self, q: V, k: V, v: V, layer: int) -> V: ...


def int8_rows(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row symmetric int8 (embedding tables, and OpenVINO's int8 products): w ~= q * scale,
    q in [-127, 127], scale [rows, 1] float32."""
    peak = np.abs(w).max(axis=1, keepdims=True)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale


def stored_rows(w: np.ndarray, fmt: str) -> tuple[np.ndarray, np.ndarray | None]:
    """A table (or a matrix stored row by row) as a model of format `fmt` keeps it: int8 per row
    (`int8_rows`) in the int8 and int4 formats (int4 quantizes only the layers' products), half
    precision in fp16, float32 in fp32. (values, per-row scales [rows, 1] or None)."""
    if fmt in ("int8", "int4"):
        return int8_rows(w)
    if fmt == "fp16":
        return w.astype(np.float16), None
    return w.astype(np.float32), None


def decoder_layer(w: Writer, x: V, p: str, cfg: TransformerConfig, attend: Callable[[V, V, V, int], V]) -> V:
    """One decoder layer (`hearth.model.talker`'s) on x [B, S, H], prefix `p` ("...layers.i.")."""
    eps = cfg.rms_norm_eps
    h = w.rms_norm(x, w.vector(p + "input_layernorm.weight"), eps)
    q, k, v = w.linears(h, [p + "self_attn.q_proj", p + "self_attn.k_proj", p + "self_attn.v_proj"])
    q = w.head_norm(q, w.vector(p + "self_attn.q_norm.weight"), cfg.num_heads, cfg.head_dim, eps)
    k = w.head_norm(k, w.vector(p + "self_attn.k_norm.weight"), cfg.num_kv_heads, cfg.head_dim, eps)
    x = w.add(x, w.linear(attend(q, k, v, int(p.rsplit(".", 2)[-2])), p + "self_attn.o_proj"))
    h = w.rms_norm(x, w.vector(p + "post_attention_layernorm.weight"), eps)
    gate, up = w.linears(h, [p + "mlp.gate_proj", p + "mlp.up_proj"])
    return w.add(x, w.linear(w.mul(w.silu(gate), up), p + "mlp.down_proj"))


def stack(w: Writer, x: V, prefix: str, cfg: TransformerConfig, attend: Callable[[V, V, V, int], V]) -> V:
    """The decoder layers of `prefix` ("talker.model." or "talker.code_predictor.model.") in turn."""
    for i in range(cfg.num_layers):
        x = decoder_layer(w, x, f"{prefix}layers.{i}.", cfg, attend)
    return x


def talker(w: Writer, cfg: TalkerConfig, embeds: V, attend: Callable[[V, V, V, int], V],
           select: Callable[[V], V]) -> tuple[V, V]:
    """The talker on `embeds`: (hidden, logits) of the positions `select` picks from the last layer's
    output (each row's last token), hidden normed."""
    s = cfg.stack
    x = stack(w, embeds, "talker.model.", s, attend)
    last = w.rms_norm(select(x), w.vector("talker.model.norm.weight"), s.rms_norm_eps)
    return last, w.linear(last, "talker.codec_head")


def sample(w: Writer, logits: V, draw: V, temperature: V, top_k: V, top_p: V) -> V:
    """Per row: temperature, top-k, top-p, then inverse-CDF sampling with one uniform draw in [0, 1).
    logits [B, V], draw / temperature / top_p [B, 1], top_k the writer's scalar -> codes [B] int64.

    Greedy decoding is top_k = 1. Kept candidates are the longest prefix (by descending probability)
    whose preceding mass stays below top_p, so the most likely code is always kept; the draw is
    scaled by the kept mass, and the code is the first whose cumulative mass exceeds it."""
    values, indices = w.top_k(w.div(logits, temperature), top_k)
    probs = w.softmax(values)
    keep = w.below(w.cumsum(probs, exclusive=True), top_p)
    cdf = w.cumsum(w.mul(probs, keep))
    target = w.mul(draw, w.last_column(cdf))
    return w.pick(indices, w.count_at_most(cdf, target))


def predictor_frame(w: Writer, cfg: TalkerConfig, hidden: V, first: V, attention: Attention,
                    choose: Callable[[int, V], V]) -> tuple[list[V], V, list[V]]:
    """One frame of the code predictor, its steps unrolled (each step's products read the same
    weights): from the talker's hidden state and codebook 0's embedding (both [B, 1, H]) to
    (codes 1..G-1, each [B] int64; summed [B, 1, H] = first + their embeddings; each step's logits
    [B, vocab]). `choose(j, logits)` gives codebook j+1's code: `sample`d, or forced."""
    p = cfg.predictor
    prefix = "talker.code_predictor."
    project = p.hidden_size != cfg.stack.hidden_size

    def to_predictor(x: V) -> V:
        return w.linear(x, prefix + "small_to_mtp_projection", bias=True) if project else x

    def run(x: V, n: int) -> V:
        attention.advance(n)
        x = stack(w, x, prefix + "model.", p, attention)
        return w.rms_norm(w.last_position(x), w.vector(prefix + "model.norm.weight"), p.rms_norm_eps)

    h = run(to_predictor(w.positions(hidden, first)), 2)
    codes: list[V] = []
    logits_seen: list[V] = []
    summed = first
    for j in range(cfg.num_code_groups - 1):
        logits = w.flat_rows(w.linear(h, f"{prefix}lm_head.{j}"))
        logits_seen.append(logits)
        code = choose(j, logits)
        codes.append(code)
        embedded = w.as_position(w.rows(f"{prefix}model.codec_embedding.{j}.weight", code))
        summed = w.add(summed, embedded)
        if j < cfg.num_code_groups - 2:
            h = run(to_predictor(embedded), 1)
    return codes, summed, logits_seen


def rotary_tables(cfg: TransformerConfig, positions: int) -> tuple[np.ndarray, np.ndarray]:
    """[positions, head_dim] cos and sin of the reference's rotary embedding (`hearth.model.layers.Rotary`)."""
    import torch  # the torch reference's own tables: converting needs torch anyway

    from hearth.model.layers import Rotary

    cos, sin = Rotary(cfg.head_dim, cfg.rope_theta).get(0, positions, torch.float32)
    return cos.numpy().copy(), sin.numpy().copy()


WeightSource = Callable[[str], np.ndarray]  # a checkpoint tensor's name -> its values, float32
# (the checkpoint's weights, the manifest being written) -> each network: (name, its graph, its writer)
Networks = Callable[[WeightSource, dict[str, Any]], Iterable[tuple[str, Any, Any]]]


def convert_language_model(ckpt: Checkpoint, weights: str, directory: Path, key_source: dict[str, object], *,
                           runtime: str, log: logging.Logger, networks: Networks,
                           save: Callable[[Any, Path, str], None]) -> ConvertedModel:
    """One conversion of the language model, for either runtime: each of its `networks` (the talker,
    the predictor) built from the checkpoint's weights and `save`d into the cache entry
    `directory`, with each one's sizes (fp32, stored) in the manifest."""
    verify_weights(ckpt)
    t0 = time.perf_counter()
    log.info("converting the language model to %s (%s weights) into %s; once per checkpoint", runtime, weights,
             directory)
    manifest: dict[str, Any] = {"key": key_source, "weights": weights, "parts": {}}
    return write_networks(talker_weights(ckpt), manifest, directory, networks, save,
                          "converting the language model", log, t0)


def write_networks(source: WeightSource, manifest: dict[str, Any], directory: Path, networks: Networks,
                   save: Callable[[Any, Path, str], None], title: str, log: logging.Logger,
                   t0: float) -> ConvertedModel:
    """Each of `networks` built from `source` and `save`d into the cache entry `directory` (staged,
    then published with `manifest`, which gets each one's sizes (fp32, stored) and the time since `t0`)."""
    with staging(directory) as tmp, progress(title, log):
        for network, model, writer in networks(source, manifest):
            save(model, tmp, network)
            manifest["parts"][network] = {"fp32_bytes": writer.bytes_fp32, "stored_bytes": writer.bytes_stored}
            del model, writer
        manifest["convert_s"] = time.perf_counter() - t0
        log.info("converted in %.1f s", manifest["convert_s"])
        return publish(tmp, directory, manifest)
