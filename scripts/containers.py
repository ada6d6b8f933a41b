"""Running built images here, for the image and add-on checks (scripts/image_check.py,
scripts/addon_check.py): a working container of an image with `buildah run --isolation chroot` on
the host's network (another architecture's through qemu-user, as scripts/arm64.sh runs its root),
the server processes in it, and the clients' side (the wyoming package's client, readiness, health).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

WORK = Path(os.environ.get("HEARTH_IMAGE_WORK", "/var/tmp/hearth-image-check"))
ENV = {**os.environ, "BUILDAH_ISOLATION": "chroot", "STORAGE_DRIVER": os.environ.get("STORAGE_DRIVER", "vfs")}


def say(message: str) -> None:
    print(f"{Path(sys.argv[0]).stem.replace('_', ' ')}: {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def buildah(*args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["buildah", *args], env=ENV, check=check, text=True, capture_output=True, **kwargs)


class Container:
    """One working container of the image, and a process run in it (`buildah run`)."""

    def __init__(self, image: str, mounts: dict[Path, str], env: dict[str, str], user: str | None = None,
                 hosts: dict[str, str] | None = None):
        add_hosts = [f"--add-host={name}:{ip}" for name, ip in (hosts or {}).items()]
        self.image = image
        self.name = buildah("from", "--pull-never", *add_hosts, image).stdout.strip()
        self.mounts, self.env, self.user = mounts, env, user
        self.emulated = image_arch(image) != ("arm64" if os.uname().machine == "aarch64" else "amd64")
        self.proc: subprocess.Popen | None = None
        self.log = WORK / "container.log"

    def _args(self, command: list[str]) -> list[str]:
        if self.emulated:
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
        config = json.loads(subprocess.run(["podman", "image", "inspect", self.image, "--format", "{{json .Config}}"],
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
                                     stderr=log.open("w", encoding="utf-8"), start_new_session=True)

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
        if self.emulated:
            buildah("umount", self.name, check=False)
        buildah("rm", self.name, check=False)


def image_arch(image: str) -> str:
    out = subprocess.run(["podman", "image", "inspect", image, "--format", "{{.Architecture}}"], env=ENV,
                         capture_output=True, text=True, check=False).stdout.strip()
    return out or "amd64"


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


def poll_until(check, timeout: float) -> float | None:
    """Seconds until `check()` is true (a refused connection counts as not yet), or None after `timeout`."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            if check():
                return time.monotonic() - t0
        except OSError:
            pass
        time.sleep(0.5)
    return None


def wait_ready(check, proc: subprocess.Popen, log: Path, timeout: float = 300) -> float:
    def ready() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the container exited ({proc.returncode}): {log.read_text(encoding='utf-8')[-3000:]}")
        return check()

    took = poll_until(ready, timeout)
    if took is None:
        raise AssertionError(f"not ready in {timeout:.0f} s: {log.read_text(encoding='utf-8')[-3000:]}")
    return took


def summary(results: list[str], since: float, what: str = "all checks") -> int:
    """Each check's line, then the total time: 0, the exit status."""
    for line in results:
        say(line)
    say(f"{what} passed in {time.monotonic() - since:.0f} s")
    return 0


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
