#!/bin/sh
# Build Hearth's container image and its Home Assistant add-on here as users' tools do, and check
# them (`make image`, `make image-check`, `make addon-check`, ARCH=arm64 for each).
#
#   scripts/image.sh stand-ins  local stand-ins for the public base images, tagged with their public
#                               names: docker.io/library/debian:bookworm-slim and Home Assistant's
#                               ghcr.io/home-assistant/{,ARCH-}base-debian:bookworm (debootstrap; once)
#   scripts/image.sh build      `docker build .` as a user runs it (buildah bud, the Dockerfile as it
#                               is): ghcr.io/hearth-tts/hearth:VERSION and :latest (-arm64 for ARCH=arm64)
#   scripts/image.sh check      that image run: a tiny export served to the wyoming package's client
#                               and the OpenAI SDK, a checkpoint exported on the first start, a
#                               SIGTERM (scripts/image_check.py), then `compose` (amd64)
#   scripts/image.sh compose    `docker compose up` of compose.yaml and compose.wyoming.yaml with
#                               podman-compose, answered by the OpenAI SDK and the wyoming client
#                               (scripts/compose_check.py; runc with lowered rlimits, this sandbox's)
#   scripts/image.sh addon      the add-on as a Supervisor builds and runs it (scripts/addon_check.py)
#   scripts/image.sh all        the four in order
#
# ARCH: amd64 (default on x86-64) or arm64 (qemu-user-static; correctness only). Needs root and
# Debian's debootstrap, buildah and podman (apt-get install debootstrap buildah podman). Nothing is
# pulled from or pushed to a registry: that is what the stand-ins are for. What stands in for what:
#   - a public base image: a Debian 12 root made here with debootstrap, tagged with the base's name
#     for the architecture being built (docker.io/library/debian:bookworm-slim; Home Assistant's
#     base-debian adds bash, curl, jq, tzdata and its environment, as its Dockerfile does);
#   - the package index's certificate: this machine's CA bundle (HEARTH_IMAGE_CA), passed to
#     `docker build .` as the Dockerfile's optional secret "ca", never kept in a layer;
#   - PyPI for the add-on (nothing is published yet): a package index on 127.0.0.1 serving the wheel
#     built from this checkout and its dependencies, named by the build argument HEARTH_PIP_INDEX.
# Images run with `buildah run --isolation chroot` (podman run cannot set rlimits in some sandboxes);
# a container shares the host's network, so its servers are reached on 127.0.0.1.
set -eu
HERE=$(cd "$(dirname "$0")/.." && pwd)
cd "$HERE"
HOST_ARCH=$(dpkg --print-architecture 2>/dev/null || echo amd64)
ARCH=${ARCH:-$HOST_ARCH}
HA_ARCH=$([ "$ARCH" = arm64 ] && echo aarch64 || echo "$ARCH")
MIRROR=${HEARTH_IMAGE_MIRROR:-http://deb.debian.org/debian}
CA=${HEARTH_IMAGE_CA:-/etc/ssl/certs/ca-certificates.crt}
SUFFIX=$([ "$ARCH" = "$HOST_ARCH" ] && echo "" || echo "-$ARCH")
VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' hearth/__init__.py)
IMAGE=ghcr.io/hearth-tts/hearth
# The stand-ins under names of their own; `use_stand_ins` tags them with the public names.
DEBIAN_STAND_IN=localhost/stand-in/debian:bookworm-slim-$ARCH
HA_STAND_IN=localhost/stand-in/home-assistant-base-debian:bookworm-$ARCH
export BUILDAH_ISOLATION=chroot STORAGE_DRIVER="${STORAGE_DRIVER:-vfs}"

say() { echo "image: $*" >&2; }
secs() { echo $(( $(date +%s) - $1 )); }
mb() { podman image inspect "$1" --format '{{.Size}}' | awk '{printf "%d MB", $1/1e6}'; }

need() {
    missing=""
    for tool in debootstrap buildah podman; do command -v $tool >/dev/null || missing="$missing $tool"; done
    [ "$ARCH" = "$HOST_ARCH" ] || [ -x /usr/bin/qemu-aarch64-static ] || missing="$missing qemu-user-static"
    [ -z "$missing" ] || { say "missing:$missing (apt-get install$missing binfmt-support)"; exit 2; }
}

stand_ins() {
    need
    if ! podman image exists "$DEBIAN_STAND_IN"; then
        t0=$(date +%s)
        root=$(mktemp -d /var/tmp/hearth-debian.XXXXXX)
        say "debootstrap bookworm $ARCH (minbase, as debian:bookworm-slim) into $root"
        debootstrap --arch="$ARCH" --variant=minbase bookworm "$root" "$MIRROR" >/dev/null
        rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/* "$root/usr/share/doc" \
            "$root/usr/share/man" "$root/usr/share/locale"
        tar -C "$root" -c . | podman import --arch "$ARCH" --change 'CMD ["bash"]' - "$DEBIAN_STAND_IN" >/dev/null
        rm -rf "$root"
        say "$DEBIAN_STAND_IN made in $(secs "$t0") s: $(mb "$DEBIAN_STAND_IN")"
    fi
    if ! podman image exists "$HA_STAND_IN"; then
        # Home Assistant's base-debian: debian:bookworm-slim with bash, curl, jq, tzdata, xz and CA
        # certificates, its environment and shell (s6-overlay's /init is its entry point there;
        # here a stand-in that runs its arguments, as /init does when no services are defined).
        t0=$(date +%s)
        c=$(buildah from --arch "$ARCH" --pull-never "$DEBIAN_STAND_IN")
        buildah run --isolation chroot "$c" -- sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends bash jq tzdata curl ca-certificates xz-utils >/dev/null && \
            rm -rf /var/lib/apt/lists/* && printf "#!/bin/sh\nexec \"\$@\"\n" > /init && chmod +x /init'
        buildah config --env LANG=C.UTF-8 --env DEBIAN_FRONTEND=noninteractive \
            --env CURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt --shell '/bin/bash -o pipefail -c' \
            --entrypoint '["/init"]' --cmd '' --label io.hass.type=base --label io.hass.base.name=debian "$c"
        buildah commit --quiet --format docker "$c" "$HA_STAND_IN" >/dev/null
        buildah rm "$c" >/dev/null
        say "$HA_STAND_IN made in $(secs "$t0") s: $(mb "$HA_STAND_IN")"
    fi
}

use_stand_ins() {
    stand_ins
    podman tag "$DEBIAN_STAND_IN" docker.io/library/debian:bookworm-slim
    podman tag "$HA_STAND_IN" ghcr.io/home-assistant/base-debian:bookworm \
        "ghcr.io/home-assistant/$HA_ARCH-base-debian:bookworm"
}

build() {
    use_stand_ins
    t0=$(date +%s)
    say "docker build . ($ARCH): $IMAGE:$VERSION$SUFFIX"
    secret=""
    [ -s "$CA" ] && secret="--secret id=ca,src=$CA"
    # shellcheck disable=SC2086
    buildah bud --quiet --isolation chroot --network host --format docker --arch "$ARCH" --layers=false \
        $secret -t "$IMAGE:$VERSION$SUFFIX" -t "$IMAGE:latest$SUFFIX" . >/dev/null
    compressed=$(podman save "$IMAGE:$VERSION$SUFFIX" 2>/dev/null | gzip -1 | wc -c)
    say "$IMAGE:$VERSION$SUFFIX built in $(secs "$t0") s: $(mb "$IMAGE:$VERSION$SUFFIX") unpacked," \
        "$(echo "$compressed" | awk '{printf "%d MB", $1/1e6}') compressed (gzip -1 of podman save)"
}

check() {
    podman image exists "$IMAGE:$VERSION$SUFFIX" || build
    ${PYTHON:-python3} scripts/image_check.py "$IMAGE:$VERSION$SUFFIX"
    [ "$ARCH" != "$HOST_ARCH" ] || compose
}

compose() {
    podman image exists "$IMAGE:$VERSION$SUFFIX" || build
    ${PYTHON:-python3} scripts/compose_check.py "$VERSION"
}

addon() {
    use_stand_ins
    ARCH=$ARCH ${PYTHON:-python3} scripts/addon_check.py
}

case ${1:-all} in
stand-ins) stand_ins ;;
build) build ;;
check) check ;;
compose) compose ;;
addon) addon ;;
all) start=$(date +%s); stand_ins; build; check; addon; say "all done in $(secs "$start") s" ;;
*) sed -n '2,30p' "$0" >&2; exit 2 ;;
esac
