"""`hearth bench --against REF`: this code against another commit, side by side, in one sitting.

A shared, noisy machine moves every figure by more than most changes do, so two benchmarks run
minutes apart say little about a change. This checks REF out into a temporary worktree (`git
worktree add --detach`) and runs `hearth bench --json` with the same arguments from both trees in
turn, alternating which goes first (`--pairs` pairs), each in a process of its own with the same
cache, on the same checkpoint. It prints each figure's median on both sides with its range, and
the ratio this / REF with the range of the pairs' ratios: a change is slower where the whole range
is above 1. The worktree is removed at the end. Both trees run with the installed dependencies.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["FIGURES", "compare", "main_against"]

# (label, how to read it from a bench report, format); lower is better for each.
FIGURES: list[tuple[str, tuple[str, ...], str]] = [
    ("real-time factor", ("rtf",), "{:.3f}"),
    ("first audio (s)", ("ttfa_s",), "{:.3f}"),
    ("CPU-s per audio-s", ("cpu_s_per_audio_s",), "{:.2f}"),
    ("prefill (ms)", ("stages_ms", "prefill_ms"), "{:.1f}"),
    ("talker step (ms)", ("stages_ms", "talker_step_ms"), "{:.1f}"),
    ("predictor frame (ms)", ("stages_ms", "predictor_frame_ms"), "{:.1f}"),
    ("vocoder chunk (ms)", ("stages_ms", "vocoder_chunk_ms"), "{:.1f}"),
    ("text front end, p95 (ms/200 chars)", ("stages_ms", "normalize_p95_ms"), "{:.2f}"),
    ("peak RSS (MB)", ("peak_rss_mb",), "{:.0f}"),
    ("start to ready (s)", ("load_s",), "{:.2f}"),
    # hearth bench --listen
    ("listen: 5 s to transcript (s)", ("listen", "5s", "wall_s"), "{:.3f}"),
    ("listen: RTF, 20 s", ("listen", "20s", "rtf"), "{:.3f}"),
    ("listen: encoder, 5 s (ms)", ("listen", "5s", "encoder_ms"), "{:.0f}"),
    ("listen: prefill, 5 s (ms)", ("listen", "5s", "prefill_ms"), "{:.0f}"),
    ("listen: decoder step (ms)", ("listen", "5s", "step_ms"), "{:.1f}"),
    ("aligner (ms per audio-s)", ("listen", "aligner_ms_per_s"), "{:.1f}"),
    ("listen: peak RSS (MB)", ("listen", "peak_rss_mb"), "{:.0f}"),
]


def _repo() -> Path:
    root = Path(__file__).resolve().parent.parent.parent
    if not (root / ".git").exists() or shutil.which("git") is None:
        raise ValueError("--against needs Hearth run from a git checkout (pip install -e .) and git installed")
    return root


def _worktree(repo: Path, ref: str, into: Path) -> str:
    """REF checked out (detached) at `into`; its commit."""
    found = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
                           capture_output=True, encoding="utf-8", errors="replace", check=False)
    if found.returncode != 0:
        raise ValueError(f"--against {ref}: no such commit in {repo} (a branch, tag or commit hash)")
    commit = found.stdout.strip()
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "--quiet", str(into), commit], check=True)
    return commit


def _bench(code: Path, argv: list[str]) -> dict[str, Any]:
    """One `hearth bench --json` run of the code in `code`, in a process of its own."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "hearth.cli", "bench", *argv, "--json"], cwd=code, env=env,
                          stdout=subprocess.PIPE, encoding="utf-8", errors="replace",  # (progress shows on stderr)
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"hearth bench failed in {code} (exit code {proc.returncode}; its messages are above)")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _read(report: dict[str, Any], path: tuple[str, ...]) -> float | None:
    value: Any = report
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return float(value) if isinstance(value, int | float) else None


def compare(this: list[dict[str, Any]], ref: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each figure: both sides' values, medians, and the pairs' ratios this / ref."""
    out: dict[str, dict[str, Any]] = {}
    for label, path, _ in FIGURES:
        read_a = [_read(r, path) for r in this]
        read_b = [_read(r, path) for r in ref]
        a = [v for v in read_a if v is not None]
        b = [v for v in read_b if v is not None]
        if len(a) != len(read_a) or len(b) != len(read_b) or not a:
            continue  # (a figure one side does not report)
        ratios = [x / y for x, y in zip(a, b, strict=True) if y]
        ma, mb = statistics.median(a), statistics.median(b)
        out[label] = {"this": a, "ref": b, "this_median": ma, "ref_median": mb, "ratio": ma / mb if mb else None,
                      "ratio_min": min(ratios) if ratios else None, "ratio_max": max(ratios) if ratios else None}
    return out


def format_comparison(result: dict[str, Any]) -> str:
    lines = [f"this tree against {result['ref']} ({result['commit'][:10]}), {result['pairs']} alternating pairs, "
             f"simd {result['simd']}" + (f", --cpu {result['cpu_mask']}" if result.get("cpu_mask") else ""),
             f"{'':22}{'this (median, range)':>26}{'REF (median, range)':>26}{'this/REF':>10}{'pairs':>16}"]
    formats = {label: fmt for label, _, fmt in FIGURES}
    for label, f in result["figures"].items():
        fmt = formats[label]

        def side(values: list[float], median: float, fmt: str = fmt) -> str:
            return f"{fmt.format(median)} [{fmt.format(min(values))}-{fmt.format(max(values))}]"

        ratio = "-" if f["ratio"] is None else f"{f['ratio']:.3f}"
        spread = "-" if f["ratio_min"] is None else f"{f['ratio_min']:.3f}-{f['ratio_max']:.3f}"
        lines.append(f"{label:22}{side(f['this'], f['this_median']):>26}{side(f['ref'], f['ref_median']):>26}"
                     f"{ratio:>10}{spread:>16}")
    return "\n".join(lines)


def main_against(ref: str, argv: list[str], pairs: int, as_json: bool) -> int:
    repo = _repo()
    this_code = repo
    with tempfile.TemporaryDirectory(prefix="hearth-against-") as tmp:
        other = Path(tmp) / "tree"
        commit = _worktree(repo, ref, other)
        try:
            this: list[dict[str, Any]] = []
            theirs: list[dict[str, Any]] = []
            for i in range(pairs):
                order = [(this_code, this), (other, theirs)]
                for code, into in order if i % 2 == 0 else order[::-1]:
                    name = "this tree" if code == this_code else ref
                    print(f"hearth bench --against: pair {i + 1} of {pairs}, {name} ...", file=sys.stderr)
                    into.append(_bench(code, argv))
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(other)], check=False,
                           capture_output=True)
    result = {"ref": ref, "commit": commit, "pairs": pairs, "simd": this[0].get("simd"),
              "cpu_mask": this[0].get("cpu_mask"), "figures": compare(this, theirs), "this_runs": this,
              "ref_runs": theirs}
    if as_json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(format_comparison(result))
    return 0
