#!/bin/sh
# The determinism tests as every x86 level the runtimes dispatch on, on this one machine (`make test-cpus`).
#
# Each level runs in processes whose CPUID shows only that level's features (hearth/platform/cpu_mask.c,
# preloaded; Linux x86-64 with CPUID faulting: 'cpuid_fault' in /proc/cpuinfo), so OpenVINO and ONNX
# Runtime take the kernels of such a CPU at this machine's speed. A level above this CPU's own shows
# what the CPU has of it. Prints one line a level (what the runtimes saw, passed or failed, seconds)
# and exits non-zero if any level failed.
#
#   HEARTH_CPU_LEVELS   the levels (default: all of topology.CPU_LEVELS, oldest first)
#   HEARTH_CPU_TESTS    the tests (default: tests/test_determinism.py, the live fuzzer's, which
#                       compares a live session's codes with the same text whole, and listening's,
#                       tests/test_listen_determinism.py, whose results per level are compared at the
#                       end by scripts/listen_levels.py)
#
# arm64 is run by scripts/arm64.sh (qemu-user: correctness only); AMX needs a CPU that has it.
set -eu
HERE=$(cd "$(dirname "$0")/.." && pwd)
cd "$HERE"
PYTHON=${PYTHON:-python3}
# numpy's OpenBLAS picks its kernels by the CPUID it sees, unless OPENBLAS_CORETYPE names them (some
# sandboxes set Haswell, which would hide the level). Each level's tests get the core type OpenBLAS picks
# under that level's CPUID, asked in a process of its own and then given by name: left to detect it in
# every process, a test worker died under the AVX2 masks on a Zen 5 (2026-12-07; see docs/determinism.md).
unset OPENBLAS_CORETYPE
BLAS_PICK='import numpy, threadpoolctl
print(next((i.get("architecture") or "" for i in threadpoolctl.threadpool_info() if i.get("internal_api") == "openblas"),
           ""))'  # (nothing where numpy has another BLAS)

if ! grep -qw cpuid_fault /proc/cpuinfo; then
    echo "test-cpus: this CPU (or its hypervisor) has no CPUID faulting ('cpuid_fault' in /proc/cpuinfo):" \
         "its features cannot be hidden, so only its own level can run here (make test)" >&2
    exit 2
fi
LEVELS=${HEARTH_CPU_LEVELS:-$($PYTHON -c 'from hearth.platform.topology import CPU_LEVELS; print(" ".join(CPU_LEVELS))')}
TESTS=${HEARTH_CPU_TESTS:-tests/test_determinism.py tests/test_live_fuzz.py tests/test_listen_determinism.py}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
${CC:-cc} -O2 -shared -fPIC hearth/platform/cpu_mask.c -o "$WORK/cpu_mask.so" -ldl  # (named cpu_mask*: `--cpu` replaces it)

failed=0
start=$(date +%s)
for level in $LEVELS; do
    t0=$(date +%s)
    # (pytest's fault handler would take the SIGSEGV through which every hidden CPUID passes)
    shown=$(HEARTH_CPU_MASK=$level LD_PRELOAD="$WORK/cpu_mask.so" $PYTHON -c \
        'from hearth.platform.topology import simd; print(simd())')
    blas=$(HEARTH_CPU_MASK=$level LD_PRELOAD="$WORK/cpu_mask.so" $PYTHON -c "$BLAS_PICK")
    if env ${blas:+"OPENBLAS_CORETYPE=$blas"} HEARTH_CPU_RECORD="$WORK/listen" HEARTH_CPU_MASK=$level \
        LD_PRELOAD="$WORK/cpu_mask.so" \
        $PYTHON -m pytest -q -p no:faulthandler \
        -p no:cacheprovider -n 2 $TESTS >"$WORK/$level.log" 2>&1; then
        result=passed
    else
        result=FAILED
        failed=1
        tail -n 30 "$WORK/$level.log" >&2
        grep "cpu_mask:" "$WORK/$level.log" >&2 || true  # where a process died of a real fault, if one did
    fi
    summary=$(grep -E '[0-9]+ (passed|failed)' "$WORK/$level.log" | tail -n 1)
    echo "test-cpus: $level (the runtimes saw $shown, numpy's BLAS ${blas:-not OpenBLAS}): $result in $(( $(date +%s) - t0 )) s: $summary"
done
echo "test-cpus: $(echo $LEVELS | wc -w) levels in $(( $(date +%s) - start )) s"
if [ -d "$WORK/listen" ]; then
    $PYTHON scripts/listen_levels.py "$WORK/listen" || failed=1
fi
exit $failed
