"""`hearth bench --listen`: hearing measured as a user meets it, on random-weight checkpoints of the
true Qwen3-ASR-0.6B and Qwen3-ForcedAligner-0.6B shapes (written once into the cache), beside the
0.6B speech model resident in the same process.

What is measured (medians of `runs` runs after a warm-up):
  * transcription of 5 s and of 20 s of audio: wall time from the samples in hand to the parsed
    transcript (features, encoder, prefill, a fixed number of decoder steps, detokenizing), its
    real-time factor, and each stage. For 5 s that wall time is the time from the end of speech to
    the transcript: the encoder's attention windows (8 s) span the whole recording, so nothing but
    the first convolution chunks could start before its end.
  * the aligner: milliseconds per second of speech, aligning the 20 s recording with a transcript
    of 2.5 words a second.
  * peak memory of the process with the speech model and both listening models resident.
  * the decoder step against its floor: the bytes of its weights over this machine's memory read
    bandwidth (measured here), since a step streams every weight once.

Random weights never choose to stop, so each transcription decodes a fixed number of tokens:
`tokens_for(seconds)` = 5 (the "language X<asr_text>" head and the stop token) + 3.5 a second
(English at 150 words a minute is 2.5 words, about 3.3 tokens, a second; Mandarin at about 4
characters a second is 3 to 4 tokens): 23 tokens for 5 s, 75 for 20 s. Compute cost does not depend
on the weights' values, so these figures hold for the released models; how well they transcribe is
another matter, which random weights cannot show.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hearth.tools.stats import peak_rss_mb, rss_mb

__all__ = ["ListenBenchSettings", "format_listen", "listen_checkpoint", "main_listen", "memory_bandwidth_gbs",
           "run_listen", "tokens_for"]

SPEECH_SECONDS = (5.0, 20.0)
WORDS_PER_SECOND = 2.5  # the aligned transcript's pace
_TEXT = "the small machine in the corner listens and writes down what was said today with care for every name"


def tokens_for(seconds: float) -> int:
    """The tokens a transcription of `seconds` of speech decodes here (see the module's docstring)."""
    return 5 + round(3.5 * seconds)


@dataclass(frozen=True)
class ListenBenchSettings:
    asr: str | None = None  # checkpoint directories (None: the true-shape random ones)
    aligner: str | None = None
    backend: str | None = None  # None: this machine's default for hearing
    weights: str | None = None  # compiled backends: int8 (default) or fp32
    threads: int | None = None
    runs: int = 3
    speech: dict[str, Any] | None = None  # the speech model's load keywords; None: no speech model resident
    speech_model: str | None = None
    live_s: float | None = None  # a live session this long, fed at real time (bench_listen_live)


def listen_checkpoint(kind: str) -> Path:
    """The true-shape random checkpoint of `kind` ("asr", "aligner"), written once (in a subprocess,
    so that writing it never shows in this process's memory)."""
    from hearth.platform.process import cache_dir

    path = cache_dir() / "bench" / f"random-{kind}-0.6b-seed0"
    if not (path / "model.safetensors").is_file():
        from hearth.backends.choices import torch_available
        from hearth.errors import CONVERT_EXTRA, InputError

        if not torch_available():
            raise InputError(f"hearth bench writes its random {kind} checkpoint with torch, which is not installed: "
                             f"{CONVERT_EXTRA}, or pass checkpoints (--asr, --aligner)", "model")
        print(f"hearth bench: writing a random 0.6b {kind} checkpoint to {path} (once)", file=sys.stderr)
        tmp = path.with_name(path.name + ".part")
        subprocess.run([sys.executable, "-m", "hearth.tools.random_asr_checkpoint", str(tmp), "--model", kind,
                        "--size", "0.6b", "--seed", "0"], check=True)
        tmp.replace(path)
    return path


def memory_bandwidth_gbs(threads: int | None, mb: int = 512, repeats: int = 5) -> float:
    """GB/s read by a matrix-vector product over `mb` MB of float32 (far beyond the caches), with the
    BLAS on `threads` threads: what a decoder step, which reads each weight once, can reach at best."""
    from threadpoolctl import threadpool_limits

    rows = mb * 2**20 // (4 * 4096)
    a = np.random.default_rng(0).standard_normal((rows, 4096), dtype=np.float32)
    x = np.ones(4096, np.float32)
    best = float("inf")
    with threadpool_limits(threads, user_api="blas"):
        a @ x
        for _ in range(repeats):
            t0 = time.perf_counter()
            a @ x
            best = min(best, time.perf_counter() - t0)
    return a.nbytes / best / 1e9


def test_audio(seconds: float) -> np.ndarray:
    """A voice-like stand-in (the encoder's cost depends on the length, not on what is said)."""
    from hearth.tools.bench_runs import reference_signal

    return reference_signal(seconds, 16000)


def _prepare(s: ListenBenchSettings, asr: Path, aligner: Path) -> None:
    """Convert both models in a subprocess, so that this process's peak memory is the resident models'."""
    code = ("import sys, json, logging\nfrom hearth.listen import Aligner, Listener\n"
            "logging.basicConfig(level=logging.INFO, stream=sys.stderr, format='hearth: %(message)s')\n"
            "k = json.loads(sys.argv[3])\nListener.load(sys.argv[1], **k)\nAligner.load(sys.argv[2], **k)")
    subprocess.run([sys.executable, "-c", code, str(asr), str(aligner), json.dumps(_keywords(s))], check=True)


def _keywords(s: ListenBenchSettings) -> dict[str, Any]:
    return {"backend": s.backend, "weights": s.weights, "threads": s.threads}


def _transcribe(listener: Any, samples: np.ndarray, tokens: int) -> dict[str, float]:  # noqa: ANN401
    """One transcription decoding exactly `tokens` tokens, timed by stage (seconds)."""
    from hearth.listen.decoding import greedy_tokens
    from hearth.listen.prompt import asr_prompt
    from hearth.listen.transcript import parse_transcript

    t0 = time.perf_counter()
    features = listener.features(samples)
    t1 = time.perf_counter()
    audio = listener.model.encode_audio(features)
    t2 = time.perf_counter()
    prompt = asr_prompt(listener.tokenizer, listener.special, audio.shape[0], "", None)
    chosen = greedy_tokens(listener.model, prompt, audio, frozenset(), tokens)  # (no stop: random weights)
    ids = [next(chosen)]
    t3 = time.perf_counter()
    ids += list(chosen)
    t4 = time.perf_counter()
    parse_transcript(listener.tokenizer.decode(ids, skip_special=True), None)
    t5 = time.perf_counter()
    return {"wall_s": t5 - t0, "features_ms": 1000 * (t1 - t0), "encoder_ms": 1000 * (t2 - t1),
            "prefill_ms": 1000 * (t3 - t2), "step_ms": 1000 * (t4 - t3) / max(len(ids) - 1, 1),
            "detokenize_ms": 1000 * (t5 - t4)}


def _align(aligner: Any, samples: np.ndarray, words: int) -> float:  # noqa: ANN401
    vocabulary = _TEXT.split()
    text = " ".join(vocabulary[i % len(vocabulary)] for i in range(words))
    t0 = time.perf_counter()
    aligner.align(samples, text, "English")
    return time.perf_counter() - t0


def _speech_model(s: ListenBenchSettings) -> tuple[Any, float]:  # noqa: ANN401
    """The 0.6B speech model, loaded and used once, and the memory it added (MB)."""
    import hearth
    from hearth.tools.bench import bench_checkpoint

    before = rss_mb()[0]
    engine = hearth.load(s.speech_model or bench_checkpoint(), progress=False, **(s.speech or {}))
    engine.synthesize("Hearth listens as it speaks.", "ryan", seed=1, max_new_tokens=6, budget=None)
    return engine, rss_mb()[0] - before


def _load_average() -> float | None:
    """The machine's 1-minute load average: above the core count, other work shared the CPU meanwhile."""
    import os

    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _cpu_name() -> str:
    """The CPU's model name and core count, to name beside every figure."""
    import os

    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} vCPUs"
    except OSError:
        pass
    import platform

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} vCPUs"


def run_listen(s: ListenBenchSettings) -> dict[str, Any]:
    from hearth.listen import Aligner, Listener
    from hearth.platform.topology import simd

    asr_path = Path(s.asr) if s.asr else listen_checkpoint("asr")
    aligner_path = Path(s.aligner) if s.aligner else listen_checkpoint("aligner")
    if (s.backend or "") != "torch":
        print("hearth bench: preparing the listening models (converted once, then read from the cache) ...",
              file=sys.stderr)
        _prepare(s, asr_path, aligner_path)
    out: dict[str, Any] = {"simd": simd(), "cpu": _cpu_name(), "asr": str(asr_path), "aligner": str(aligner_path),
                           "runs": s.runs, "load_average_before": _load_average()}
    engine = None
    if s.speech is not None:
        engine, out["speech_rss_mb"] = _speech_model(s)
        out["speech_backend"] = engine.backend.describe()
    before = rss_mb()[0]
    t = time.perf_counter()
    listener = Listener.load(asr_path, **_keywords(s))
    aligner = Aligner.load(aligner_path, **_keywords(s))
    out["listen_load_s"] = time.perf_counter() - t
    listener.model.warm_up()
    aligner.model.warm_up()
    out["listen_rss_mb"] = rss_mb()[0] - before
    out["backend"] = getattr(listener.model, "describe", lambda: {"backend": "torch"})()
    for seconds in SPEECH_SECONDS:
        samples, tokens = test_audio(seconds), tokens_for(seconds)
        runs = [_transcribe(listener, samples, tokens) for _ in range(s.runs + 1)][1:]
        key = f"{seconds:g}s"
        out[key] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        out[key].update(tokens=tokens, rtf=out[key]["wall_s"] / seconds)
    long_s = SPEECH_SECONDS[-1]
    samples, words = test_audio(long_s), round(WORDS_PER_SECOND * long_s)
    times = [_align(aligner, samples, words) for _ in range(s.runs + 1)][1:]
    out["aligner_ms_per_s"] = 1000 * statistics.median(times) / long_s
    out["aligner_words"] = words
    out["peak_rss_mb"] = peak_rss_mb()
    out["load_average_after"] = _load_average()
    weights: dict[str, dict[str, float]] = getattr(listener.model, "weights_mb", dict)()
    if s.live_s:
        from hearth.tools.bench_listen_live import run_live

        print(f"hearth bench: a live session of {s.live_s:g} s of audio, fed at real time ...", file=sys.stderr)
        out["live"] = run_live(listener, s.live_s, tokens_for)
    if "decoder" in weights:
        gbs = memory_bandwidth_gbs(s.threads)
        floor_ms = weights["decoder"]["stored_mb"] / 1e3 / gbs * 1e3
        out.update(bandwidth_gbs=gbs, step_floor_ms=floor_ms, step_of_floor=floor_ms / out["5s"]["step_ms"],
                   weights_mb=weights)
    if engine is not None:
        engine.close()
    return out


def format_listen(r: dict[str, Any]) -> str:
    b = r["backend"]
    lines = [f"hearing on {b.get('backend')} ({b.get('weights', b.get('dtype', ''))}), {r['cpu']}, simd "
             f"{r['simd']}, medians of {r['runs']} runs, load average {r['load_average_before']} -> "
             f"{r['load_average_after']}"]
    for key in (f"{s:g}s" for s in SPEECH_SECONDS):
        f = r[key]
        lines.append(f"{key:>4} of audio, {f['tokens']} tokens: {f['wall_s']:.3f} s to the transcript, RTF "
                     f"{f['rtf']:.3f} (features {f['features_ms']:.0f} ms, encoder {f['encoder_ms']:.0f} ms, prefill "
                     f"{f['prefill_ms']:.0f} ms, step {f['step_ms']:.1f} ms, detokenize {f['detokenize_ms']:.1f} ms)")
    lines.append(f"aligner: {r['aligner_ms_per_s']:.1f} ms per second of speech ({r['aligner_words']} words in "
                 f"{SPEECH_SECONDS[-1]:g} s)")
    if "step_floor_ms" in r:
        lines.append(f"decoder step floor: {r['weights_mb']['decoder']['stored_mb']:.0f} MB of weights at "
                     f"{r['bandwidth_gbs']:.1f} GB/s = {r['step_floor_ms']:.1f} ms; the step runs at "
                     f"{100 * r['step_of_floor']:.0f} % of that speed")
    memory = f"peak RSS {r['peak_rss_mb']:.0f} MB (listening models {r['listen_rss_mb']:.0f} MB"
    if "speech_rss_mb" in r:
        memory += f", speech model {r['speech_rss_mb']:.0f} MB, resident together"
    lines.append(memory + f"); listening models ready in {r['listen_load_s']:.1f} s")
    for part, w in r.get("weights_mb", {}).items():
        lines.append(f"asr weights {part}: {w['fp32_mb']:.0f} MB fp32 -> {w['stored_mb']:.0f} MB stored")
    if "live" in r:
        from hearth.tools.bench_listen_live import format_live

        lines.append(format_live(r["live"]))
    return "\n".join(lines)


def main_listen(s: ListenBenchSettings, as_json: bool) -> int:
    import os

    result = run_listen(s)
    report = {"simd": result["simd"], "cpu_mask": os.environ.get("HEARTH_CPU_MASK"), "listen": result}
    if as_json:  # stdout carries only the report
        json.dump(report, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(format_listen(result))
    return 0
