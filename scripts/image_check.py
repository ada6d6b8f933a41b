"""Run Hearth's image as a user would and check it with the clients people use (`scripts/image.sh check`).

On this machine, with `buildah run --isolation chroot` (the container shares the host's network):
a tiny checkpoint is exported here and mounted read-only; the Wyoming server in the container
answers the wyoming package's client (`info`, then audio), the OpenAI server answers the OpenAI SDK,
the image's health check passes on both, SIGTERM stops each within 10 s, the add-on's run script
starts from an options.json and refuses a bad one with a message. Prints each step with its time,
and a summary; exits non-zero on the first failure. HEARTH_IMAGE_MODEL: a bigger export to measure
memory with (in the container and outside it).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMAGE = sys.argv[1] if len(sys.argv) > 1 else "localhost/hearth:latest"
WORK = Path(os.environ.get("HEARTH_IMAGE_WORK", "/var/tmp/hearth-image-check"))
ENV = {**os.environ, "BUILDAH_ISOLATION": "chroot", "STORAGE_DRIVER": os.environ.get("STORAGE_DRIVER", "vfs")}


def say(message: str) -> None:
    print(f"image check: {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def buildah(*args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["buildah", *args], env=ENV, check=check, text=True, capture_output=True, **kwargs)


class Container:
    """One working container of the image, and a process run in it (`buildah run`)."""

    def __init__(self, mounts: dict[Path, str], env: dict[str, str], user: str | None = None):
        self.name = buildah("from", "--pull-never", IMAGE).stdout.strip()
        self.mounts, self.env, self.user = mounts, env, user
        self.proc: subprocess.Popen | None = None

    def _args(self, command: list[str]) -> list[str]:
        if EMULATED:
            return self._emulated(command)
        args = ["buildah", "run", "--isolation", "chroot", *(["--user", self.user] if self.user else [])]
        for host, inside in self.mounts.items():
            args += ["-v", f"{host}:{inside}"]
        for key, value in self.env.items():
            args += ["--env", f"{key}={value}"]
        return [*args, self.name, "--", *command]

    def _emulated(self, command: list[str]) -> list[str]:
        """Another architecture's image (qemu-user), run as scripts/arm64.sh runs its root: in a mount
        namespace of its own, /proc with an ARM cpuinfo over the host's x86 one (ONNX Runtime and
        torch crash on that; `buildah run` mounts /proc over any volume), the image's environment, its
        user, on the host's network. qemu's default core has SME, which torch does not survive."""
        root = buildah("mount", self.name).stdout.strip()
        config = json.loads(subprocess.run(["podman", "image", "inspect", IMAGE, "--format", "{{json .Config}}"],
                                           env=ENV, capture_output=True, text=True, check=True).stdout)
        env = [*config.get("Env", []), *(f"{k}={v}" for k, v in self.env.items()),
               f"QEMU_CPU={os.environ.get('QEMU_CPU', 'neoverse-n1')}", "HOME=/data"]
        lines = ["set -e", f"R={shlex.quote(root)}", 'mount -t proc proc "$R/proc"',
                 f'mount --bind {shlex.quote(str(fake_cpuinfo()))} "$R/proc/cpuinfo"', 'mount --bind /dev "$R/dev"',
                 'cp /etc/resolv.conf "$R/etc/resolv.conf"']
        for host, inside in self.mounts.items():
            target, _, mode = inside.partition(":")
            kind = "-d" if Path(host).is_dir() else "-f"
            lines.append(f'[ {kind} "$R{target}" ] || {{ mkdir -p "$R{target}" 2>/dev/null || touch "$R{target}"; }}')
            if kind == "-f":
                lines[-1] = f'mkdir -p "$(dirname "$R{target}")"; [ -e "$R{target}" ] || touch "$R{target}"'
            lines.append(f'mount --bind {shlex.quote(str(host))} "$R{target}"')
            if mode == "ro":
                lines.append(f'mount -o remount,bind,ro "$R{target}"')
        user = config.get("User") or "root"
        inner = "cd /data && exec " + " ".join(shlex.quote(c) for c in command)
        lines.append(f'cd "$R"; exec chroot "$R" /usr/bin/env -i {" ".join(shlex.quote(e) for e in env)} '
                     f'setpriv --reuid={user} --regid={user} --init-groups sh -c {shlex.quote(inner)}')
        return ["unshare", "--mount", "--fork", "sh", "-c", "\n".join(lines)]

    def run(self, command: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(self._args(command), env=ENV, text=True, capture_output=True, timeout=timeout,
                              check=False)

    def start(self, command: list[str], log: Path) -> None:
        self.log = log
        self.proc = subprocess.Popen(self._args(command), env=ENV, stdout=subprocess.DEVNULL,
                                     stderr=log.open("w"), start_new_session=True)

    def stop(self) -> float:
        """SIGTERM to the server; seconds until it was gone."""
        assert self.proc is not None
        t0 = time.monotonic()
        for pid in server_pids(self.proc.pid):
            os.kill(pid, 15)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            logged = self.log.read_text(encoding="utf-8")[-2000:]
            raise AssertionError(f"not stopped 15 s after SIGTERM: {logged}") from None
        return time.monotonic() - t0

    def remove(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
        if EMULATED:
            buildah("umount", self.name, check=False)
        buildah("rm", self.name, check=False)


def _image_arch() -> str:
    out = subprocess.run(["podman", "image", "inspect", IMAGE, "--format", "{{.Architecture}}"], env=ENV,
                         capture_output=True, text=True, check=False).stdout.strip()
    return out or "amd64"


EMULATED = _image_arch() != ("arm64" if os.uname().machine == "aarch64" else "amd64")


def fake_cpuinfo() -> Path:
    """/proc/cpuinfo as an arm64 kernel writes it for a Neoverse N1, one block per host CPU."""
    path = WORK / "arm64-cpuinfo"
    block = ("processor\t: {i}\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics "
             "fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\nCPU implementer\t: 0x41\nCPU architecture: 8\n"
             "CPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n")
    path.write_text("".join(block.format(i=i) for i in range(os.cpu_count() or 1)), encoding="utf-8")
    return path


def server_pids(root: int) -> list[int]:
    """The processes under `root` (buildah run, then the container's): the innermost hearth ones."""
    children: dict[int, list[int]] = {}
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text(encoding='utf-8').rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(status.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"hearth" in cmd and b"buildah" not in cmd:
            found.append(pid)
        todo += children.get(pid, [])
    return found[-1:] or [root]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text(encoding='utf-8').splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def wyoming_speaks(port: int) -> tuple[int, int]:
    """(voices in `info`, bytes of audio) from the wyoming package's own client."""
    from wyoming.audio import AudioChunk, AudioStop
    from wyoming.client import AsyncTcpClient
    from wyoming.info import Describe, Info
    from wyoming.tts import Synthesize, SynthesizeVoice

    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Describe().event())
        while not Info.is_type((event := await client.read_event()).type):
            pass
        voices = len(Info.from_event(event).tts[0].voices)
        synthesize = Synthesize(text="Hello from the container.", voice=SynthesizeVoice(name="ryan"))
        await client.write_event(synthesize.event())
        audio = 0
        while not AudioStop.is_type((event := await client.read_event()).type):
            if AudioChunk.is_type(event.type):
                audio += len(AudioChunk.from_event(event).audio)
    return voices, audio


def wait_ready(check, proc: subprocess.Popen, log: Path, timeout: float = 300) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            raise AssertionError(f"the container exited ({proc.returncode}): {log.read_text(encoding='utf-8')[-3000:]}")
        try:
            if check():
                return time.monotonic() - t0
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"not ready in {timeout:.0f} s: {log.read_text(encoding='utf-8')[-3000:]}")


def describes(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(b'{"type": "describe"}\n')
        s.settimeout(5)
        return b'"info"' in s.recv(65536)


def healthy(port: int) -> bool:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
        return r.status == 200


def healthy_then_stopped(c: Container) -> float:
    """The image's health check passes on `c`'s server, and SIGTERM stops it within 10 s: the seconds."""
    health = c.run(["hearth-container", "health"])
    assert health.returncode == 0, health
    stopped = c.stop()
    assert stopped < 10, stopped
    return stopped


def tiny_export() -> Path:
    out = WORK / "tiny-export"
    if (out / "hearth-export.json").is_file():
        return out
    ckpt = WORK / "tiny-checkpoint"
    shutil.rmtree(ckpt, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "hearth.tools.random_checkpoint", str(ckpt), "--size", "tiny"], check=True)
    subprocess.run([sys.executable, "-m", "hearth.cli", "export", str(ckpt), str(out)], check=True)
    return out


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
    c = Container(mounts, {"HEARTH_MODEL": "/models/tiny", "HEARTH_PORT": str(port)})
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
    c = Container(mounts, {"HEARTH_MODEL": "/models/tiny", "HEARTH_PORT": str(port), "HEARTH_API_KEY": "k-test"})
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

    # 3. The add-on's run script: a bad options.json refused with a message, a good one served.
    port = 10200
    opts = data / "options.json"
    c = Container(mounts, {})
    try:
        bad_options = {"model": "/models/nowhere", "preset": "fastest", "speed": 9, "voice": ""}
        opts.write_text(json.dumps(bad_options), encoding="utf-8")
        bad = c.run(["hearth-addon"])
        assert bad.returncode == 2 and "preset 'fastest'" in bad.stderr and "speed 9" in bad.stderr, bad
        assert "Traceback" not in bad.stderr, bad.stderr
        opts.write_text(json.dumps({"model": "/models/tiny", "preset": "default", "voice": "aiden",
                                    "language": "en", "speed": 1.0, "playback": "eager"}), encoding="utf-8")
        checked = json.loads(c.run(["hearth-addon", "--check"]).stdout)
        assert checked["model"] == "/models/tiny" and "--zeroconf" in checked["command"], checked
        if socket.socket().connect_ex(("127.0.0.1", port)) == 0:
            raise AssertionError("port 10200 is taken on this machine: the add-on's own port")
        c.start(["hearth-addon"], WORK / "addon.log")
        ready = wait_ready(lambda: describes(port), c.proc, c.log)
        voices, audio = asyncio.run(wyoming_speaks(port))
        assert audio > 0
        stopped = c.stop()
    finally:
        c.remove()
    # ... and started as root, as the Supervisor starts it: /data handed over, the server run as hearth.
    os.chown(data, 0, 0)  # as the Supervisor hands it over
    c = Container(mounts, {}, user="0:0")
    try:
        c.start(["hearth-addon"], WORK / "addon-root.log")
        wait_ready(lambda: describes(port), c.proc, c.log)
        server = server_pids(c.proc.pid)[-1]
        uid = next(line.split()[1] for line in Path(f"/proc/{server}/status").read_text(encoding="utf-8").splitlines()
                   if line.startswith("Uid:"))
        assert uid == "1000" and data.stat().st_uid == 1000, (uid, data.stat().st_uid)
        c.stop()
        results.append(f"add-on: a bad options.json refused (exit 2: {bad.stderr.strip()[:160]}...); a good one "
                       f"ready in {ready:.1f} s, {audio} bytes of audio, stopped {stopped:.1f} s after SIGTERM; "
                       "started as root, its server ran as the user hearth")
    finally:
        c.remove()

    # 4. A checkpoint (not an export) on the first start: the converter installed into the volume for
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
            c = Container(convert_mounts, {**convert_env, "HEARTH_PORT": str(port)})
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

    # 5. Memory: a bigger export served in the container and outside it, after one synthesis each.
    model = os.environ.get("HEARTH_IMAGE_MODEL")
    if model:
        figures = []
        for where in ("container", "host"):
            port = free_port()
            log = WORK / f"memory-{where}.log"
            if where == "container":
                c = Container({Path(model): "/models/big:ro", data: "/data"},
                              {"HEARTH_MODEL": "/models/big", "HEARTH_PORT": str(port)})
                c.start(["hearth-container", "wyoming"], log)
                proc = c.proc
            else:
                proc = subprocess.Popen([sys.executable, "-m", "hearth.cli", "wyoming", "--uri",
                                         f"tcp://127.0.0.1:{port}", "--model", model], stderr=log.open("w"),
                                        start_new_session=True)
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
    for line in results:
        say(line)
    say(f"all checks passed in {time.monotonic() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
