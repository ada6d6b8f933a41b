#!/bin/sh
# Hearth on ARM64 from an x86 machine: an arm64 Debian 12 root run through qemu-user.
#
#   scripts/arm64.sh root    build the root (debootstrap; ~10 min), once
#   scripts/arm64.sh setup   copy this checkout's HEAD into the root and `make setup` there
#   scripts/arm64.sh sync    copy this checkout's files (as they are) over the root's, no install
#   scripts/arm64.sh smoke   the smoke set on arm64 (see scripts/arm64_smoke.sh), timed; it takes
#                            HEARTH_SMOKE_EXPORT (a path inside the root) and HEARTH_SMOKE_TESTS
#   scripts/arm64.sh runtime the runtime alone (`pip install hearth-tts`, no torch) in a venv of its
#                            own in the root, speaking HEARTH_SMOKE_EXPORT (an export made elsewhere)
#   scripts/arm64.sh shell   a shell in the root
#   scripts/arm64.sh all     the three in order
#
# Needs root, and Debian's qemu-user-static, binfmt-support and debootstrap. Emulated figures are
# correctness only, never speed. Two things of qemu 7.2 are worked around here:
#   - it passes the host's x86 /proc/cpuinfo through, on which `import torch` and `import
#     onnxruntime` crash: an ARM-format cpuinfo is bind-mounted over it;
#   - its default `max` core has SME, on which torch's conv_transpose1d dies: QEMU_CPU pins a
#     Neoverse N1 (NEON, dotprod; no SVE, no i8mm) unless the caller sets another.
set -eu

ROOT=${HEARTH_ARM64_ROOT:-/srv/hearth-arm64}
SUITE=${HEARTH_ARM64_SUITE:-bookworm}
MIRROR=${HEARTH_ARM64_MIRROR:-http://deb.debian.org/debian}
export QEMU_CPU=${QEMU_CPU:-neoverse-n1}
HERE=$(cd "$(dirname "$0")/.." && pwd)

say() { echo "arm64: $*" >&2; }

need_binfmt() {
    [ -e /proc/sys/fs/binfmt_misc/register ] ||
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64
    grep -q enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 || {
        say "binfmt_misc has no qemu-aarch64 entry: apt-get install qemu-user-static binfmt-support"
        exit 2
    }
}

# /proc/cpuinfo as an arm64 kernel writes it for a Neoverse N1, one block per host CPU.
fake_cpuinfo() {
    n=$(nproc)
    i=0
    while [ "$i" -lt "$n" ]; do
        printf 'processor\t: %d\nBogoMIPS\t: 50.00\n' "$i"
        printf 'Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid '
        printf 'asimdrdm lrcpc dcpop asimddp ssbs\n'
        printf 'CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n'
        printf 'CPU part\t: 0xd0c\nCPU revision\t: 1\n\n'
        i=$((i + 1))
    done
}

mounted() { grep -q " $1 " /proc/mounts; }

enter() {
    need_binfmt
    mounted "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
    mounted "$ROOT/sys" || mount -t sysfs sys "$ROOT/sys"
    mounted "$ROOT/dev" || mount --bind /dev "$ROOT/dev"
    fake_cpuinfo >"$ROOT/etc/hearth-cpuinfo"
    grep -q " $ROOT/proc/cpuinfo " /proc/mounts || mount --bind "$ROOT/etc/hearth-cpuinfo" "$ROOT/proc/cpuinfo"
    # The host's network set-up: resolver, certificate authorities, pip's configuration.
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
    cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
    [ ! -f /etc/pip.conf ] || cp /etc/pip.conf "$ROOT/etc/pip.conf"
}

leave() {
    for m in proc/cpuinfo proc sys dev; do
        ! mounted "$ROOT/$m" || umount -l "$ROOT/$m"
    done
}

run() {  # run a shell command inside the root
    enter
    trap leave EXIT
    chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/opt/venv/bin:/usr/local/bin:/usr/bin:/bin \
        LANG=C.UTF-8 QEMU_CPU="$QEMU_CPU" HEARTH_CACHE="${HEARTH_ARM64_CACHE:-/root/.cache/hearth}" \
        HEARTH_SMOKE_EXPORT="${HEARTH_SMOKE_EXPORT:-}" HEARTH_SMOKE_TESTS="${HEARTH_SMOKE_TESTS:-1}" \
        /bin/sh -c "$1"
}

build_root() {
    need_binfmt
    if [ -x "$ROOT/usr/bin/python3" ]; then say "$ROOT exists"; return; fi
    say "debootstrap $SUITE arm64 into $ROOT"
    debootstrap --arch=arm64 --variant=minbase \
        --include=python3,python3-venv,python3-dev,ca-certificates,make,git,libgomp1,libportaudio2,procps \
        "$SUITE" "$ROOT" "$MIRROR"
}

setup() {
    say "copying HEAD of $HERE into $ROOT/opt/hearth"
    rm -rf "$ROOT/opt/hearth"
    mkdir -p "$ROOT/opt/hearth"
    git -C "$HERE" archive HEAD | tar -x -C "$ROOT/opt/hearth"
    run 'set -e; [ -x /opt/venv/bin/python ] || python3 -m venv /opt/venv
         cd /opt/hearth && make setup PYTHON=/opt/venv/bin/python'
}

sync() {  # the working tree's tracked and new files, over the installed (editable) copy
    git -C "$HERE" ls-files -co --exclude-standard | (cd "$HERE" && tar -cf - -T -) | tar -x -C "$ROOT/opt/hearth"
}

smoke() {
    run 'cd /opt/hearth && sh scripts/arm64_smoke.sh'
}

runtime() {  # the synced checkout installed without extras: what a board gets from `pip install hearth-tts`
    [ -n "${HEARTH_SMOKE_EXPORT:-}" ] || { say "runtime needs HEARTH_SMOKE_EXPORT (an export inside the root)"; exit 2; }
    run 'set -e; start=$(date +%s)
         [ -x /opt/runtime/bin/python ] || python3 -m venv /opt/runtime
         /opt/runtime/bin/pip install -q /opt/hearth
         echo "arm64: runtime installed in $(($(date +%s) - start)) s; $(du -sh /opt/runtime | cut -f1)" >&2
         ! /opt/runtime/bin/python -c "import torch" 2>/dev/null || { echo "arm64: torch is installed" >&2; exit 1; }
         /opt/runtime/bin/hearth doctor | grep -i torch
         mkdir -p /tmp/hearth-smoke && t=$(date +%s)
         HEARTH_CACHE=/tmp/hearth-runtime-cache /opt/runtime/bin/hearth say "The runtime alone, on arm64." \
             --model "$HEARTH_SMOKE_EXPORT" --seed 1 --out /tmp/hearth-smoke/runtime.wav
         echo "arm64: spoken in $(($(date +%s) - t)) s with no torch (emulated)" >&2'
}

case ${1:-} in
root) build_root ;;
setup) setup ;;
sync) sync ;;
smoke) smoke ;;
runtime) runtime ;;
shell) run "${2:-/bin/bash}" ;;
all)
    start=$(date +%s)
    build_root
    setup
    smoke
    say "all done in $(($(date +%s) - start)) s (emulated: correctness only)"
    ;;
*)
    sed -n '2,19p' "$0" >&2
    exit 2
    ;;
esac
