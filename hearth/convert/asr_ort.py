"""ONNX graphs of the hearing models (`asr_networks`' recipe, written with ONNX operations) for ONNX
Runtime: the encoder's convolutions, its windowed transformer, and the decoder over key/value
buffers the caller owns and binds as both past and present (GroupQueryAttention writes them in
place, as the talker's: `ort_graphs`).

Products' weights as `ort_graphs.Writer` stores them: MatMulNBits' 8-bit blocks computed on 8-bit
activations (int8), or plain MatMul (fp32); the convolutions stay fp32.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from hearth.backends.asr_formats import MAX_ASR_POSITIONS
from hearth.backends.conversions import ConvertedModel
from hearth.checkpoint.asr_config import AsrConfig
from hearth.checkpoint.asr_loading import AsrCheckpoint
from hearth.convert import asr_networks as asr
from hearth.convert.ort_graphs import Graph, Writer, onnx_model

__all__ = ["AsrWriter", "build", "conv_model", "decoder_model", "windows_model"]

log = logging.getLogger("hearth.backends.asr_ort")  # the lines a user sees come from the backend's logger

_MS = "com.microsoft"


# The layers' products in "int8": weights per output row in 7 bits, activations per token (row) in 8
# bits, multiplied by MLAS's u8 x s8 integer product. Seven bits because on CPUs without VNNI that
# product adds pairs of u8 x s8 terms in 16 bits, which saturate with 8-bit weights (255 * 127 * 2
# > 32767): ONNX Runtime's own `reduce_range` rule. Against MatMulNBits' 8-bit blocks (the talker's
# format) on a 2-vCPU AVX2 EPYC, a [3072 x 1024] product took 5.5 ms against 31 ms for 80 rows and
# 0.13 ms against 0.16 ms for one, with 1.7 % against about 1 % relative error on Gaussian data:
# the encoder (always tens of rows) and a transcription's prefill (hundreds) are compute-bound.
WEIGHT_LEVELS = 63
ACTIVATION_LEVELS = 127


class AsrWriter(Writer):
    """`ort_graphs.Writer` with the encoder's operations (`asr_networks.EncoderWriter`), and in "int8"
    the layers' products as per-token integer products (see `WEIGHT_LEVELS`). The heads stay in
    MatMulNBits' 8-bit blocks: one row at a time (a transcription's next token, the aligner's
    timestamps), where the finer format costs nothing."""

    heads: tuple[str, ...] = ()

    def linear(self, x: str, name: str, bias: bool = False) -> str:
        if self.fmt != "int8" or name in self.heads:
            return super().linear(x, name, bias)
        if name not in self._made:
            w = self._sources.pop(name) if name in self._sources else self.source(name + ".weight")
            self.bytes_fp32 += w.nbytes
            peak = np.abs(w).max(axis=1)
            scale = np.where(peak > 0, peak / WEIGHT_LEVELS, 1.0).astype(np.float32)
            q = np.clip(np.rint(w / scale[:, None]), -WEIGHT_LEVELS, WEIGHT_LEVELS).astype(np.int8)
            self.bytes_stored += q.nbytes + scale.nbytes
            self._made[name] = ("integer", (self.g.tensor(q.T.copy(), "q"), self.g.tensor(scale, "s")), w.shape)
        _, (weight, weight_scale), _ = self._made[name]
        xq, x_scale = self._per_token(x)
        product = self.g.op("MatMulInteger", [xq, weight, self.g.const(128, np.uint8)])
        y = self.g.op("Mul", [self.g.op("Mul", [self.g.op("Cast", [product], to=1), x_scale]), weight_scale])
        return self.g.op("Add", [y, self.vector(name + ".bias")]) if bias else y

    def _per_token(self, x: str) -> tuple[str, str]:
        """x as unsigned 8-bit values about 128, one scale per row (made once per input)."""
        key = "quantized:" + x
        if key not in self._made:
            g = self.g
            peak = g.op("ReduceMax", [g.op("Abs", [x])], axes=[-1], keepdims=1)
            scale = g.op("Mul", [g.op("Max", [peak, g.const(1e-30, np.float32)]),
                                 g.const(1 / ACTIVATION_LEVELS, np.float32)])
            shifted = g.op("Add", [g.op("Round", [g.op("Div", [x, scale])]), g.const(128, np.float32)])
            self._made[key] = (g.op("Cast", [shifted], to=2), scale)  # 2: uint8
        return self._made[key]

    def _fp32(self, name: str) -> str:
        w = self.source(name).astype(np.float32)
        self.bytes_fp32 += w.nbytes
        self.bytes_stored += w.nbytes
        return self.g.tensor(w, "c")

    def conv2d(self, x: str, name: str) -> str:
        return self.g.op("Conv", [x, self._fp32(name + ".weight"), self._fp32(name + ".bias")], kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1])

    def layer_norm(self, x: str, name: str, eps: float) -> str:
        return self.g.op("LayerNormalization", [x, self.vector(name + ".weight"), self.vector(name + ".bias")],
                         axis=-1, epsilon=eps)

    def gelu(self, x: str) -> str:
        return self.g.op("Gelu", [x], domain=_MS)  # the erf form

    def self_attention(self, q: str, k: str, v: str, heads: int, head_dim: int) -> str:
        return self.g.op("MultiHeadAttention", [q, k, v], domain=_MS, num_heads=heads, scale=float(head_dim**-0.5))

    def flatten_steps(self, x: str) -> str:
        return self.g.op("Reshape", [self.g.op("Transpose", [x], perm=[0, 3, 1, 2]), self.g.const([0, 0, -1])])

    def add_positions(self, x: str, table: np.ndarray) -> str:
        steps = self.g.op("Slice", [self.g.op("Shape", [x]), self.g.const([1]), self.g.const([2])])
        rows = self.g.op("Slice", [self.g.tensor(table.astype(np.float32), "pos"), self.g.const([0]), steps,
                                   self.g.const([0])])
        return self.g.op("Add", [x, rows])


def _output(g: Graph, value: str, name: str) -> None:
    g.op("Identity", [value])
    g.nodes[-1].output[0] = name


def conv_model(w: AsrWriter, cfg: AsrConfig) -> Any:  # noqa: ANN401 - an onnx ModelProto
    from onnx import TensorProto as T
    from onnx import helper

    e = cfg.encoder
    _output(w.g, asr.conv_front(w, "chunks", e), "steps")
    return onnx_model(w.g, [helper.make_tensor_value_info("chunks", T.FLOAT, ["C", 1, e.num_mel_bins, "T"])],
                      [helper.make_tensor_value_info("steps", T.FLOAT, ["C", "t", e.d_model])], "hearth_asr_conv")


def windows_model(w: AsrWriter, cfg: AsrConfig) -> Any:  # noqa: ANN401
    from onnx import TensorProto as T
    from onnx import helper

    e = cfg.encoder
    _output(w.g, asr.window_stack(w, "windows", e), "embeddings")
    return onnx_model(w.g, [helper.make_tensor_value_info("windows", T.FLOAT, ["W", "n", e.d_model])],
                      [helper.make_tensor_value_info("embeddings", T.FLOAT, ["W", "n", e.output_dim])],
                      "hearth_asr_windows")


def decoder_model(w: AsrWriter, cfg: AsrConfig) -> Any:  # noqa: ANN401
    """embeds [1, S, H], select [k] (rows of this call), seqlens_k [1] int32 (the length after this
    call minus one), total (int32 scalar: that length) -> logits [k, head]; per layer i the cache
    key_i / value_i [1, kv_heads, capacity, head_dim], bound as present_key_i / present_value_i too."""
    from onnx import TensorProto as T
    from onnx import helper

    from hearth.convert.networks import rotary_tables

    s, g = cfg.decoder, w.g
    cos, sin = rotary_tables(s, MAX_ASR_POSITIONS)
    half = s.head_dim // 2
    cos_cache, sin_cache = g.tensor(cos[:, :half].copy(), "cos"), g.tensor(sin[:, :half].copy(), "sin")
    cache_shape: list[str | int] = [1, s.num_kv_heads, "capacity", s.head_dim]
    inputs = [helper.make_tensor_value_info("embeds", T.FLOAT, [1, "S", s.hidden_size]),
              helper.make_tensor_value_info("select", T.INT64, ["k"]),
              helper.make_tensor_value_info("seqlens_k", T.INT32, [1]),
              helper.make_tensor_value_info("total", T.INT32, [])]
    outputs = [helper.make_tensor_value_info("logits", T.FLOAT, ["k", cfg.head_size])]
    for i in range(s.num_layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"{kind}_{i}", T.FLOAT, cache_shape))
            outputs.append(helper.make_tensor_value_info(f"present_{kind}_{i}", T.FLOAT, cache_shape))

    def attend(q: str, k: str, v: str, layer: int) -> str:
        out, _, _ = g.op("GroupQueryAttention", [q, k, v, f"key_{layer}", f"value_{layer}", "seqlens_k", "total",
                                                 cos_cache, sin_cache], outputs=3, domain=_MS,
                         num_heads=s.num_heads, kv_num_heads=s.num_kv_heads, do_rotary=1, rotary_interleaved=0,
                         scale=float(s.head_dim**-0.5))
        g.nodes[-1].output[1:] = [f"present_key_{layer}", f"present_value_{layer}"]
        return out

    def selected(x: str) -> str:
        return g.op("Gather", [g.op("Reshape", [x, g.const([-1, s.hidden_size])]), "select"], axis=0)

    _output(g, asr.decoder(w, "embeds", cfg, attend, selected), "logits")
    return onnx_model(g, inputs, outputs, "hearth_asr_decoder")


def build(ckpt: AsrCheckpoint, weights: str, directory: Path, key_source: dict[str, object]) -> ConvertedModel:
    """conv.onnx, windows.onnx and decoder.onnx of `ckpt` (weights in .data files beside them)."""
    import onnx

    cfg = ckpt.config

    def networks(source: asr.recipe.WeightSource, manifest: dict[str, Any]) -> Iterator[tuple[str, Any, Any]]:
        heads = (asr.DECODER + "embed_tokens", "thinker.lm_head")
        for name, make in (("conv", conv_model), ("windows", windows_model), ("decoder", decoder_model)):
            w = AsrWriter(Graph(), source, weights)
            w.heads = heads
            yield name, make(w, cfg), w

    def save(model: Any, directory: Path, network: str) -> None:  # noqa: ANN401
        onnx.save_model(model, directory / f"{network}.onnx", save_as_external_data=True,
                        all_tensors_to_one_file=True, location=f"{network}.onnx.data", size_threshold=1024)

    return asr.build_asr(ckpt, weights, directory, key_source, runtime="ONNX", log=log, networks=networks, save=save)
