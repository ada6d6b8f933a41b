"""`hearth bench` runs end to end and reports every figure it promises (values are not asserted)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hearth.backends.settings import backend_options
from hearth.platform.topology import simd

REQUIRED = ["ttfa_s", "ttfa_p95_s", "rtf", "cpu_s_per_audio_s", "peak_rss_mb", "audio_s", "load_s"]
STAGES = ["prefill_ms", "talker_step_ms", "predictor_frame_ms", "vocoder_chunk_ms"]


def test_bench_json_with_official(tiny_dir):
    cmd = [sys.executable, "-m", "hearth.cli", "bench", "--model", str(tiny_dir), "--frames", "6", "--runs", "2",
           "--threads", "1", "--compare-official", "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)  # one JSON object and nothing else on stdout
    for key in REQUIRED:
        assert data[key] > 0, key
        assert data["official"][key] > 0, key
        assert key in data["ratios"]
    assert set(STAGES) <= set(data["stages_ms"])
    assert data["audio_s"] == 6 * 0.08  # fixed frame count: end of speech is masked
    assert data["official"]["audio_s"] == data["audio_s"]
    assert data["hearth"]["threads"] == data["official"]["threads"] == 1


def test_bench_table(tiny_dir):
    cmd = [sys.executable, "-m", "hearth.cli", "bench", "--model", str(tiny_dir), "--frames", "3", "--runs", "1",
           "--live", "40"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    assert "first audio, median (s)" in r.stdout and "real-time factor" in r.stdout
    assert "live text at 40 words/s: first audio" in r.stdout
    default = backend_options().backend  # the default path is measured (onnxruntime without AVX-512)
    assert f"hearth backend: backend={default}, weights=int8" in r.stdout
    assert f"simd: {simd()}" in r.stdout


def test_bench_on_a_cpu_without_avx512(tiny_dir):
    """`--cpu avx2` measures the code path of a CPU without AVX-512, AMX, BF16 and AVX-VNNI: every
    runtime in the process sees such a CPU (OpenVINO's kernels say so), and the default backend is
    the one that machine gets."""
    if "cpuid_fault" not in Path("/proc/cpuinfo").read_text(encoding="utf-8").split() or not shutil.which("cc"):
        pytest.skip("needs CPUID faulting and a C compiler")
    cmd = [sys.executable, "-m", "hearth.cli", "bench", "--model", str(tiny_dir), "--frames", "3", "--runs", "1",
           "--cpu", "avx2", "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["simd"] == "avx2" and data["cpu_mask"] == "avx2"
    assert data["backend"]["backend"] == "onnxruntime"
    assert data["rtf"] > 0


def test_bench_streams_json(tiny_dir):
    """`--streams 1,3`: each count's throughput, per-stream first audio and RTF, memory and batch size."""
    cmd = [sys.executable, "-m", "hearth.cli", "bench", "--model", str(tiny_dir), "--frames", "6", "--runs", "1",
           "--streams", "1,3", "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [s["streams"] for s in data["streams"]] == [1, 3]
    for s in data["streams"]:
        for key in ("throughput_x_realtime", "ttfa_s", "ttfa_p95_s", "rtf", "peak_rss_mb", "rss_mb"):
            assert s[key] > 0, key
        assert s["errors"] == 0 and s["audio_s_per_stream"] == 6 * 0.08  # every stream speaks --frames frames
        assert s["max_batch"] == s["streams"]
    assert data["streams"][1]["mean_rows_per_step"] > 1  # three streams really were stepped together


def test_bench_cloned_voice(base_dir):
    """`--clone 2` on a Base checkpoint, OpenVINO (fp32, as the clone tests convert it): the three
    first-audio figures."""
    import os
    from pathlib import Path

    cmd = [sys.executable, "-m", "hearth.cli", "bench", "--model", str(base_dir), "--frames", "4", "--runs", "1",
           "--weights", "fp32", "--vocoder", "fp32", "--clone", "2", "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    clone = data["clone"]
    assert clone["reference_s"] == 2 and clone["reference_frames"] == 25 and clone["mode"] == "in-context"
    for key in ("first_clone_s", "clone_s", "vocoder_prime_s", "ttfa_from_raw_audio_s", "profile_load_s",
                "ttfa_stored_first_use_s"):
        assert clone[key] > 0, key
    assert clone["primed_state_on_disk"] and data["ttfa_s"] > 0 and data["audio_s"] == 4 * 0.08
    assert not (Path(os.environ["HEARTH_CACHE"]) / "voices" / "bench.safetensors").exists()  # it was temporary
    bad = subprocess.run(cmd[:-3] + ["--clone", "40"], capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and "1 to 30 s" in bad.stderr


def test_bench_against_another_commit(tiny_dir):
    """`--against HEAD`: the same bench from this tree and from HEAD's worktree, alternated; each figure
    on both sides with the ratio and its spread; the temporary worktree is gone afterwards."""
    git = ["git", "-C", str(Path(__file__).parent.parent)]
    before = subprocess.run([*git, "worktree", "list"], capture_output=True, text=True, check=True).stdout
    cmd = [sys.executable, "-m", "hearth.cli", "bench", "--model", str(tiny_dir), "--frames", "3", "--runs", "1",
           "--backend", "torch", "--against", "HEAD", "--pairs", "2", "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert data["commit"] == head and data["pairs"] == 2
    assert len(data["this_runs"]) == len(data["ref_runs"]) == 2
    for label in ("real-time factor", "first audio (s)", "predictor frame (ms)", "vocoder chunk (ms)",
                  "peak RSS (MB)", "start to ready (s)"):
        f = data["figures"][label]
        assert len(f["this"]) == len(f["ref"]) == 2 and f["ratio_min"] <= f["ratio"] * 1.0001
        assert f["ratio"] > 0
    assert "pair 2 of 2" in r.stderr
    after = subprocess.run([*git, "worktree", "list"], capture_output=True, text=True, check=True).stdout
    assert after == before
    bad = subprocess.run(cmd[:-5] + ["--against", "no-such-ref-xyz"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert bad.returncode == 2 and "no such commit" in bad.stderr
