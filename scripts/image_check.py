"""Run Hearth's image as a user would and check it with the clients people use (`scripts/image.sh check`).

On this machine, with `buildah run --isolation chroot` (the container shares the host's network):
a tiny checkpoint is exported here and mounted read-only; the Wyoming server in the container
answers the wyoming package's client (`info`, then audio), the OpenAI server answers the OpenAI SDK,
the image's health check passes on both, SIGTERM stops each within 10 s; a checkpoint is exported on
the first start and read on the second. Prints each step with its time, and a summary; exits
non-zero on the first failure. HEARTH_IMAGE_MODEL: a bigger export to measure memory with (in the
container and outside it). The add-on is checked by scripts/addon_check.py.

    python scripts/image_check.py [IMAGE]     (default ghcr.io/hearth-tts/hearth:latest)
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from containers import (
    WORK,
    Container,
    describes,
    free_port,
    healthy,
    healthy_then_stopped,
    rss_mb,
    server_pids,
    summary,
    tiny_export,
    wait_ready,
    wyoming_speaks,
)

IMAGE = sys.argv[1] if len(sys.argv) > 1 else "ghcr.io/hearth-tts/hearth:latest"


def main() -> int:
    results: list[str] = []
    t_all = time.monotonic()
    WORK.mkdir(parents=True, exist_ok=True)
    export = tiny_export()
    data = Path(tempfile.mkdtemp(prefix="data-", dir=WORK))
    os.chown(data, 1000, 1000)  # the image's user "hearth"
    mounts = {export: "/models/tiny:ro", data: "/data"}

    # 1. The Wyoming server, from a mounted export; the wyoming package's client.
    port = free_port()
    c = Container(IMAGE, mounts, {"HEARTH_MODEL": "/models/tiny", "HEARTH_PORT": str(port)})
    try:
        who = c.run(["id", "-un"]).stdout.strip()
        assert who == "hearth", f"the image runs as {who!r}, not as the user hearth"
        assert c.run(["sh", "-c", "command -v hearth"]).stdout.strip() == "/opt/hearth/bin/hearth"
        c.start(["hearth-container", "wyoming"], WORK / "wyoming.log")
        ready = wait_ready(lambda: describes(port), c.proc, c.log)
        voices, audio = asyncio.run(wyoming_speaks(port))
        assert voices > 0 and audio > 0, (voices, audio)
        stopped = healthy_then_stopped(c)
        results.append(f"wyoming: ready in {ready:.1f} s, info with {voices} voices, {audio} bytes of audio from "
                       f"the wyoming client, health check 0, stopped {stopped:.1f} s after SIGTERM")
    finally:
        c.remove()

    # 2. The OpenAI server; the OpenAI SDK, with the API key from the environment.
    import openai

    port = free_port()
    c = Container(IMAGE, mounts, {"HEARTH_MODEL": "/models/tiny", "HEARTH_PORT": str(port), "HEARTH_API_KEY": "k-test"})
    try:
        c.start(["hearth-container", "serve"], WORK / "serve.log")
        ready = wait_ready(lambda: healthy(port), c.proc, c.log)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k-test")
        speech = client.audio.speech.create(model="tts-1", voice="ryan", input="The container speaks.",
                                            response_format="wav")
        assert speech.content[:4] == b"RIFF" and len(speech.content) > 44
        try:
            openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="wrong").audio.speech.create(
                model="tts-1", voice="ryan", input="No.")
            raise AssertionError("a wrong API key was served")
        except openai.AuthenticationError:
            pass
        stopped = healthy_then_stopped(c)
        results.append(f"serve: ready in {ready:.1f} s, {len(speech.content)} bytes of WAV from the OpenAI SDK, "
                       f"a wrong key refused (401), health check 0, stopped {stopped:.1f} s after SIGTERM")
    finally:
        c.remove()

    # 3. A checkpoint (not an export) on the first start: the converter installed into the volume for
    # that start (torch from this machine's wheels when HEARTH_IMAGE_WHEELS names them, else the index;
    # the package index reached with this machine's CA bundle, mounted for the run, not in the image),
    # the export written into /data/exports, the converter removed; the second start reads the export.
    if os.environ.get("HEARTH_IMAGE_CONVERT", "1") == "1":
        ckpt = WORK / "tiny-checkpoint"
        wheels = os.environ.get("HEARTH_IMAGE_WHEELS", "/opt/wheels")
        convert_mounts = {**mounts, ckpt: "/models/ckpt:ro", Path(os.environ.get("HEARTH_IMAGE_CA",
                          "/etc/ssl/certs/ca-certificates.crt")): "/run/host-ca.crt:ro"}
        convert_env = {"HEARTH_MODEL": "/models/ckpt", "PIP_CERT": "/run/host-ca.crt"}
        if Path(wheels).is_dir():
            convert_mounts[Path(wheels)] = "/opt/wheels:ro"
            convert_env |= {"PIP_FIND_LINKS": "/opt/wheels", "HEARTH_TORCH_INDEX": ""}
        starts = []
        for start in ("first", "second"):
            port = free_port()
            c = Container(IMAGE, convert_mounts, {**convert_env, "HEARTH_PORT": str(port)})
            try:
                c.start(["hearth-container", "wyoming"], WORK / f"convert-{start}.log")
                t0 = time.monotonic()
                wait_ready(lambda p=port: describes(p), c.proc, c.log, timeout=1800)
                _, audio = asyncio.run(wyoming_speaks(port))  # (answered once the model has loaded)
                starts.append(f"{start} start to first audio {time.monotonic() - t0:.0f} s")
                assert audio > 0
                c.stop()
            finally:
                c.remove()
        exports = list((data / "exports").iterdir())
        assert [e.name for e in exports] == ["models-ckpt-default"], exports
        assert not (data / "converter").exists(), "the converter was left in the volume"
        assert "exported on an earlier start" in (WORK / "convert-second.log").read_text(encoding='utf-8')
        results.append(f"a checkpoint: {', '.join(starts)} (exported once into /data/exports, the converter "
                       f"removed; {sum(f.stat().st_size for f in exports[0].rglob('*') if f.is_file()) / 1e6:.0f} MB)")

    # 4. Memory: a bigger export served in the container and outside it, after one synthesis each.
    model = os.environ.get("HEARTH_IMAGE_MODEL")
    if model:
        figures = []
        for where in ("container", "host"):
            port = free_port()
            log = WORK / f"memory-{where}.log"
            if where == "container":
                c = Container(IMAGE, {Path(model): "/models/big:ro", data: "/data"},
                              {"HEARTH_MODEL": "/models/big", "HEARTH_PORT": str(port)})
                c.start(["hearth-container", "wyoming"], log)
                proc = c.proc
            else:
                proc = subprocess.Popen([sys.executable, "-m", "hearth.cli", "wyoming", "--uri",
                                         f"tcp://127.0.0.1:{port}", "--model", model],
                                        stderr=log.open("w", encoding="utf-8"), start_new_session=True)
            try:
                t0 = time.monotonic()
                wait_ready(lambda p=port: describes(p), proc, log, timeout=600)
                asyncio.run(wyoming_speaks(port))  # (answered once the model has loaded)
                figures.append(f"{where} {rss_mb(server_pids(proc.pid)[-1]):.0f} MB (start to the first synthesis "
                               f"done: {time.monotonic() - t0:.1f} s)")
            finally:
                if where == "container":
                    c.stop()
                    c.remove()
                else:
                    proc.terminate()
                    proc.wait(timeout=20)
        results.append(f"memory of {model} after one synthesis: " + ", ".join(figures))

    shutil.rmtree(data, ignore_errors=True)
    return summary(results, t_all)


if __name__ == "__main__":
    raise SystemExit(main())
