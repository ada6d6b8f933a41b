"""The hearing models' compiled graphs (Qwen3-ASR, Qwen3-ForcedAligner), described once for both
runtimes, as `networks` describes the talker's.

Three networks, each written against a writer (`asr_ov.AsrBuilder` for OpenVINO,
`asr_ort.AsrWriter` for ONNX Runtime):

* `conv_front`: a batch of mel chunks [C, 1, mel, T] -> [C, steps, d_model]: the three stride-2
  convolutions, the projection and the sinusoidal positions (`hearth.model.asr_encoder.convolve`
  for each chunk; the caller pads the batch and trims the outputs as the reference does).
* `window_stack`: the encoder's transformer over whole attention windows [W, n, d_model] ->
  [W, n, output_dim]. A window attends to itself alone, so running windows as the rows of a batch
  is the reference's windowed attention (one window shape; the last window may be shorter).
* `decoder`: the Qwen3 decoder layers (`networks.stack`, the talker's) and the head of the
  positions the caller selects: the vocabulary (ASR) or the timestamp classes (aligner).

What stays with a runtime: how it stores weights, its attention kernels, the decoder's cache.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from hearth.backends.conversions import ConvertedModel
from hearth.checkpoint.asr_config import AudioEncoderConfig, conv_output_length
from hearth.checkpoint.asr_loading import AsrCheckpoint
from hearth.convert import networks as recipe

if TYPE_CHECKING:
    from hearth.checkpoint.asr_config import AsrConfig

__all__ = ["DECODER", "ENCODER", "EncoderWriter", "asr_weights", "build_asr", "conv_front", "decoder",
           "positions_table", "window_stack"]

V = Any
ENCODER = "thinker.audio_tower."
DECODER = "thinker.model."
LAYER_NORM_EPS = 1e-5  # torch.nn.LayerNorm's default, which the reference's layers use


class EncoderWriter(recipe.Writer, Protocol):
    """What the audio encoder needs beyond the decoder's operations."""

    def conv2d(self, x: V, name: str) -> V: ...  # kernel 3, stride 2, padding 1, with bias
    def layer_norm(self, x: V, name: str, eps: float) -> V: ...  # over the last axis, name.weight / .bias
    def gelu(self, x: V) -> V: ...  # the exact (erf) GELU
    def self_attention(self, q: V, k: V, v: V, heads: int, head_dim: int) -> V: ...  # [B, n, heads * d] each
    def flatten_steps(self, x: V) -> V: ...  # [C, channels, bins, t] -> [C, t, channels * bins]
    def add_positions(self, x: V, table: np.ndarray) -> V: ...  # x [C, t, d] + table[:t]


def positions_table(cfg: AudioEncoderConfig) -> np.ndarray:
    """The sinusoids a chunk's steps start from: the reference's own (`asr_encoder.sinusoids`), for
    the steps one chunk can give."""
    from hearth.model.asr_encoder import sinusoids

    steps = conv_output_length(cfg.chunk_frames)
    return sinusoids(cfg.max_source_positions, cfg.d_model)[:steps].numpy().copy()


def conv_front(w: EncoderWriter, features: V, cfg: AudioEncoderConfig) -> V:
    h = features
    for i in (1, 2, 3):
        h = w.gelu(w.conv2d(h, f"{ENCODER}conv2d{i}"))
    h = w.linear(w.flatten_steps(h), ENCODER + "conv_out")
    return w.add_positions(h, positions_table(cfg))


def window_stack(w: EncoderWriter, x: V, cfg: AudioEncoderConfig) -> V:
    for i in range(cfg.num_layers):
        p = f"{ENCODER}layers.{i}."
        h = w.layer_norm(x, p + "self_attn_layer_norm", LAYER_NORM_EPS)
        q, k, v = (w.linear(h, f"{p}self_attn.{n}_proj", bias=True) for n in "qkv")
        attended = w.self_attention(q, k, v, cfg.num_heads, cfg.head_dim)
        x = w.add(x, w.linear(attended, p + "self_attn.out_proj", bias=True))
        h = w.layer_norm(x, p + "final_layer_norm", LAYER_NORM_EPS)
        x = w.add(x, w.linear(w.gelu(w.linear(h, p + "fc1", bias=True)), p + "fc2", bias=True))
    x = w.layer_norm(x, ENCODER + "ln_post", LAYER_NORM_EPS)
    return w.linear(w.gelu(w.linear(x, ENCODER + "proj1", bias=True)), ENCODER + "proj2", bias=True)


def decoder(w: recipe.Writer, embeds: V, cfg: AsrConfig, attend: Callable[[V, V, V, int], V],
            select: Callable[[V], V]) -> V:
    """The head's outputs at the positions `select` picks from the last layer's output (normed)."""
    s = cfg.decoder
    x = recipe.stack(w, embeds, DECODER, s, attend)
    x = w.rms_norm(select(x), w.vector(DECODER + "norm.weight"), s.rms_norm_eps)
    return w.linear(x, DECODER + "embed_tokens" if cfg.tie_word_embeddings else "thinker.lm_head")


def asr_weights(ckpt: AsrCheckpoint) -> recipe.WeightSource:
    """The checkpoint's tensors by name as float32 copies, every name and shape checked first."""
    from hearth.model.asr_weights import AsrWeights

    weights = AsrWeights(ckpt)

    def read(name: str) -> np.ndarray:
        values = weights.get(name).float().numpy().copy()
        weights.release(name)
        return values

    return read


# (the checkpoint's weights, the manifest) -> each network: (name, its graph, its writer)
Networks = Callable[[recipe.WeightSource, dict[str, Any]], Iterator[tuple[str, Any, Any]]]


def build_asr(ckpt: AsrCheckpoint, weights: str, directory: Path, key_source: dict[str, object], *,
              runtime: str, log: logging.Logger, networks: Networks, save: Callable[[Any, Path, str], None]
              ) -> ConvertedModel:
    """One conversion of a hearing model for either runtime: its networks built from the checkpoint
    and `save`d into the cache entry `directory`, each one's sizes (fp32, stored) in the manifest."""
    t0 = time.perf_counter()
    source = asr_weights(ckpt)  # (checks every tensor before anything is built)
    log.info("converting %s to %s (%s weights) into %s; once per checkpoint", ckpt.kind, runtime, weights, directory)
    manifest: dict[str, Any] = {"key": key_source, "weights": weights, "kind": ckpt.kind, "parts": {}}
    return recipe.write_networks(source, manifest, directory, networks, save, f"converting {ckpt.kind}", log, t0)


def int8_if(fmt: str, values: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """A product's weight [out, in] as stored in `fmt`: per-row int8, or float32."""
    return recipe.int8_rows(values) if fmt == "int8" else (values.astype(np.float32), None)
