# Hearth's server image: `hearth wyoming` (Home Assistant) and `hearth serve` (OpenAI HTTP), no torch.
#
#   docker build -t hearth .          (or podman build; the release publishes ghcr.io/hearth-tts/hearth)
#   docker run -d -p 10200:10200 -v hearth-data:/data hearth                                  Wyoming
#   docker run -d -p 8000:8000 -v hearth-data:/data -e HEARTH_API_KEY=... hearth serve         OpenAI HTTP
#
# Stages:
#   base     Debian 12 (slim) with Debian's Python 3.11 and OpenMP
#   build    a venv in /opt/hearth with this checkout and its serve and wyoming extras from PyPI
#   runtime  the base with that venv copied in, slimmed (no pip, no tests, no caches, no OpenVINO
#            devices or frontends a CPU server never opens), run as the user "hearth"
#
# Models live in the volume /data: HEARTH_MODEL names a hub id, a checkpoint or an export
# (`hearth export`). A hub checkpoint is exported once into /data/exports on the first start (see
# hearth/tools/container.py) and read from there on every later start; an export needs no network.
#
# Build arguments: BASE, another Debian 12 image. A machine whose TLS to the package index goes
# through its own certificate authority passes that bundle as the optional build secret "ca"
# (`--secret id=ca,src=/etc/ssl/certs/ca-certificates.crt`): pip uses it for that one step, and it is
# never stored in a layer. Without the secret, pip uses its own certificates.
ARG BASE=docker.io/library/debian:bookworm-slim

FROM ${BASE} AS base
RUN apt-get update && \
    apt-get install -y --no-install-recommends python3 python3-venv libgomp1 ca-certificates && \
    rm -rf /var/lib/apt/lists/* /var/cache/apt /usr/share/doc /usr/share/man /usr/share/locale

FROM base AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
COPY LICENSE pyproject.toml README.md /src/
COPY hearth /src/hearth
RUN --mount=type=secret,id=ca,required=false \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi && \
    python3 -m venv /opt/hearth && \
    /opt/hearth/bin/pip install --no-compile '/src[serve,wyoming]' && \
    /opt/hearth/bin/pip uninstall -y pip && \
    /opt/hearth/bin/hearth-container slim && \
    /opt/hearth/bin/hearth --version

FROM base AS runtime
COPY --from=build /opt/hearth /opt/hearth
RUN useradd --uid 1000 --no-create-home --home-dir /data --shell /usr/sbin/nologin hearth && \
    mkdir -p /data && chown hearth:hearth /data
ENV PATH=/opt/hearth/bin:$PATH \
    HEARTH_CACHE=/data/cache \
    HF_HOME=/data/huggingface \
    HEARTH_MODEL=Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice \
    PYTHONUNBUFFERED=1
USER hearth
WORKDIR /data
# (No VOLUME: run it with one, -v hearth-data:/data. Declared, `buildah run` gives the path a
# volume of its own over a bind mount, and what the container writes there never reaches the host.)
EXPOSE 10200 8000
# A Wyoming `describe` answered (or, for `hearth-container serve`, /health): see hearth-container.
HEALTHCHECK --interval=30s --timeout=10s --start-period=600s CMD ["hearth-container", "health"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["hearth-container"]
CMD ["wyoming"]
