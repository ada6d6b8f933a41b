"""`hearth doctor` (what this machine has and the plan chosen) and `hearth tune` (experiments)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Collection
from typing import Any

from hearth.backends.settings import backend_options, load_tuned, save_tuned, tuned_path
from hearth.errors import CONVERT_EXTRA
from hearth.platform.topology import arm_features, describe, detect, is_arm, plan, simd

__all__ = ["doctor_report", "main_doctor", "main_tune"]


def doctor_report() -> dict[str, Any]:
    from hearth.backends.conversions import tool_version

    topo = detect()
    chosen = plan(topo)
    report: dict[str, Any] = {
        "topology": describe(topo),
        "plan": {"lm_threads": chosen.lm_threads, "vocoder_threads": chosen.vocoder_threads,
                 "lm_cpus": list(chosen.lm_cpus), "vocoder_cpus": list(chosen.vocoder_cpus),
                 "lm_core_type": chosen.lm_core_type, "vocoder_core_type": chosen.vocoder_core_type,
                 "notes": chosen.notes},
        # torch converts models and runs the reference; a runtime-only install has none (not imported here).
        "backends": {"torch": {"available": tool_version("torch") is not None, "version": tool_version("torch")}},
        "tuned": {"path": str(tuned_path()), "options": load_tuned()},
        "simd": simd(),
    }
    if is_arm():  # what ONNX Runtime's and OpenVINO's arm64 kernels choose by
        report["arm_features"] = arm_features()
    defaults = backend_options()
    report["default_backend"], report["default_vocoder"] = defaults.backend, defaults.vocoder_precision
    try:
        import openvino as ov
    except ImportError:
        report["backends"]["openvino"] = {"available": False, "fix": "pip install openvino==2026.4.1"}
    else:
        core = ov.Core()
        devices = {}
        for d in core.available_devices:
            try:
                devices[d] = str(core.get_property(d, "FULL_DEVICE_NAME"))
            except RuntimeError:
                devices[d] = "?"
        report["backends"]["openvino"] = {"available": True, "version": ov.get_version(), "devices": devices}
        if "GPU" in devices:
            report["plan"]["notes"].append("Intel GPU found: try --vocoder-device GPU (language model on the CPU)")
    return report


def main_doctor(as_json: bool) -> int:
    r = doctor_report()
    if as_json:
        json.dump(r, sys.stdout)
        sys.stdout.write("\n")
        return 0
    t = r["topology"]
    print(f"SIMD: {r['simd']}; default backend: {r['default_backend']}, vocoder: {r['default_vocoder']}")
    if "arm_features" in r:
        print("ARM: " + ", ".join(f"{name} {'yes' if has else 'no'}" for name, has in r["arm_features"].items()))
    print(f"CPU: {t['logical_cpus']} logical CPUs, {len(t['cores'])} cores, hybrid: {t['hybrid']}, "
          f"SMT: {t['smt']} (from {t['source']})")
    for i, c in enumerate(t["cores"]):
        kind = "performance" if c["performance"] else "efficiency"
        print(f"  core {i}: CPUs {','.join(map(str, c['cpus']))} ({kind})")
    b = r["backends"]
    print(f"torch {b['torch']['version']} (converting, the reference)" if b["torch"]["available"]
          else f"torch: not installed (runtime only: loads exported or cached models; {CONVERT_EXTRA} to convert)")
    ovi = b["openvino"]
    if ovi["available"]:
        print(f"openvino {ovi['version']}: " + "; ".join(f"{d} = {n}" for d, n in ovi["devices"].items()))
    else:
        print(f"openvino: not installed ({ovi['fix']})")
    p = r["plan"]
    print(f"plan: language model {p['lm_threads']} threads on CPUs {p['lm_cpus']} ({p['lm_core_type']}), "
          f"vocoder {p['vocoder_threads']} threads on CPUs {p['vocoder_cpus']} ({p['vocoder_core_type']})")
    for note in p["notes"]:
        print(f"  {note}")
    tuned = r["tuned"]
    print(f"tuned settings: {tuned['options'] if tuned['options'] else 'none'} ({tuned['path']})")
    return 0


def _bench(model: str | None, options: dict[str, Any], frames: int, runs: int, chunk: int,
           streams: str | None = None) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "hearth.cli", "bench", "--json", "--frames", str(frames), "--runs", str(runs),
           "--chunk-frames", str(chunk)]
    if streams:
        cmd += ["--streams", streams]
    if model:
        cmd += ["--model", model]
    flags = {"backend": "--backend", "weights": "--weights", "vocoder": "--vocoder", "threads": "--lm-threads",
             "vocoder_threads": "--vocoder-threads"}
    for key, flag in flags.items():
        if options.get(key) is not None:
            cmd += [flag, str(options[key])]
    if options.get("overlap") is not None:
        cmd.append("--overlap" if options["overlap"] else "--no-overlap")
    env = dict(os.environ)
    env["HEARTH_IGNORE_TUNED"] = "1"  # experiments run exactly the options given
    proc = subprocess.run(cmd, capture_output=True, encoding="utf-8", errors="replace", env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"bench failed for {options}: {proc.stderr.strip()[-1000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


BATCH_SIZES = (1, 2, 4, 8)
TUNED = ("vocoder", "threads", "vocoder_threads", "overlap", "chunk_frames", "max_batch")  # in the order tried


def main_tune(model: str | None, backend: str, weights: str, frames: int, runs: int, as_json: bool,
              only: Collection[str] | None = None) -> int:
    """One variable at a time from the topology plan: the vocoder's runtime (with ONNX Runtime's
    language model, where the CPU has no AVX-512: OpenVINO's or ONNX Runtime's vocoder, whose order
    differs from machine to machine), language-model threads, vocoder threads, whether generation and
    vocoding overlap, chunk size; then the batch size for many requests at once (or only the settings
    in `only`; the others keep the plan's values). Each candidate is a fresh `hearth bench` process;
    the score is the real-time factor (then first audio), and for the batch size the throughput."""
    tried = set(TUNED if only is None else only)
    topo = detect()
    base_plan = plan(topo)
    best: dict[str, Any] = {"backend": backend, "weights": weights, "threads": base_plan.lm_threads,
                            "vocoder_threads": base_plan.vocoder_threads}
    best_chunk = 5
    cpus = max(topo.logical, 1)
    experiments: list[dict[str, Any]] = []

    def score(r: dict[str, Any]) -> tuple[float, float]:
        return (round(r["rtf"], 2), r["ttfa_s"])

    def trial(options: dict[str, Any], chunk: int, variable: str) -> tuple[float, float]:
        try:
            r = _bench(model, options, frames, runs, chunk)
        except RuntimeError as e:
            if variable == "plan":  # the starting point itself fails: nothing to compare against
                raise
            # A candidate the runtime cannot run (seen: OpenVINO 2026.4's fused MLP kernel dies with
            # SIGFPE for a bf16 vocoder on one thread on AMX CPUs) is skipped, not fatal.
            experiments.append({"variable": variable, "options": dict(options), "chunk_frames": chunk,
                                "failed": str(e).splitlines()[-1][-300:]})
            print(f"hearth tune: {variable:16} {json.dumps(options)} chunk {chunk}: failed, skipped", file=sys.stderr)
            return (float("inf"), float("inf"))
        row = {"variable": variable, "options": dict(options), "chunk_frames": chunk, "rtf": r["rtf"],
               "ttfa_s": r["ttfa_s"], "cpu_s_per_audio_s": r["cpu_s_per_audio_s"], "peak_rss_mb": r["peak_rss_mb"]}
        experiments.append(row)
        print(f"hearth tune: {variable:16} {json.dumps(options)} chunk {chunk}: RTF {r['rtf']:.2f}, "
              f"first audio {r['ttfa_s']:.3f} s", file=sys.stderr)
        return score(r)

    current = trial(best, best_chunk, "plan")
    if "vocoder" in tried and backend == "onnxruntime":
        candidate = {**best, "vocoder": "onnxruntime"}  # the plan's is OpenVINO's (bf16 where the CPU has it)
        s = trial(candidate, best_chunk, "vocoder")
        if s < current:
            best, current = candidate, s
    for variable, values in (("threads", range(1, cpus + 1)), ("vocoder_threads", range(1, cpus + 1))):
        measured = best[variable]  # measured already, with the same other settings
        for v in values if variable in tried else ():
            if v == measured:
                continue
            candidate = {**best, variable: v}
            s = trial(candidate, best_chunk, variable)
            if s < current:
                best, current = candidate, s
    shared = not set(base_plan.vocoder_cpus).isdisjoint(base_plan.lm_cpus)  # the plan's choice: take turns
    candidate = {**best, "overlap": shared}
    s = trial(candidate, best_chunk, "overlap") if "overlap" in tried else current
    if s < current:
        best, current = candidate, s
    for chunk in (3, 4, 8) if "chunk_frames" in tried else ():
        s = trial(best, chunk, "chunk_frames")
        if s < current:
            best_chunk, current = chunk, s
    saved: dict[str, Any] = {**best, "chunk_frames": best_chunk}
    if "max_batch" in tried:
        saved["max_batch"] = _best_batch(model, best, frames, runs, best_chunk, experiments)
    path = save_tuned(saved, {"experiments": experiments, "frames": frames, "runs": runs})
    if as_json:
        json.dump({"best": saved, "experiments": experiments, "path": str(path)}, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(f"best: {json.dumps(saved)} (RTF {current[0]:.2f}, first audio {current[1]:.3f} s); saved to {path}")
    return 0


def _best_batch(model: str | None, best: dict[str, Any], frames: int, runs: int, chunk: int,
                experiments: list[dict[str, Any]]) -> int:
    """The batch size that makes the most audio per second with that many requests at once (a
    server's busiest hour); a larger one wins only by more than 5 %."""
    r = _bench(model, best, frames, runs, chunk, streams=",".join(map(str, BATCH_SIZES)))
    best_batch, best_throughput = 1, 0.0
    for row in r["streams"]:
        experiments.append({"variable": "max_batch", "options": dict(best), "chunk_frames": chunk,
                            **{k: row[k] for k in ("streams", "max_batch", "throughput_x_realtime", "ttfa_s", "rtf",
                                                   "peak_rss_mb")}})
        print(f"hearth tune: max_batch        {row['max_batch']}: {row['throughput_x_realtime']:.2f} s of audio "
              f"per second, first audio {row['ttfa_s']:.3f} s", file=sys.stderr)
        if row["throughput_x_realtime"] > 1.05 * best_throughput:
            best_batch, best_throughput = row["max_batch"], row["throughput_x_realtime"]
    return best_batch
