"""How close a weight format keeps the language model to fp32: teacher-forced logits.

Both variants are fed the same prompt and the same codes (the fp32 model's own greedy output), so
every frame's logits are comparable: codebook 0 from the talker, codebooks 1..15 from the predictor
loop. Reported per codebook: logits SNR in dB and the share of frames whose top-1 code agrees.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hearth.checkpoint.loading import Checkpoint
from hearth.checkpoint.safetensors_mmap import SafetensorsFile
from hearth.checkpoint.sampling import SamplingOptions
from hearth.convert import CONVERT_ON_FIRST_USE
from hearth.streaming.sinks import snr_db
from hearth.text.prompt import PromptEmbeds

__all__ = ["CodebookAgreement", "snr_db", "teacher_forced_logits", "compare_formats"]


@dataclass(frozen=True)
class CodebookAgreement:
    codebook: int
    snr_db: float
    top1: float  # share of frames with the same argmax


def teacher_forced_logits(
    ckpt: Checkpoint, weights: str, embeds: PromptEmbeds, codes: np.ndarray, embed_codec, threads: int | None = None,
    backend: str = "openvino",
) -> np.ndarray:
    """Logits [frames, G, vocab] of a `weights`-format model fed `codes` (cb0 logits padded to vocab).

    The talker is the engine's own on `backend` (converted and cached as for `hearth.load`); the
    predictor is its teacher-forced twin, built from the same weights (int4 on OpenVINO: the same
    NNCF compression)."""
    f = SafetensorsFile(ckpt.path / "model.safetensors")

    def source(name: str) -> np.ndarray:
        return f.floats(name)

    cfg = ckpt.config.talker
    run_predictor, row = _teacher_forced(ckpt, weights, source, threads, backend, embeds.prefill.shape[1])
    vocab = max(cfg.stack.vocab_size, cfg.predictor.vocab_size)
    frames, groups = codes.shape
    out = np.full((frames, groups, vocab), np.nan, np.float32)
    logits = row.prefill(embeds.prefill)
    for t in range(frames):
        out[t, 0, : logits.shape[-1]] = logits[0]
        first = embed_codec([int(codes[t, 0])])
        step_logits, summed = run_predictor({"hidden": row.hidden, "first": first,
                                             "forced": np.asarray(codes[t : t + 1, 1:], np.int64)})
        out[t, 1:, : cfg.predictor.vocab_size] = step_logits
        logits = row.step(summed.copy() + embeds.row(t))
    row.close()
    return out


def _teacher_forced(ckpt: Checkpoint, weights: str, source: Callable[[str], np.ndarray], threads: int | None,
                    backend: str, prompt_length: int) -> tuple[Callable[[dict[str, np.ndarray]], Any], Any]:
    """(the teacher-forced predictor as a call, a talker row) on `backend`."""
    cfg = ckpt.config.talker
    if backend == "onnxruntime":
        import onnxruntime as ort

        from hearth.backends.ort import ORTLanguageModel, SlotBatch, part_formats, session_options
        from hearth.convert import ort_graphs

        lm = ORTLanguageModel(ckpt, weights, threads=threads, converter=CONVERT_ON_FIRST_USE)
        model = ort_graphs.build_predictor_loop(cfg, source, part_formats(weights)[1], teacher_forced=True)[0]
        session = ort.InferenceSession(model.SerializeToString(), session_options(threads),
                                       providers=["CPUExecutionProvider"])
        row = SlotBatch(lm, 1).open(SamplingOptions().greedy(), None, prompt_length)
        return (lambda inputs: session.run(["logits", "summed"], inputs)), row
    import openvino as ov

    from hearth.backends.openvino import INT4_RATIO, OpenVINOLanguageModel, runtime_properties
    from hearth.backends.ov_paged import PagedBatch
    from hearth.convert.ov_int4 import compress_int4, int4_candidates
    from hearth.convert.ov_predictor import build_predictor_loop

    compressed = compress_int4(int4_candidates(cfg), source, INT4_RATIO) if weights == "int4" else None
    props = runtime_properties("CPU", weights, threads, precise=weights == "fp32")  # as the engine runs them
    ov_lm = OpenVINOLanguageModel(ckpt, weights, threads=threads, converter=CONVERT_ON_FIRST_USE)
    paged_row = PagedBatch(ov_lm, 1).open(SamplingOptions().greedy(), None, prompt_length)
    request = ov.Core().compile_model(
        build_predictor_loop(cfg, source, weights, teacher_forced=True, compressed=compressed)[0], "CPU", props
    ).create_infer_request()

    def run(inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        request.infer(inputs)
        return request.get_tensor("logits").data, request.get_tensor("summed").data

    return run, paged_row


def compare_formats(reference: np.ndarray, test: np.ndarray, vocab_sizes: list[int]) -> list[CodebookAgreement]:
    """Per codebook: SNR of the logits and top-1 agreement (arrays from `teacher_forced_logits`)."""
    rows = []
    for g, vocab in enumerate(vocab_sizes):
        ref, got = reference[:, g, :vocab], test[:, g, :vocab]
        top1 = float((ref.argmax(-1) == got.argmax(-1)).mean())
        rows.append(CodebookAgreement(g, snr_db(ref, got), top1))
    return rows


def main_accuracy(model: str, weights: str, frames: int, vocoder: str, as_json: bool, backend: str = "openvino",
                  call_frames: int | None = None) -> int:
    """`hearth accuracy`: teacher-forced logits of `weights` on `backend` against fp32 (OpenVINO's,
    which reproduces the official greedy codes), and the vocoder's SNR against the torch fp32
    decoder, on `frames` greedy frames of the fp32 model, streamed in 5-frame chunks (in calls of
    at most `call_frames` frames: the small preset's one)."""
    import json
    import sys

    from hearth import load
    from hearth.backends.formats import ORT_VOCODERS
    from hearth.backends.openvino import OpenVINOVocoder
    from hearth.backends.ort_vocoder import ORTVocoder
    from hearth.backends.vocoder_step import SteppedVocoder
    from hearth.model.weights import load_codec
    from hearth.text.prompt import embed_prompt

    text = "Hearth speaks for the small machine in the corner, and it starts within a third of a second."
    engine = load(model, backend="openvino", weights="fp32", vocoder="torch", progress=False)
    options = engine.sampling(greedy=True, max_new_tokens=frames + 1, min_new_tokens=frames + 1)
    codes = engine.generate_codes(text, "ryan", "english", options=options, budget=None).codes
    embeds = embed_prompt(engine.lm, engine.config, engine.prompt(text), "ryan", "english", "whole")
    ref = teacher_forced_logits(engine.checkpoint, "fp32", embeds, codes, engine.lm.embed_codec)
    got = teacher_forced_logits(engine.checkpoint, weights, embeds, codes, engine.lm.embed_codec, backend=backend)
    t = engine.config.talker
    vocabs = [t.stack.vocab_size] + [t.predictor.vocab_size] * (t.num_code_groups - 1)
    rows = compare_formats(ref, got, vocabs)
    import torch

    decoder = load_codec(engine.checkpoint, torch.float32)
    with torch.inference_mode():
        expected = decoder(torch.from_numpy(codes)).numpy()
    compiled: SteppedVocoder
    if vocoder in ORT_VOCODERS:
        compiled = ORTVocoder(engine.checkpoint, weights=ORT_VOCODERS[vocoder], converter=CONVERT_ON_FIRST_USE)
    else:
        compiled = OpenVINOVocoder(engine.checkpoint, vocoder, converter=CONVERT_ON_FIRST_USE)
    if call_frames is not None:
        compiled.call_frames = call_frames
    state = compiled.start()
    parts = [compiled.decode(codes[i : i + 5], state) for i in range(0, len(codes), 5)]
    vocoder_snr = snr_db(expected, np.concatenate(parts))
    result = {
        "model": model, "backend": backend, "weights": weights, "frames": int(codes.shape[0]),
        "codebooks": [{"codebook": r.codebook, "snr_db": r.snr_db, "top1": r.top1} for r in rows],
        "vocoder": {"precision": vocoder, "streamed_in_chunks_of": 5, "call_frames": min(compiled.call_frames, 5),
                    "snr_db": vocoder_snr},
    }
    if as_json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
        return 0
    print(f"{backend} {weights} vs fp32, teacher-forced on {codes.shape[0]} greedy frames of the fp32 model:")
    print("codebook  logits SNR (dB)  top-1 agreement")
    for r in rows:
        print(f"{r.codebook:8}  {r.snr_db:15.1f}  {r.top1:15.3f}")
    calls = f", calls of {compiled.call_frames} frame(s)" if compiled.call_frames < 5 else ""
    print(f"vocoder {vocoder} (streamed, 5-frame chunks{calls}) vs torch fp32 decoder: SNR {vocoder_snr:.1f} dB")
    return 0
