#!/bin/sh
# Build Hearth's container image here, from a Debian base made with debootstrap, and check it
# (`make image`, `make image ARCH=arm64`, `make image-check`).
#
#   scripts/image.sh base    the base image localhost/hearth-base:bookworm[-arm64] (debootstrap; once)
#   scripts/image.sh build   the Containerfile built from it: localhost/hearth:latest[-arm64]
#   scripts/image.sh check   the image run: a tiny export inside it served to the wyoming package's
#                            client and to the OpenAI SDK, the add-on's run script with good and bad
#                            options, a SIGTERM; sizes and times printed
#   scripts/image.sh all     the three in order
#
# ARCH: amd64 (default on x86-64) or arm64 (qemu-user-static; correctness only). Needs root and
# Debian's debootstrap, buildah and podman (apt-get install debootstrap buildah podman). Nothing is
# pulled from or pushed to a registry. The build reaches the package index with this machine's CA
# bundle, given to the one step that needs it as a build secret, never kept in a layer. Images are
# run with `buildah run --isolation chroot` (podman run cannot set rlimits in some sandboxes); the
# container shares the host's network, so its servers are reached on 127.0.0.1.
set -eu
HERE=$(cd "$(dirname "$0")/.." && pwd)
cd "$HERE"
HOST_ARCH=$(dpkg --print-architecture 2>/dev/null || echo amd64)
ARCH=${ARCH:-$HOST_ARCH}
SUITE=${HEARTH_IMAGE_SUITE:-bookworm}
MIRROR=${HEARTH_IMAGE_MIRROR:-http://deb.debian.org/debian}
CA=${HEARTH_IMAGE_CA:-/etc/ssl/certs/ca-certificates.crt}
SUFFIX=$([ "$ARCH" = "$HOST_ARCH" ] && echo "" || echo "-$ARCH")
BASE=localhost/hearth-base:$SUITE$SUFFIX
IMAGE=localhost/hearth:latest$SUFFIX
export BUILDAH_ISOLATION=chroot STORAGE_DRIVER=${STORAGE_DRIVER:-vfs}

say() { echo "image: $*" >&2; }
secs() { echo $(( $(date +%s) - $1 )); }

need() {
    missing=""
    for tool in debootstrap buildah podman; do command -v $tool >/dev/null || missing="$missing $tool"; done
    [ "$ARCH" = "$HOST_ARCH" ] || [ -x /usr/bin/qemu-aarch64-static ] || missing="$missing qemu-user-static"
    [ -z "$missing" ] || { say "missing:$missing (apt-get install$missing binfmt-support)"; exit 2; }
}

base() {
    need
    if podman image exists "$BASE"; then say "$BASE exists"; return; fi
    t0=$(date +%s)
    root=$(mktemp -d /var/tmp/hearth-base.XXXXXX)
    say "debootstrap $SUITE $ARCH (minbase: python3, venv, CA certificates, OpenMP) into $root"
    debootstrap --arch="$ARCH" --variant=minbase --include=python3,python3-venv,ca-certificates,libgomp1 \
        "$SUITE" "$root" "$MIRROR" >/dev/null
    rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/* "$root/usr/share/doc" \
        "$root/usr/share/man" "$root/usr/share/locale"
    tar -C "$root" -c . | podman import --arch "$ARCH" - "$BASE" >/dev/null
    rm -rf "$root"
    say "$BASE made in $(secs "$t0") s: $(podman image inspect "$BASE" --format '{{.Size}}' | awk '{printf "%d MB", $1/1e6}')"
}

build() {
    need
    podman image exists "$BASE" || base
    t0=$(date +%s)
    say "building $IMAGE from $BASE"
    buildah bud --quiet --isolation chroot --format docker --arch "$ARCH" --layers=false --build-arg "BASE=$BASE" \
        --secret "id=ca,src=$CA" -f Containerfile -t "$IMAGE" . >/dev/null
    size=$(podman image inspect "$IMAGE" --format '{{.Size}}')
    compressed=$(podman save "$IMAGE" 2>/dev/null | gzip -1 | wc -c)
    say "$IMAGE built in $(secs "$t0") s: $(echo "$size" | awk '{printf "%d MB", $1/1e6}') unpacked," \
        "$(echo "$compressed" | awk '{printf "%d MB", $1/1e6}') compressed (gzip -1 of podman save)"
}

check() {
    podman image exists "$IMAGE" || build
    ${PYTHON:-python3} scripts/image_check.py "$IMAGE"
}

case ${1:-all} in
base) base ;;
build) build ;;
check) check ;;
all) start=$(date +%s); base; build; check; say "all done in $(secs "$start") s" ;;
*) sed -n '2,18p' "$0" >&2; exit 2 ;;
esac
