"""The Home Assistant add-on, installed as a Supervisor installs it and run as it runs it
(`scripts/image.sh addon`, `make addon-check`).

1. The repository as the Supervisor reads a clone of it (tests/supervisor.py): repository.yaml at
   the root, the add-on found by its config.yaml, the build's inputs from build.yaml and config.yaml.
2. The wheel built from this checkout's tracked files, served with its dependencies (downloaded for
   the add-on's Python and architecture) by a package index on 127.0.0.1: PyPI's stand-in until a
   release is published. Its address is the build argument HEARTH_PIP_INDEX, which only tests set.
3. The add-on built with the Supervisor's command and arguments (buildah bud, the add-on's folder as
   the context), on the stand-in for Home Assistant's base tagged with the base's real name
   (`scripts/image.sh stand-ins`). Not `--pull`: nothing can be pulled here.
4. The built add-on run as the Supervisor runs it: as root, /data its own with the options.json it
   writes, SUPERVISOR_TOKEN set and the host "supervisor" answering the discovery API (a stand-in on
   127.0.0.1:80): a bad option refused with a message in the log and exit 2; good options served to
   the wyoming package's client (info, then audio) from an export under /share, the server running
   as the user hearth, the discovery announced with the token; SIGTERM stops it.

Prints each step with its time and a summary; exits non-zero on the first failure.
ARCH: amd64 (default) or arm64 (qemu-user; correctness only).

    python scripts/addon_check.py                 all of the above
    python scripts/addon_check.py --index DIR     only step 2's index, written to DIR (for a forge's CI,
                                                  which builds with docker itself)
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from containers import (
    WORK,
    Container,
    buildah,
    describes,
    say,
    server_pids,
    summary,
    tiny_export,
    wait_ready,
    wyoming_speaks,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import supervisor  # noqa: E402 (tests/supervisor.py: the Supervisor's rules)

ARCH = os.environ.get("ARCH", "amd64")
HA_ARCH = {"amd64": "amd64", "arm64": "aarch64"}[ARCH]
PIP_PLATFORM = {"amd64": "x86_64", "arm64": "aarch64"}[ARCH]
ADDON_PYTHON = "3.11"  # Debian 12's python3, which the add-on installs on Home Assistant's base


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_from_checkout(out: Path) -> Path:
    """`python -m build --wheel` on a copy of the tracked files (as a clone holds them, with this
    working tree's contents)."""
    src = supervisor.clone(ROOT, Path(tempfile.mkdtemp(prefix="hearth-src-", dir=WORK)))
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(src)], check=True,
                   capture_output=True)
    shutil.rmtree(src)
    (wheel,) = out.glob("hearth_tts-*.whl")
    return wheel


def package_index(wheel: Path, version: str, out: Path) -> Path:
    """A PEP 503 index in `out`/simple of the wheel and every dependency of `hearth-tts[wyoming]` for
    the add-on's Python and architecture (downloaded from PyPI once, kept between runs)."""
    files = WORK / f"index-files-{ARCH}"
    files.mkdir(parents=True, exist_ok=True)
    for old in files.glob("hearth_tts-*"):
        old.unlink()
    shutil.copy2(wheel, files / wheel.name)
    # Every manylinux tag Debian 12's glibc 2.36 runs (pip does not widen an explicit --platform).
    tags = [f"manylinux_2_{minor}_{PIP_PLATFORM}" for minor in range(36, 16, -1)] + [
        f"manylinux{legacy}_{PIP_PLATFORM}" for legacy in ("2014", "2010", "1")]
    platforms = [x for tag in tags for x in ("--platform", tag)]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--dest", str(files), "--find-links", str(files),
                    "--only-binary=:all:", *platforms, "--python-version", ADDON_PYTHON, "--implementation", "cp",
                    f"hearth-tts[wyoming]=={version}"], check=True)
    index = out / "simple"
    shutil.rmtree(index, ignore_errors=True)
    projects: dict[str, list[Path]] = {}
    for f in files.iterdir():
        projects.setdefault(normalize(f.name.split("-")[0]), []).append(f)
    for project, dists in projects.items():
        (index / project).mkdir(parents=True)
        links = []
        for dist in dists:
            (index / project / dist.name).symlink_to(dist)
            digest = hashlib.sha256(dist.read_bytes()).hexdigest()
            links.append(f'<a href="{html.escape(dist.name)}#sha256={digest}">{html.escape(dist.name)}</a><br>')
        (index / project / "index.html").write_text("<!DOCTYPE html><html><body>\n" + "\n".join(links)
                                                    + "\n</body></html>\n", encoding="utf-8")
    (index / "index.html").write_text("".join(f'<a href="{p}/">{p}</a><br>\n' for p in sorted(projects)),
                                      encoding="utf-8")
    return index


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def serve_folder(folder: Path) -> tuple[http.server.ThreadingHTTPServer, int]:
    handler = lambda *a, **kw: _Quiet(*a, directory=str(folder), **kw)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


class Discovery(http.server.BaseHTTPRequestHandler):
    """The Supervisor's discovery API, as the add-on sees it at http://supervisor/discovery."""

    announced: list[tuple[str, dict]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        Discovery.announced.append((self.headers.get("Authorization", ""), body))
        reply = json.dumps({"result": "ok", "data": {"uuid": "0" * 32}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


def main(argv: list[str]) -> int:
    results: list[str] = []
    t_all = time.monotonic()
    WORK.mkdir(parents=True, exist_ok=True)
    if argv[:1] == ["--index"]:
        version = supervisor.addon(ROOT / "homeassistant" / "hearth" / "config.yaml")["version"]
        index = package_index(wheel_from_checkout(WORK / "dist"), version, Path(argv[1]))
        say(f"{index}: {len(list(index.iterdir())) - 1} projects")
        return 0

    # 1. The repository as the Supervisor reads it.
    info = supervisor.repository(ROOT)
    configs = supervisor.addon_configs(ROOT, supervisor.clone_files(ROOT))
    assert [c.relative_to(ROOT).as_posix() for c in configs] == ["homeassistant/hearth/config.yaml"], configs
    config = supervisor.addon(configs[0])
    plan = supervisor.build_plan(configs[0], HA_ARCH)
    version = config["version"]
    results.append(f"repository {info['name']!r} accepted; add-on {config['slug']} {version} found at "
                   f"{configs[0].parent.relative_to(ROOT)}; build: {plan.dockerfile.name}, BUILD_FROM {plan.base}")

    # 2. The wheel, and the package index standing in for PyPI.
    t0 = time.monotonic()
    wheel = wheel_from_checkout(WORK / "dist")
    index = package_index(wheel, version, WORK / f"index-{ARCH}")
    index_server, index_port = serve_folder(index.parent)
    results.append(f"{wheel.name} built from the checkout and served with {len(list(index.iterdir())) - 1} "
                   f"projects on 127.0.0.1:{index_port} in {time.monotonic() - t0:.0f} s")

    # 3. The Supervisor's build.
    tag = f"localhost/{HA_ARCH}-addon-{config['slug']}:{version}"
    command = plan.command(tag)
    say("the Supervisor would run: " + " ".join(command))
    args = ["buildah", "bud", "--isolation", "chroot", "--network", "host", "--format", "docker", "--layers=false",
            "--arch", ARCH, "--tag", tag, "--file", plan.dockerfile.name,
            *[x for k, v in plan.labels.items() for x in ("--label", f"{k}={v}")],
            *[x for k, v in plan.args.items() for x in ("--build-arg", f"{k}={v}")],
            "--build-arg", f"HEARTH_PIP_INDEX=http://127.0.0.1:{index_port}/simple/", "."]
    t0 = time.monotonic()
    built = subprocess.run(args, cwd=plan.folder, capture_output=True, text=True, check=False,
                           env={**os.environ, "BUILDAH_ISOLATION": "chroot",
                                "STORAGE_DRIVER": os.environ.get("STORAGE_DRIVER", "vfs")})
    index_server.shutdown()
    if built.returncode != 0:
        raise AssertionError(f"the add-on's build failed:\n{built.stdout[-4000:]}\n{built.stderr[-4000:]}")
    size = subprocess.run(["podman", "image", "inspect", tag, "--format", "{{.Size}}"], capture_output=True,
                          text=True, check=True).stdout.strip()
    results.append(f"built {tag} in {time.monotonic() - t0:.0f} s: {int(size) / 1e6:.0f} MB unpacked")

    # 4. Run as the Supervisor runs it.
    export = tiny_export()
    data = Path(tempfile.mkdtemp(prefix="addon-data-", dir=WORK))
    share = Path(tempfile.mkdtemp(prefix="addon-share-", dir=WORK))
    share.chmod(0o755)  # as the Supervisor's /share: the add-on's user reads what is put there
    (share / "hearth").mkdir()
    shutil.copytree(export, share / "hearth" / "tiny")
    os.chown(data, 0, 0)
    options = data / "options.json"
    mounts = {data: "/data", share: "/share"}
    env = {"SUPERVISOR_TOKEN": "supervisor-token-1", "HEARTH_READY_TIMEOUT": "300"}
    discovery = http.server.ThreadingHTTPServer(("127.0.0.1", 80), Discovery)
    threading.Thread(target=discovery.serve_forever, daemon=True).start()
    try:
        c = Container(tag, mounts, env, user="0:0", hosts={"supervisor": "127.0.0.1"})
        try:
            options.write_text(json.dumps({**config["options"], "preset": "fastest", "speed": 9}), encoding="utf-8")
            bad = c.run(["/opt/hearth/bin/hearth-addon"])
            assert bad.returncode == 2 and "preset 'fastest'" in bad.stderr and "speed 9" in bad.stderr, bad
            assert "Traceback" not in bad.stderr, bad.stderr
            options.write_text(json.dumps({**config["options"], "model": "/share/hearth/tiny", "voice": "aiden"}),
                               encoding="utf-8")
            c.start(["/opt/hearth/bin/hearth-addon"], WORK / "addon.log")
            ready = wait_ready(lambda: describes(10200), c.proc, c.log)
            voices, audio = asyncio.run(wyoming_speaks(10200))
            assert voices > 0 and audio > 0, (voices, audio)
            server = server_pids(c.proc.pid)[-1]
            uid = next(line.split()[1] for line in Path(f"/proc/{server}/status").read_text(encoding="utf-8")
                       .splitlines() if line.startswith("Uid:"))
            assert uid == "1000" and data.stat().st_uid == 1000, (uid, data.stat().st_uid)
            deadline = time.monotonic() + 30
            while not Discovery.announced and time.monotonic() < deadline:
                time.sleep(0.2)
            assert Discovery.announced, "the add-on did not announce itself to the Supervisor"
            token, body = Discovery.announced[0]
            assert token == "Bearer supervisor-token-1" and body["service"] == "wyoming", (token, body)
            assert body["config"]["uri"].endswith(":10200"), body
            stopped = c.stop()
            assert stopped < 10, stopped
        finally:
            c.remove()
    finally:
        discovery.shutdown()
    results.append(f"a bad options.json refused (exit 2: {bad.stderr.strip()[:150]}...)")
    results.append(f"good options: ready in {ready:.1f} s, {voices} voices and {audio} bytes of audio from the "
                   f"wyoming client, the server as uid {uid} with /data handed over, discovery announced "
                   f"{body['config']['uri']} with the Supervisor's token, stopped {stopped:.1f} s after SIGTERM")
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(share, ignore_errors=True)
    buildah("rmi", tag, check=False)
    return summary(results, t_all)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
