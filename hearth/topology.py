"""CPU topology from sysfs, and the thread plan derived from it.

Hybrid CPUs (Intel performance + efficiency cores) list their core types in
/sys/devices/cpu_core/cpus and /sys/devices/cpu_atom/cpus; elsewhere a lower cpuinfo_max_freq or
cpu_capacity (Arm big.LITTLE) marks efficiency cores. SMT siblings come from each CPU's
topology/thread_siblings_list. The language model is memory-bound and wants one thread per physical
performance core; the vocoder is compute-bound and runs beside it, on efficiency cores where there
are some, else on the cores (or SMT siblings) the language model leaves.
"""

from __future__ import annotations

import functools
import os
import platform
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Core", "Plan", "Topology", "describe", "detect", "parse_cpu_list", "plan", "simd"]


def parse_cpu_list(text: str) -> list[int]:
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]"""
    cpus: list[int] = []
    for raw in text.strip().split(","):
        part = raw.strip()
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            cpus.extend(range(int(lo), int(hi) + 1))
        else:
            cpus.append(int(part))
    return sorted(set(cpus))


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


@dataclass(frozen=True)
class Core:
    """One physical core: its logical CPUs (SMT siblings) and whether it is a performance core."""

    cpus: tuple[int, ...]
    performance: bool = True


@dataclass(frozen=True)
class Topology:
    cores: tuple[Core, ...]
    hybrid: bool = False
    source: str = "sysfs"

    @property
    def logical(self) -> int:
        return sum(len(c.cpus) for c in self.cores)

    @property
    def smt(self) -> bool:
        return any(len(c.cpus) > 1 for c in self.cores)

    @property
    def performance_cores(self) -> list[Core]:
        return [c for c in self.cores if c.performance]

    @property
    def efficiency_cores(self) -> list[Core]:
        return [c for c in self.cores if not c.performance]


def detect(root: Path | str = "/sys", allowed: set[int] | None = None) -> Topology:
    """The topology under `root` (a real /sys or a fake tree in tests), limited to `allowed` CPUs
    (default: this process's affinity when reading the real /sys)."""
    root = Path(root)
    cpu_dir = root / "devices/system/cpu"
    online_text = _read(cpu_dir / "online")
    if online_text is None:
        n = os.cpu_count() or 1
        return Topology(tuple(Core((i,)) for i in range(n)), source="os.cpu_count (no sysfs)")
    online = parse_cpu_list(online_text)
    if allowed is None and str(root) == "/sys" and hasattr(os, "sched_getaffinity"):
        allowed = set(os.sched_getaffinity(0))
    if allowed is not None:
        online = [c for c in online if c in allowed] or online

    efficiency: set[int] = set()
    atom = _read(root / "devices/cpu_atom/cpus")
    core_list = _read(root / "devices/cpu_core/cpus")
    if atom and core_list:
        efficiency = set(parse_cpu_list(atom))
    else:
        for name in ("cpu_capacity", "cpufreq/cpuinfo_max_freq"):
            values = {}
            for cpu in online:
                v = _read(cpu_dir / f"cpu{cpu}" / name)
                if v is not None and v.isdigit():
                    values[cpu] = int(v)
            if len(values) == len(online) and len(set(values.values())) > 1:
                top = max(values.values())
                # Efficiency cores run well below the fastest ones (turbo bins differ by a few %).
                efficiency = {c for c, v in values.items() if v < 0.85 * top}
                break

    groups: dict[tuple[int, ...], None] = {}
    for cpu in online:
        siblings_text = _read(cpu_dir / f"cpu{cpu}/topology/thread_siblings_list")
        siblings = parse_cpu_list(siblings_text) if siblings_text else [cpu]
        groups[tuple(c for c in siblings if c in online) or (cpu,)] = None
    cores = tuple(Core(cpus, performance=cpus[0] not in efficiency) for cpus in groups)
    return Topology(cores, hybrid=bool(efficiency) and len(efficiency) < len(online))


@dataclass(frozen=True)
class Plan:
    """Threads and places for the language model and the vocoder."""

    lm_threads: int
    vocoder_threads: int
    lm_cpus: tuple[int, ...]
    vocoder_cpus: tuple[int, ...]
    lm_core_type: str = "ANY_CORE"  # OpenVINO SCHEDULING_CORE_TYPE
    vocoder_core_type: str = "ANY_CORE"
    notes: list[str] = field(default_factory=list)

    def backend_options(self) -> dict[str, Any]:
        return {"threads": self.lm_threads, "vocoder_threads": self.vocoder_threads,
                "lm_core_type": self.lm_core_type, "vocoder_core_type": self.vocoder_core_type}


def plan(topo: Topology) -> Plan:
    notes = []
    perf = topo.performance_cores or list(topo.cores)
    eff = topo.efficiency_cores
    lm_cores = perf
    if eff:
        voc_cpus = tuple(c for core in eff for c in core.cpus[:1])
        notes.append(f"hybrid CPU: language model on {len(perf)} performance cores, vocoder on {len(eff)} "
                     "efficiency cores")
        return Plan(len(perf), min(len(eff), 4), tuple(c.cpus[0] for c in perf), voc_cpus,
                    "PCORE_ONLY", "ECORE_ONLY", notes)
    if len(perf) >= 4:
        lm_cores, voc_cores = perf[:-1], perf[-1:]
        notes.append(f"{len(perf)} cores: language model on {len(lm_cores)}, one core left to the vocoder")
        voc = tuple(c for core in voc_cores for c in core.cpus)
        if topo.smt:
            voc += tuple(c for core in lm_cores for c in core.cpus[1:])
            notes.append("SMT: the vocoder may also use the language model cores' second threads")
        return Plan(len(lm_cores), max(1, len(voc)), tuple(c.cpus[0] for c in lm_cores), voc, notes=notes)
    lm = tuple(c.cpus[0] for c in lm_cores)
    if topo.smt:
        voc = tuple(c for core in lm_cores for c in core.cpus[1:])
        notes.append("few cores: the vocoder runs on the SMT siblings of the language model's cores")
        return Plan(len(lm_cores), len(voc), lm, voc, notes=notes)
    notes.append(f"{len(perf)} core(s) without SMT: language model and vocoder share them and take turns "
                 "(--overlap to run both at once)")
    return Plan(len(lm_cores), len(lm_cores), lm, lm, notes=notes)


def describe(topo: Topology) -> dict[str, Any]:
    return {"source": topo.source, "hybrid": topo.hybrid, "smt": topo.smt, "logical_cpus": topo.logical,
            "cores": [asdict(c) for c in topo.cores]}


@functools.cache
def simd() -> str:
    """The vector instruction set the runtimes use here, e.g. "avx512+bf16+fp16", "avx2", "neon".

    Read from what OpenVINO's CPU plugin chose: the kernel of a small element-wise graph
    ("jit_avx512_f32") and its optimization capabilities (BF16, FP16 arithmetic). The runtimes ask the CPU (CPUID)
    themselves, so this follows a CPU whose features are hidden (`hearth bench --cpu avx2`), where
    /proc/cpuinfo would not. Without OpenVINO: the kernel's CPU flags."""
    try:
        import numpy as np
        import openvino as ov
        import openvino.opset13 as ops
    except ImportError:
        return _simd_from_flags()
    core = ov.Core()
    x = ops.parameter([1, 64], np.float32)
    y = ops.relu(ops.add(ops.multiply(x, ops.constant(np.full((1, 64), 2, np.float32))), x))  # a jit eltwise
    compiled = core.compile_model(ov.Model([y], [x]), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    ordered = compiled.get_runtime_model().get_ordered_ops()
    kernels = [str(o.get_rt_info()["primitiveType"].astype(str)) for o in ordered]
    isa = "unknown"
    for name in ("amx", "avx512", "avx2", "avx", "sse42", "sve", "neon", "asimd", "acl", "ref"):
        if any(name in k for k in kernels):
            isa = {"amx": "avx512", "acl": "neon", "asimd": "neon"}.get(name, name)
            break
    if isa in ("unknown", "ref") and platform.machine().lower() in ("aarch64", "arm64"):
        isa = "neon"
    capabilities = set(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
    extras = [name.lower() for name in ("BF16", "FP16") if name in capabilities]
    return "+".join([isa, *extras])


def _simd_from_flags() -> str:
    flags: set[str] = set()
    text = _read(Path("/proc/cpuinfo")) or ""
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            flags = set(line.split(":", 1)[1].split())
            break
    for isa, flag in (("avx512", "avx512f"), ("avx2", "avx2"), ("neon", "asimd"), ("sse42", "sse4_2")):
        if flag in flags:
            return isa
    return platform.machine() or "unknown"
