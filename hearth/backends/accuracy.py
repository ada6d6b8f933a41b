"""How close a weight format keeps the language model to fp32: teacher-forced logits.

Both variants are fed the same prompt and the same codes (the fp32 model's own greedy output), so
every frame's logits are comparable: codebook 0 from the talker, codebooks 1..15 from the predictor
loop. Reported per codebook: logits SNR in dB and the share of frames whose top-1 code agrees.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import openvino as ov
import torch

from ..checkpoint import Checkpoint
from ..generate import PromptEmbeds
from ..model.layers import Rotary
from ..safetensors_mmap import SafetensorsFile
from .ov_graphs import build_predictor_loop, build_talker

__all__ = ["CodebookAgreement", "snr_db", "teacher_forced_logits", "compare_formats"]


def snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    ref = np.asarray(reference, np.float64)
    err = ref - np.asarray(test, np.float64)
    noise = float((err**2).sum())
    return float("inf") if noise == 0 else 10 * float(np.log10((ref**2).sum() / noise))


@dataclass(frozen=True)
class CodebookAgreement:
    codebook: int
    snr_db: float
    top1: float  # share of frames with the same argmax


def teacher_forced_logits(
    ckpt: Checkpoint, weights: str, embeds: PromptEmbeds, codes: torch.Tensor, embed_codec, threads: int | None = None
) -> np.ndarray:
    """Logits [frames, G, vocab] of a `weights`-format model fed `codes` (cb0 logits padded to vocab)."""
    f = SafetensorsFile(ckpt.path / "model.safetensors")

    def source(name: str) -> np.ndarray:
        return f.get(name).to(torch.float32).numpy().copy()

    cfg = ckpt.config.talker
    core = ov.Core()
    props: dict[str, object] = {"INFERENCE_PRECISION_HINT": "f32"}
    if threads:
        props["INFERENCE_NUM_THREADS"] = threads
    if weights == "int8":
        props["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = 128
    if weights == "fp32":
        props["KV_CACHE_PRECISION"] = "f32"
    talker = core.compile_model(build_talker(cfg, source, weights)[0], "CPU", props).create_infer_request()
    predictor = core.compile_model(
        build_predictor_loop(cfg, source, weights, teacher_forced=True)[0], "CPU", props
    ).create_infer_request()
    rotary = Rotary(cfg.stack.head_dim, cfg.stack.rope_theta)
    vocab = max(cfg.stack.vocab_size, cfg.predictor.vocab_size)
    frames, groups = codes.shape
    out = np.full((frames, groups, vocab), np.nan, np.float32)
    position = 0

    def run_talker(x: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        nonlocal position
        n = x.shape[1]
        cos, sin = rotary.get(position, n, torch.float32)
        mask = np.zeros((1, 1, n, position + n), np.float32)
        mask[0, 0, :, position:] = np.triu(np.full((n, n), -np.inf, np.float32), 1)
        talker.infer({"embeds": x.numpy(), "cos": cos.numpy(), "sin": sin.numpy(), "mask": mask,
                      "beam_idx": np.zeros(1, np.int32)})
        position += n
        return talker.get_tensor("hidden").data.copy(), talker.get_tensor("logits").data.copy()

    talker.reset_state()
    hidden, logits = run_talker(embeds.prefill)
    for t in range(frames):
        out[t, 0, : logits.shape[-1]] = logits[0]
        first = embed_codec([int(codes[t, 0])]).numpy()
        predictor.infer({"hidden": hidden, "first": first, "forced": codes[t, 1:].numpy().astype(np.int64)})
        out[t, 1:, : cfg.predictor.vocab_size] = predictor.get_tensor("logits").data
        summed = torch.from_numpy(predictor.get_tensor("summed").data.copy())
        extra = embeds.trailing[:, t : t + 1] if t < embeds.trailing.shape[1] else embeds.tts_pad
        hidden, logits = run_talker(summed + extra)
    return out


def compare_formats(reference: np.ndarray, test: np.ndarray, vocab_sizes: list[int]) -> list[CodebookAgreement]:
    """Per codebook: SNR of the logits and top-1 agreement (arrays from `teacher_forced_logits`)."""
    rows = []
    for g, vocab in enumerate(vocab_sizes):
        ref, got = reference[:, g, :vocab], test[:, g, :vocab]
        top1 = float((ref.argmax(-1) == got.argmax(-1)).mean())
        rows.append(CodebookAgreement(g, snr_db(ref, got), top1))
    return rows
