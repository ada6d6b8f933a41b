"""`hearth bench`: the one benchmark harness. Speed figures belong here, never in tests.

It runs the streaming engine on a checkpoint (by default a random-weight checkpoint with the true
0.6B shapes, written on first use into the cache directory), a warm-up and then several runs of
one sentence with a fixed frame count (end-of-speech masked, greedy decoding), and reports medians.
With `--compare-official` it runs the official qwen-tts package on the same checkpoint, in a
subprocess with the same thread count, and adds its figures and the ratios.
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hearth.platform.topology import CPU_LEVELS, shows_level
from hearth.tools.bench_runs import (
    BenchSettings,
    batch_agreement,
    run_agent,
    run_clone,
    run_live,
    run_streams,
)
from hearth.tools.bench_text import normalize_cost
from hearth.tools.stats import p95, peak_rss_mb

if TYPE_CHECKING:
    from hearth.text.prompt import Speaker

__all__ = ["CPU_MASKS", "BenchSettings", "bench_checkpoint", "exec_with_cpu_mask", "format_table", "run_hearth",
           "run_official"]

CPU_MASKS = CPU_LEVELS

VOICE, LANGUAGE = "ryan", "english"
# An id the talker can never sample (it lies in the suppressed control range): passed to the
# official generate as its end-of-speech id so that both engines run exactly --frames frames.
_NEVER_SAMPLED = 3071


def bench_checkpoint(size: str = "0.6b", kind: str = "custom_voice") -> Path:
    """The true-shape random checkpoint (of `kind`: custom_voice, or base for cloning), written once
    into the cache directory.

    Written by a subprocess, so that its memory never shows in this process's peak RSS.
    """
    from hearth.platform.process import cache_dir

    name = f"random-{size}-seed0" if kind == "custom_voice" else f"random-{size}-{kind}-seed0"
    path = cache_dir() / "bench" / name
    if not (path / "speech_tokenizer" / "model.safetensors").is_file():
        from hearth.backends.choices import torch_available
        from hearth.errors import CONVERT_EXTRA, InputError

        if not torch_available():
            raise InputError(f"hearth bench writes its random {size} checkpoint with torch, which is not installed: "
                             f"{CONVERT_EXTRA}, or bench an exported model with --model DIR", "model")
        print(f"hearth bench: writing a random {size} {kind} checkpoint to {path} (once)", file=sys.stderr)
        tmp = path.with_name(path.name + ".part")
        cmd = [sys.executable, "-m", "hearth.tools.random_checkpoint", str(tmp), "--size", size, "--seed", "0",
               "--kind", kind]
        subprocess.run(cmd, check=True)
        tmp.replace(path)
    return path


# `--cpu` runs the command again in this process (exec keeps the process's start time): the
# uptime at that exec, so that start to ready counts from it, as for a fresh command.
_EXEC_UPTIME = os.environ.pop("HEARTH_EXEC_UPTIME", None)


def _uptime_s() -> float:
    with open("/proc/uptime", encoding="utf-8") as f:
        return float(f.read().split()[0])


def _process_age_s() -> float:
    """Seconds since this process started (Linux; after `--cpu`'s exec, since the exec), for
    start-to-ready figures."""
    try:
        if _EXEC_UPTIME is not None:
            return _uptime_s() - float(_EXEC_UPTIME)
        ticks = os.sysconf("SC_CLK_TCK")
        with open("/proc/self/stat", encoding="utf-8") as f:
            start = int(f.read().rsplit(")", 1)[1].split()[19]) / ticks
        return _uptime_s() - start
    except (OSError, ValueError, IndexError):
        return float("nan")


def _torch_threads(threads: int | None) -> int | None:
    """torch's thread count, set to `threads` when given (for the torch reference and the official
    package); None where torch is not in use: importing it only to ask would put its import into
    the start-to-ready figure of engines that never touch it."""
    if threads:
        from hearth.backends.choices import torch_available

        if not torch_available():
            return None
        import torch

        torch.set_num_threads(threads)
    loaded = sys.modules.get("torch")
    return None if loaded is None else int(loaded.get_num_threads())


def run_hearth(s: BenchSettings, model: Path, setup_s: float = 0.0) -> dict[str, Any]:
    """`setup_s`: time this process spent before loading that a user would not (writing the checkpoint)."""
    from hearth import load

    torch_threads = _torch_threads(s.threads)
    rows = max(s.max_batch or max(s.streams), 2) if s.streams else 1  # the most rows stepped at once
    t = time.perf_counter()
    engine = load(model, progress=False, **{"batch_rows": rows, **s.backend})  # (as a server batching that many)
    load_engine_s = time.perf_counter() - t
    load_s = _process_age_s() - setup_s
    if s.streams:
        out: dict[str, Any] = {"engine": "hearth", "load_s": load_s, "load_engine_s": load_engine_s,
               "backend": engine.backend.describe(), "weights_mb": engine.backend.weights_mb(),
               "streams": [run_streams(engine, s, n) for n in s.streams]}
        print(f"hearth bench: batched rows against solo, teacher-forced ({rows} rows) ...", file=sys.stderr)
        out["batch_agreement"] = batch_agreement(engine, rows, s.frames)
        engine.close()
        return out
    options = engine.sampling(greedy=True, max_new_tokens=s.frames + 1, min_new_tokens=s.frames + 1)
    voice: Speaker = VOICE
    cloning = None
    if engine.config.model_type == "base" and not s.clone_s:
        print("hearth bench: a Base checkpoint speaks cloned voices: cloning from a 10 s reference (--clone)",
              file=sys.stderr)
        s = replace(s, clone_s=10.0)
    if s.clone_s:
        voice, cloning = run_clone(engine, s, options)
    runs = []
    for i in range(s.runs + 1):  # the first run warms up
        cpu0, t0 = time.process_time(), time.perf_counter()
        ttfa, samples, decode = None, 0, []
        with engine.stream(s.text, voice, LANGUAGE, options=options, budget=None, chunk_frames=s.chunk_frames,
                           first_chunk_frames=s.first_chunk_frames) as stream:
            for chunk in stream:
                if ttfa is None and chunk.frames:
                    ttfa = time.perf_counter() - t0
                samples += len(chunk.samples)
                if chunk.frames:
                    decode.append(chunk.timing.decode_s)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        g = stream.generation
        audio_s = samples / engine.sample_rate
        if i == 0:
            continue
        runs.append({
            "ttfa_s": ttfa, "wall_s": wall, "cpu_s": cpu, "audio_s": audio_s, "frames": g.frames,
            "prefill_ms": 1000 * g.prefill_s, "talker_step_ms": 1000 * g.talker_s / max(g.frames, 1),
            "predictor_frame_ms": 1000 * g.predictor_s / max(g.frames, 1),
            "vocoder_chunk_ms": 1000 * statistics.mean(decode) if decode else 0.0,
        })
    out = _summarise(runs, load_s, load_engine_s, threads=torch_threads, engine="hearth")
    out["stages_ms"].update(normalize_cost())  # the text front end, every language: per 200 characters
    out["backend"] = engine.backend.describe()
    if s.first_chunk_frames:
        out["backend"]["first_chunk_frames"] = s.first_chunk_frames
    out["weights_mb"] = engine.backend.weights_mb()
    if cloning is not None:
        out["clone"] = cloning
    if s.live_wps:
        out["live"] = run_live(engine, s, options)
    if s.agent_rates:
        out["agent"] = run_agent(engine, s.agent_rates, s.agent_turns)
    engine.close()
    return out


def prepare_openvino(s: BenchSettings, model: Path) -> None:
    """Convert (and compile) once in a subprocess, so the measured start reads the on-disk cache. A
    first conversion takes minutes: its lines (and periodic progress) show as `hearth: ...`; the
    measured load says "loaded" itself."""
    code = ("import sys, json, logging, hearth\n"
            "logging.basicConfig(level=logging.INFO, stream=sys.stderr, format='hearth: %(message)s')\n"
            "logging.getLogger('hearth.engine').setLevel(logging.WARNING)\n"
            "hearth.load(sys.argv[1], progress=False, **json.loads(sys.argv[2]))")
    subprocess.run([sys.executable, "-c", code, str(model), json.dumps(s.backend)], check=True)


def _summarise(runs: list[dict[str, Any]], load_s: float, load_engine_s: float, threads: int | None,
               engine: str) -> dict[str, Any]:
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return {
        "engine": engine,
        "ttfa_s": med["ttfa_s"],
        "ttfa_p95_s": p95([r["ttfa_s"] for r in runs]),
        "rtf": statistics.median(r["wall_s"] / r["audio_s"] for r in runs),
        "cpu_s_per_audio_s": statistics.median(r["cpu_s"] / r["audio_s"] for r in runs),
        "peak_rss_mb": peak_rss_mb(),
        "audio_s": med["audio_s"],
        "frames": med["frames"],
        "load_s": load_s,
        "load_engine_s": load_engine_s,
        "runs": len(runs),
        "threads": threads,
        "stages_ms": {k: med[k] for k in ("prefill_ms", "talker_step_ms", "predictor_frame_ms", "vocoder_chunk_ms")
                      if k in med},
    }


def _official_worker(s: BenchSettings, model: Path) -> dict[str, Any]:
    """Runs inside the subprocess: the official path, text in hand to all audio out."""
    import torch

    from hearth.tools.reference import load_official, official_generate, official_input_ids

    if s.threads:
        torch.set_num_threads(s.threads)
    t = time.perf_counter()
    official = load_official(model)
    load_engine_s = time.perf_counter() - t
    load_s = _process_age_s()
    runs = []
    for i in range(s.runs + 1):
        cpu0, t0 = time.process_time(), time.perf_counter()
        ids = official_input_ids(official, s.text)
        codes = official_generate(official, ids, VOICE, LANGUAGE, greedy=True, max_new_tokens=s.frames + 1,
                                  eos_token_id=_NEVER_SAMPLED)
        t1 = time.perf_counter()
        with torch.inference_mode():
            wavs, sr = official.model.speech_tokenizer.decode([{"audio_codes": codes}])
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        if i == 0:
            continue
        frames = codes.shape[0]
        runs.append({
            "ttfa_s": wall, "wall_s": wall, "cpu_s": cpu, "audio_s": len(wavs[0]) / sr, "frames": frames,
            "lm_frame_ms": 1000 * (t1 - t0) / max(frames, 1), "decode_ms": 1000 * (t0 + wall - t1),
        })
    out = _summarise(runs, load_s, load_engine_s, threads=torch.get_num_threads(), engine="official")
    out["stages_ms"] = {k: statistics.median(r[k] for r in runs) for k in ("lm_frame_ms", "decode_ms")}
    return out


def run_official(s: BenchSettings, model: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "hearth.tools.bench", "--official-worker", json.dumps(vars(s)), str(model)]
    proc = subprocess.run(cmd, capture_output=True, encoding="utf-8", errors="replace", check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"the official benchmark failed:\n{proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


_ROWS = [
    ("first audio, median (s)", "ttfa_s", "{:.3f}"),
    ("first audio, p95 (s)", "ttfa_p95_s", "{:.3f}"),
    ("real-time factor", "rtf", "{:.2f}"),
    ("CPU-s per audio-s", "cpu_s_per_audio_s", "{:.2f}"),
    ("peak RSS (MB)", "peak_rss_mb", "{:.0f}"),
    ("audio per run (s)", "audio_s", "{:.2f}"),
    ("start to ready (s)", "load_s", "{:.1f}"),
]


def format_table(result: dict[str, Any]) -> str:
    ours, ref = result["hearth"], result.get("official")
    lines = [f"simd: {result.get('simd')}" + (f" (features hidden: --cpu {result['cpu_mask']})"
                                               if result.get("cpu_mask") else ""),
             f"{'':28}{'hearth':>12}" + (f"{'official':>12}{'ratio':>9}" if ref else "")]
    for label, key, fmt in _ROWS:
        line = f"{label:28}{fmt.format(ours[key]):>12}"
        if ref:
            line += f"{fmt.format(ref[key]):>12}{ours[key] / ref[key]:>9.3f}"
        lines.append(line)
    lines.append("hearth stages (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in ours["stages_ms"].items()))
    b = ours.get("backend", {})
    if b:
        lines.append("hearth backend: " + ", ".join(f"{k}={v}" for k, v in b.items() if v is not None))
    for part, w in ours.get("weights_mb", {}).items():
        lines.append(f"weights {part}: {w['fp32_mb']:.0f} MB fp32 -> {w['stored_mb']:.0f} MB stored")
    if ref:
        lines.append("official stages (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in ref["stages_ms"].items()))
    if "clone" in ours:
        c = ours["clone"]
        lines.append(f"cloned voice, in context, {c['reference_s']:g} s reference ({c['reference_frames']} frames): "
                     f"first audio from raw audio {c['ttfa_from_raw_audio_s']:.3f} s (encoders {c['clone_s']:.3f} s, "
                     f"vocoder priming {c['vocoder_prime_s']:.3f} s); stored profile, first use in a process "
                     f"{c['ttfa_stored_first_use_s']:.3f} s (profile read {c['profile_load_s'] * 1000:.1f} ms), in "
                     f"use {ours['ttfa_s']:.3f} s (the table's first audio)")
    for rate, row in ours.get("agent", {}).items() if isinstance(ours.get("agent"), dict) else ():
        if not isinstance(row, dict):
            continue
        for name in ("live", "live_smooth", "sentence_at_a_time", "sentence_at_a_time_smooth"):
            r = row.get(name)
            if r:
                first = r["first_token_to_audio_p50_s"]
                lines.append(f"agent at {rate} tok/s, {name}: first token to audio "
                             f"{'-' if first is None else f'{first:.2f}'} s, {r['gaps_per_answer']:.1f} gaps per "
                             f"answer, {r['gap_total_p50_s']:.2f} s of silence (p50)")
    if "live" in ours:
        live = ours["live"]
        lines.append(f"live text at {live['words_per_second']:g} words/s: first audio {live['first_audio_s']:.3f} s "
                     f"(p95 {live['first_audio_p95_s']:.3f}) after the first word; the whole text in the "
                     f"interleaved mode: {live['whole_text_interleaved_first_audio_s']:.3f} s")
    return "\n".join(lines)


def format_streams(result: dict[str, Any]) -> str:
    lines = [f"{'streams':>8}{'batch':>7}{'x realtime':>12}{'first audio p50':>17}{'p95':>8}{'RTF/stream':>12}"
             f"{'rows/step':>11}{'RSS MB':>9}"]
    for r in result["streams"]:
        ttfa = "-" if r["ttfa_s"] is None else f"{r['ttfa_s']:.3f}"
        p95 = "-" if r["ttfa_p95_s"] is None else f"{r['ttfa_p95_s']:.3f}"
        lines.append(f"{r['streams']:>8}{r['max_batch']:>7}{r['throughput_x_realtime']:>12.2f}{ttfa:>17}{p95:>8}"
                     f"{r['rtf']:>12.2f}{r['mean_rows_per_step']:>11.2f}{r['peak_rss_mb']:>9.0f}")
    agreement = result.get("batch_agreement")
    if agreement:
        lines.append(f"batched vs solo, teacher-forced, {agreement['rows']} rows x {agreement['frames_per_row']} "
                     f"frames: codebook 0 top-1 agreement {agreement['talker_top1_agreement']:.3f}, talker logits "
                     f"SNR {agreement['talker_logits_snr_db_median']:.1f} dB (median), predictor codes equal "
                     f"{agreement['predictor_codes_equal']:.3f}")
    b = result.get("backend", {})
    if b:
        lines.append("hearth backend: " + ", ".join(f"{k}={v}" for k, v in b.items() if v is not None))
    return "\n".join(lines)


def exec_with_cpu_mask(mask: str) -> None:
    """Run this command again in a process whose CPU shows only the features of level `mask` (one
    of `CPU_MASKS`): every runtime then takes the code path of such a machine, timed on this one. How:
    `cpu_mask.c`, compiled once into the cache and preloaded (CPUID faulting, Linux x86-64). Returns
    only when this process is already that one; raises ValueError where it cannot be done."""
    if mask not in CPU_MASKS:
        raise ValueError(f"--cpu must be one of {', '.join(CPU_MASKS)}, got {mask!r}")
    if os.environ.get("HEARTH_CPU_MASK") == mask:
        return
    env = {**masked_env(mask), "HEARTH_EXEC_UPTIME": str(_uptime_s())}
    logging.shutdown()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "hearth.cli", *sys.argv[1:]], env)


def masked_env(mask: str) -> dict[str, str]:
    """This process's environment for a child whose CPU shows only level `mask`'s features (see
    `exec_with_cpu_mask`); raises ValueError where that cannot be done."""
    library = cpu_mask_library()
    # Another level's mask already preloaded gives way to this one (one handler answers CPUID).
    others = [p for p in os.environ.get("LD_PRELOAD", "").split() if not Path(p).name.startswith("cpu_mask")]
    env = {**os.environ, "HEARTH_CPU_MASK": mask, "LD_PRELOAD": " ".join([str(library), *others])}
    # Python's fault handler would take SIGSEGV, through which every masked CPUID instruction passes.
    env.pop("PYTHONFAULTHANDLER", None)
    return env


def cpu_mask_library() -> Path:
    """`cpu_mask.c` compiled (once, into the cache) for preloading; raises ValueError where a CPU's
    features cannot be hidden (no CPUID faulting, not Linux x86-64, no C compiler)."""
    import hashlib
    import platform
    import shutil

    from hearth.platform.process import cache_dir

    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise ValueError("--cpu hides CPU features through Linux's CPUID faulting, on x86-64 only")
    if "cpuid_fault" not in Path("/proc/cpuinfo").read_text(encoding="utf-8").split():
        raise ValueError("this CPU (or its hypervisor) does not offer CPUID faulting ('cpuid_fault' in "
                         "/proc/cpuinfo), so its features cannot be hidden; measure on an AVX2 machine instead")
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise ValueError("--cpu compiles a small preload library and needs a C compiler: apt-get install gcc")
    source = Path(__file__).parent.parent / "platform" / "cpu_mask.c"
    key = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    library = cache_dir() / f"cpu_mask-{key}.so"
    if not library.is_file():
        library.parent.mkdir(parents=True, exist_ok=True)
        tmp = library.with_suffix(f".{os.getpid()}.tmp")
        # The compiler sees the real CPU: a mask preloaded into it (this process masked already)
        # would meet its own SIGSEGV handler, which takes a hidden CPUID for a crash.
        plain = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "HEARTH_CPU_MASK")}
        subprocess.run([compiler, "-O2", "-shared", "-fPIC", str(source), "-o", str(tmp), "-ldl"], check=True,
                       env=plain)
        tmp.replace(library)
    return library


def main_bench(s: BenchSettings, compare_official: bool, as_json: bool) -> int:
    from hearth.platform.topology import simd

    mask = os.environ.get("HEARTH_CPU_MASK")
    if mask and not shows_level(mask, simd()):
        raise RuntimeError(f"the CPU was to show {mask} only, but the runtimes still use {simd()}")
    t = time.perf_counter()
    model = Path(s.model) if s.model else bench_checkpoint(kind="base" if s.clone_s else "custom_voice")
    if s.uses_openvino:
        print("hearth bench: preparing the OpenVINO models (converted once, then read from the cache) ...",
              file=sys.stderr)
        prepare_openvino(s, model)
    setup_s = time.perf_counter() - t
    result: dict[str, Any] = {"model": str(model), "frames": s.frames, "runs": s.runs, "text": s.text,
                              "chunk_frames": s.chunk_frames, "first_chunk_frames": s.first_chunk_frames,
                              "simd": simd(), "cpu_mask": mask}
    result["hearth"] = run_hearth(s, model, setup_s)
    result.update({k: v for k, v in result["hearth"].items() if k != "engine"})
    if not s.streams and compare_official:
        print("hearth bench: running the official package for comparison ...", file=sys.stderr)
        ref = run_official(s, model)
        result["official"] = ref
        result["ratios"] = {k: result["hearth"][k] / ref[k] for _, k, _ in _ROWS if ref.get(k)}
    if as_json:  # stdout carries only the report
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(format_streams(result) if s.streams else format_table(result))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--official-worker":
        settings = BenchSettings(**json.loads(sys.argv[2]))
        print(json.dumps(_official_worker(settings, Path(sys.argv[3]))))
        sys.exit(0)
    print("usage: hearth bench ... (this module is run through the hearth command)", file=sys.stderr)
    sys.exit(2)
