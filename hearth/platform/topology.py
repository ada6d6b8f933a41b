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

__all__ = ["CPU_LEVELS", "Core", "Plan", "Topology", "arm_features", "describe", "detect", "parse_cpu_list", "plan",
           "shows_level", "simd"]


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
        return path.read_text(encoding="utf-8").strip()
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


# x86-64 System V: cpuid(leaf=edi, subleaf=esi, out=rdx) -> out[0..3] = eax, ebx, ecx, edx
_CPUID_CODE = bytes.fromhex("534989d089f889f10fa241890041895804418948084189500c5bc3")


def _cpuid(leaf: int, subleaf: int = 0) -> tuple[int, int, int, int] | None:
    """The CPUID instruction, run here (so a CPU whose features a runtime sees hidden, as under
    `hearth bench --cpu avx2`, shows the same here). None where it cannot run (not x86-64, or
    executable memory refused)."""
    import ctypes
    import mmap

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long]
        page = libc.mmap(None, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_WRITE,
                         mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        if page in (None, ctypes.c_void_p(-1).value):
            return None
        ctypes.memmove(page, _CPUID_CODE, len(_CPUID_CODE))
        if libc.mprotect(ctypes.c_void_p(page), ctypes.c_size_t(mmap.PAGESIZE), mmap.PROT_READ | mmap.PROT_EXEC):
            return None
        out = (ctypes.c_uint32 * 4)()
        ctypes.CFUNCTYPE(None, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p)(page)(leaf, subleaf,
                                                                                      ctypes.addressof(out))
        libc.munmap(ctypes.c_void_p(page), ctypes.c_size_t(mmap.PAGESIZE))
        return out[0], out[1], out[2], out[3]
    except (OSError, AttributeError):
        return None


# The x86 levels the runtimes dispatch on, oldest first (`cpu_mask.c`), with what `topology.simd()`
# says of each where this CPU has all of it.
CPU_LEVELS = {"sse42": "sse42", "avx2": "avx2", "avx2-vnni": "avx2+vnni", "avx512": "avx512",
              "avx512-vnni": "avx512+vnni", "avx512-bf16": "avx512+vnni+bf16", "avx512-amx": "avx512+vnni+bf16+amx"}


def shows_level(mask: str, shown: str) -> bool:
    """Whether a CPU that `simd()` calls `shown` is at most level `mask` (fewer features where this
    CPU lacks some of the level's)."""
    want = CPU_LEVELS[mask].split("+")
    have = shown.split("+")
    return have[0] == want[0] and set(have) <= set(want)


@functools.cache
def simd() -> str:
    """The vector instruction set this machine offers the runtimes: "avx512" (+vnni, +bf16, +amx),
    "avx2" (+vnni: AVX-VNNI), "neon", ...

    On x86-64 from CPUID itself, as the runtimes read it (a CPU whose features are hidden, as under
    `hearth bench --cpu avx2`, shows here as the runtimes see it; /proc/cpuinfo would not).
    Elsewhere from the kernel's CPU flags."""
    top = _cpuid(0)
    if top is None or top[0] < 7:
        return _simd_from_flags()
    _, ebx, ecx, edx = _cpuid(7, 0) or (0, 0, 0, 0)
    eax1 = (_cpuid(7, 1) or (0, 0, 0, 0))[0] if top[0] >= 7 else 0
    if ebx >> 16 & 1:  # AVX512F
        extras = [name for name, bit in (("vnni", ecx >> 11 & 1), ("bf16", eax1 >> 5 & 1), ("amx", edx >> 24 & 1))
                  if bit]
        return "+".join(["avx512", *extras])
    if ebx >> 5 & 1:  # AVX2
        return "avx2+vnni" if eax1 >> 4 & 1 else "avx2"
    ecx1 = (_cpuid(1, 0) or (0, 0, 0, 0))[2]
    if not ecx1 >> 28 & 1 and ecx1 >> 20 & 1:  # SSE4.2 without AVX (the flags would show a masked CPU's own)
        return "sse42"
    return _simd_from_flags()


def _simd_from_flags() -> str:
    if is_arm():
        return "+".join(["neon", *(name for name, present in arm_features().items() if present and name != "neon")])
    flags: set[str] = set()
    text = _read(Path("/proc/cpuinfo")) or ""
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    for isa, flag in (("avx512", "avx512f"), ("avx2", "avx2"), ("sse42", "sse4_2")):
        if flag in flags:
            return isa
    return platform.machine() or "unknown"


def is_arm() -> bool:
    return platform.machine().lower() in ("aarch64", "arm64")


# Bits of the kernel's AT_HWCAP / AT_HWCAP2 on arm64 (arch/arm64/include/uapi/asm/hwcap.h) for the
# features the runtimes' kernels choose by: NEON (asimd), the int8 dot product, the int8 matrix
# multiply, bf16, and the scalable vectors.
_ARM_HWCAP = {"neon": (16, 1), "dotprod": (16, 20), "fp16": (16, 9), "sve": (16, 22),
              "i8mm": (26, 13), "bf16": (26, 14), "sve2": (26, 1)}


def arm_features(auxv: bytes | None = None) -> dict[str, bool]:
    """The arm64 CPU features that matter to the runtimes, from the process's auxiliary vector (what
    the kernel, or qemu-user, tells programs; /proc/cpuinfo can differ under emulation)."""
    if auxv is None:
        try:
            auxv = Path("/proc/self/auxv").read_bytes()
        except OSError:
            auxv = b""
    words = [int.from_bytes(auxv[i:i + 8], "little") for i in range(0, len(auxv) - len(auxv) % 8, 8)]
    entries = dict(zip(words[0::2], words[1::2], strict=False))
    return {name: bool(entries.get(key, 0) >> bit & 1) for name, (key, bit) in _ARM_HWCAP.items()}
