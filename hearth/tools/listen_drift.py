"""`hearth accuracy --listen`: how far the int8 hearing models drift from fp32 on the same runtime
(and, with `--against-torch`, how close that runtime's fp32 stays to the torch reference), on the
true-shape random checkpoints `hearth bench --listen` uses.

Per recording (the bench's voice-like signal and noise, 5 s and 20 s): the audio embeddings'
relative error; the decoder teacher-forced on the reference's greedy tokens (random weights never
stop: a fixed count, `bench_listen.tokens_for`), each step's top-1 agreement, largest logit
difference and signal-to-noise ratio; the tokens each side chooses on its own (how many agree, how
long the common prefix is); and the aligner's timestamps (the share of equal classes, the mean
difference in ms). Random weights show drift only: whether a lossy preset still transcribes well
is a question for the released weights and real speech, which this cannot answer.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["compare_models", "main_listen_drift"]


def _recordings() -> dict[str, np.ndarray]:
    from hearth.tools.bench_listen import test_audio

    rng = np.random.default_rng(11)
    out = {}
    for seconds in (5.0, 20.0):
        out[f"voice {seconds:g}s"] = test_audio(seconds)
        out[f"noise {seconds:g}s"] = (0.1 * rng.standard_normal(int(16000 * seconds))).astype(np.float32)
    return out


def _forced(model: Any, prompt: Any, audio: np.ndarray, tokens: list[int]) -> np.ndarray:  # noqa: ANN401
    session = model.session(len(prompt.ids) + len(tokens) + 1)
    try:
        return np.stack([session.prefill(prompt.ids, audio, prompt.audio_at), *(session.step(t) for t in tokens)])
    finally:
        session.close()


def _greedy(listener: Any, prompt: Any, audio: np.ndarray, count: int) -> list[int]:  # noqa: ANN401
    from hearth.listen.decoding import greedy_tokens

    return list(greedy_tokens(listener.model, prompt, audio, frozenset(), count))


def _decoder_drift(ref: Any, test: Any, samples: np.ndarray, count: int) -> dict[str, float]:  # noqa: ANN401
    from hearth.listen.prompt import asr_prompt

    features = ref.features(samples)
    a_ref, a_test = ref.model.encode_audio(features), test.model.encode_audio(features)
    prompt = asr_prompt(ref.tokenizer, ref.special, a_ref.shape[0], "", None)
    chosen = _greedy(ref, prompt, a_ref, count)
    want, got = _forced(ref.model, prompt, a_ref, chosen[:-1]), _forced(test.model, prompt, a_test, chosen[:-1])
    own = _greedy(test, prompt, a_test, count)
    prefix = next((i for i, (x, y) in enumerate(zip(chosen, own, strict=True)) if x != y), count)
    noise = float(np.sum((got - want) ** 2))
    return {
        "embedding_rel_error": float(np.linalg.norm(a_test - a_ref) / np.linalg.norm(a_ref)),
        "top1_agreement": float(np.mean(got.argmax(1) == want.argmax(1))),
        "logit_max_abs_diff": float(np.abs(got - want).max()),
        "logit_scale": float(np.abs(want).max()),
        "logit_snr_db": float(10 * np.log10(np.sum(want**2) / noise)) if noise else float("inf"),
        "free_running_equal": float(np.mean(np.array(chosen) == np.array(own))),
        "free_running_common_prefix": prefix,
    }


def _aligner_drift(ref: Any, test: Any, samples: np.ndarray, words: int) -> dict[str, float]:  # noqa: ANN401
    from hearth.tools.bench_listen import _TEXT

    vocabulary = _TEXT.split()
    text = " ".join(vocabulary[i % len(vocabulary)] for i in range(words))
    a, b = ref.align(samples, text, "English"), test.align(samples, text, "English")
    starts = np.array([[u.start, u.end] for u in a]), np.array([[u.start, u.end] for u in b])
    return {"equal_times": float(np.mean(starts[0] == starts[1])),
            "mean_abs_diff_ms": float(1000 * np.mean(np.abs(starts[0] - starts[1])))}


def compare_models(ref: tuple[Any, Any], test: tuple[Any, Any]) -> dict[str, Any]:  # noqa: ANN401
    """(listener, aligner) pairs: `test` against `ref` on every recording."""
    from hearth.tools.bench_listen import WORDS_PER_SECOND, tokens_for

    out: dict[str, Any] = {"recordings": {}}
    for name, samples in _recordings().items():
        seconds = samples.shape[0] / 16000
        row = _decoder_drift(ref[0], test[0], samples, tokens_for(seconds))
        row.update({f"aligner_{k}": v for k, v in
                    _aligner_drift(ref[1], test[1], samples, round(WORDS_PER_SECOND * seconds)).items()})
        out["recordings"][name] = row
    rows = list(out["recordings"].values())
    out["median"] = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    out["worst"] = {"top1_agreement": min(r["top1_agreement"] for r in rows),
                    "logit_max_abs_diff": max(r["logit_max_abs_diff"] for r in rows),
                    "free_running_equal": min(r["free_running_equal"] for r in rows)}
    return out


def _load(asr: Path, aligner: Path, **keywords: Any) -> tuple[Any, Any]:  # noqa: ANN401
    from hearth.listen import Aligner, Listener

    return Listener.load(asr, **keywords), Aligner.load(aligner, **keywords)


def main_listen_drift(asr: str | None, aligner: str | None, backend: str | None, against_torch: bool,
                      as_json: bool) -> int:
    from hearth.backends.settings import listening_backend
    from hearth.platform.topology import simd
    from hearth.tools.bench_listen import listen_checkpoint

    asr_path = Path(asr) if asr else listen_checkpoint("asr")
    aligner_path = Path(aligner) if aligner else listen_checkpoint("aligner")
    backend = backend or listening_backend()
    fp32 = _load(asr_path, aligner_path, backend=backend, weights="fp32")
    result: dict[str, Any] = {"simd": simd(), "backend": backend, "asr": str(asr_path), "aligner": str(aligner_path),
                              "int8_against_fp32": compare_models(fp32, _load(asr_path, aligner_path, backend=backend,
                                                                              weights="int8"))}
    if against_torch:
        result["fp32_against_torch"] = compare_models(_load(asr_path, aligner_path, backend="torch"), fp32)
    if as_json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
        return 0
    print(f"hearing on {backend}, simd {result['simd']}; random weights: drift only, not quality")
    for label in ("int8_against_fp32", "fp32_against_torch"):
        if label not in result:
            continue
        print(label.replace("_", " ") + ":")
        for name, row in result[label]["recordings"].items():
            print(f"  {name:>10}: embeddings rel. error {row['embedding_rel_error']:.2e}; teacher-forced top-1 "
                  f"{row['top1_agreement']:.3f}, logits max |diff| {row['logit_max_abs_diff']:.3g} (of "
                  f"{row['logit_scale']:.3g}), SNR {row['logit_snr_db']:.1f} dB; free-running tokens equal "
                  f"{row['free_running_equal']:.3f} (common prefix {row['free_running_common_prefix']}); aligner "
                  f"times equal {row['aligner_equal_times']:.3f}, mean |diff| {row['aligner_mean_abs_diff_ms']:.0f} ms")
    return 0
