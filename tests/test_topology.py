"""CPU topology detection on fake sysfs trees, the thread plan, and the doctor/tune plumbing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hearth.backends.settings import load_tuned, save_tuned
from hearth.cli import main
from hearth.platform.topology import arm_features, detect, parse_cpu_list, plan


def fake_sysfs(root: Path, siblings: dict[int, str], *, atom: str | None = None, core: str | None = None,
               max_freq: dict[int, int] | None = None, online: str | None = None) -> Path:
    cpu = root / "devices/system/cpu"
    cpu.mkdir(parents=True)
    (cpu / "online").write_text((online or f"0-{max(siblings)}") + "\n", encoding="utf-8")
    for n, sib in siblings.items():
        d = cpu / f"cpu{n}/topology"
        d.mkdir(parents=True)
        (d / "thread_siblings_list").write_text(sib + "\n", encoding="utf-8")
        if max_freq:
            f = cpu / f"cpu{n}/cpufreq"
            f.mkdir(parents=True)
            (f / "cpuinfo_max_freq").write_text(f"{max_freq[n]}\n", encoding="utf-8")
    if atom is not None and core is not None:
        (root / "devices/cpu_atom").mkdir(parents=True)
        (root / "devices/cpu_atom/cpus").write_text(atom + "\n", encoding="utf-8")
        (root / "devices/cpu_core").mkdir(parents=True)
        (root / "devices/cpu_core/cpus").write_text(core + "\n", encoding="utf-8")
    return root


def test_parse_cpu_list():
    assert parse_cpu_list("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpu_list("5") == [5]
    assert parse_cpu_list("") == []


def test_two_vcpus_without_smt(tmp_path):
    topo = detect(fake_sysfs(tmp_path, {0: "0", 1: "1"}))
    assert (len(topo.cores), topo.smt, topo.hybrid) == (2, False, False)
    p = plan(topo)
    assert (p.lm_threads, p.vocoder_threads) == (2, 2)  # shared: nothing else to give the vocoder


def test_smt_siblings_grouped_and_language_model_gets_one_thread_per_core(tmp_path):
    # 4 cores x 2 threads, Linux numbering: sibling of n is n + 4
    sib = {n: f"{n % 4},{n % 4 + 4}" for n in range(8)}
    topo = detect(fake_sysfs(tmp_path, sib))
    assert topo.smt and len(topo.cores) == 4 and topo.logical == 8
    assert [c.cpus for c in topo.cores] == [(0, 4), (1, 5), (2, 6), (3, 7)]
    p = plan(topo)
    assert p.lm_cpus == (0, 1, 2) and p.lm_threads == 3
    assert 3 in p.vocoder_cpus and not set(p.vocoder_cpus) & set(p.lm_cpus)


def test_intel_hybrid_from_cpu_core_and_cpu_atom(tmp_path):
    # 2 P-cores with SMT (0-3) and 4 E-cores (4-7)
    sib = {0: "0-1", 1: "0-1", 2: "2-3", 3: "2-3", 4: "4", 5: "5", 6: "6", 7: "7"}
    topo = detect(fake_sysfs(tmp_path, sib, atom="4-7", core="0-3"))
    assert topo.hybrid
    assert [c.cpus for c in topo.performance_cores] == [(0, 1), (2, 3)]
    assert len(topo.efficiency_cores) == 4
    p = plan(topo)
    assert p.lm_cpus == (0, 2) and p.lm_threads == 2 and p.lm_core_type == "PCORE_ONLY"
    assert p.vocoder_cpus == (4, 5, 6, 7) and p.vocoder_core_type == "ECORE_ONLY"


def test_big_little_from_max_frequency_and_offline_cpus(tmp_path):
    freq = {0: 1800000, 1: 1800000, 2: 3000000, 3: 3000000, 4: 2950000}
    topo = detect(fake_sysfs(tmp_path, {n: str(n) for n in freq}, max_freq=freq, online="0-4"))
    assert topo.hybrid
    assert [c.cpus for c in topo.performance_cores] == [(2,), (3,), (4,)]  # a lower turbo bin is not "little"
    topo = detect(tmp_path, allowed={2, 3})  # e.g. a container limited to two CPUs
    assert [c.cpus for c in topo.cores] == [(2,), (3,)] and not topo.hybrid


def test_no_sysfs_falls_back_to_cpu_count(tmp_path):
    topo = detect(tmp_path / "missing")
    assert topo.cores and "no sysfs" in topo.source


def test_tuned_settings_round_trip_and_apply_to_cli_and_api_alike(tmp_path, monkeypatch):
    from hearth.backends.settings import backend_options, chunk_frames, max_batch
    from hearth.cli import parser
    from hearth.cli.arguments import backend_flags

    monkeypatch.setenv("HEARTH_CACHE", str(tmp_path))
    monkeypatch.delenv("HEARTH_IGNORE_TUNED", raising=False)
    assert load_tuned() == {} and chunk_frames() == 5 and max_batch() == 4
    save_tuned({"backend": "openvino", "threads": 1, "chunk_frames": 4, "max_batch": 2}, {"experiments": []})
    assert load_tuned() == {"backend": "openvino", "threads": 1, "chunk_frames": 4, "max_batch": 2}
    assert chunk_frames() == 4 and max_batch() == 2

    def resolved(*argv):
        return backend_options(**backend_flags(parser().parse_args(["say", "hi", *argv])))

    assert resolved() == backend_options()  # the command and hearth.load() resolve alike
    assert resolved().threads == 1 and resolved().backend == "openvino"
    assert resolved("--lm-threads", "2").threads == 2  # an explicit flag wins
    assert resolved("--backend", "torch").threads is None  # the reference ignores fast-path tuning
    assert resolved("--no-overlap").overlap is False and resolved("--no-overlap").threads == 1
    monkeypatch.setenv("HEARTH_IGNORE_TUNED", "1")
    assert load_tuned() == {} and resolved().threads is None


def test_doctor_prints_topology_backends_and_plan(capsys):
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["topology"]["logical_cpus"] >= 1
    assert report["plan"]["lm_threads"] >= 1
    assert "torch" in report["backends"] and "openvino" in report["backends"]
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "plan: language model" in out


@pytest.mark.parametrize("flag", ["--backend=cuda", "--weights=int3"])
def test_bad_backend_flags_exit_2(flag, capsys):
    with pytest.raises(SystemExit) as e:
        main(["say", "hi", flag])
    assert e.value.code == 2


def _auxv(entries: dict[int, int]) -> bytes:
    pairs = [*entries.items(), (0, 0)]  # AT_NULL ends the vector
    return b"".join(k.to_bytes(8, "little") + v.to_bytes(8, "little") for k, v in pairs)


def test_arm_features_read_the_kernels_hwcap_bits():
    # A Neoverse N1 (NEON, fp16, dotprod; no SVE, no i8mm) and a Neoverse V2 (with SVE2, i8mm, bf16).
    n1 = arm_features(_auxv({6: 4096, 16: 1 << 1 | 1 << 9 | 1 << 20, 26: 0}))
    assert n1 == {"neon": True, "dotprod": True, "fp16": True, "sve": False, "i8mm": False, "bf16": False,
                  "sve2": False}
    v2 = arm_features(_auxv({16: 1 << 1 | 1 << 9 | 1 << 20 | 1 << 22, 26: 1 << 1 | 1 << 13 | 1 << 14}))
    assert all(v2.values())
    assert not any(arm_features(b"").values())
