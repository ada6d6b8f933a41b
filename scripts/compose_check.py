"""`docker compose up` as a user types it, with podman-compose reading the repository's compose files
(`scripts/image.sh compose`).

For each of compose.yaml (the OpenAI server) and compose.wyoming.yaml (Home Assistant's): the
project brought up detached from the file as it is, the image the file names (the one
`scripts/image.sh build` tagged with the published name), the model in the file's volume
(a tiny export copied into it, named by HEARTH_MODEL as a user names a local model), the port
published on 127.0.0.1 (HEARTH_PUBLISH / HEARTH_WYOMING_PUBLISH, the files' own knob); the
server answered by the OpenAI SDK (a wrong key refused) or by the wyoming package's client;
`compose down` timed; the project's containers and volume removed.

The one stand-in is this sandbox's: podman's OCI runtime cannot set the containers' rlimits
here with crun, so podman runs them with runc and lowered limits, from a containers.conf
written for this check only (CONTAINERS_CONF), never in a file a user runs.

    python scripts/compose_check.py [VERSION]     (default: the package's version)
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from containers import WORK, describes, free_port, healthy, poll_until, say, summary, tiny_export, wyoming_speaks

ROOT = Path(__file__).resolve().parent.parent
CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"
"""


def version() -> str:
    text = (ROOT / "hearth" / "__init__.py").read_text(encoding="utf-8")
    return next(line.split('"')[1] for line in text.splitlines() if line.startswith("__version__"))


def compose(project: str, file: str, env: dict[str, str], *args: str, timeout: float = 600
            ) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "podman_compose", "-p", project, "-f", file, *args], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=timeout, check=False)
    if r.returncode != 0:
        raise AssertionError(f"compose {' '.join(args)} ({file}) exited {r.returncode}:\n{r.stdout[-2000:]}"
                             f"\n{r.stderr[-3000:]}")
    return r


def volume_with_model(name: str, env: dict[str, str]) -> None:
    """The file's named volume (podman-compose names it PROJECT_hearth-data), made before `up` with
    a tiny export at /data/models/tiny, owned by the image's user."""
    subprocess.run(["podman", "volume", "rm", "-f", name], env=env, capture_output=True, check=False)
    subprocess.run(["podman", "volume", "create", name], env=env, capture_output=True, check=True)
    inspect = subprocess.run(["podman", "volume", "inspect", name], env=env, capture_output=True, text=True,
                             check=True)
    mount = Path(json.loads(inspect.stdout)[0]["Mountpoint"])
    shutil.copytree(tiny_export(), mount / "models" / "tiny")
    for path in [mount, *mount.rglob("*")]:
        os.chown(path, 1000, 1000)  # the image's user "hearth"


def wait(check, what: str, project: str, env: dict[str, str], timeout: float = 300) -> float:
    took = poll_until(check, timeout)
    if took is not None:
        return took
    logs = subprocess.run(["podman", "logs", "--tail", "60", f"{project}_{what}_1"], env=env, capture_output=True,
                          text=True, check=False)
    raise AssertionError(f"{what} not ready in {timeout:.0f} s:\n{logs.stdout}{logs.stderr}")


def openai_speaks(port: int, key: str) -> int:
    import openai

    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=key)
    speech = client.audio.speech.create(model="tts-1", voice="ryan", input="Compose brought me up.",
                                        response_format="wav")
    assert speech.content[:4] == b"RIFF" and len(speech.content) > 44, speech.content[:64]
    try:
        openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=key + "-wrong").audio.speech.create(
            model="tts-1", voice="ryan", input="No.")
        raise AssertionError("a wrong API key was served")
    except openai.AuthenticationError:
        pass
    return len(speech.content)


def bring_up(file: str, service: str, tag: str, conf: Path) -> str:
    project = f"hearth-check-{service}"
    port = free_port()
    publish = "HEARTH_PUBLISH" if service == "hearth" else "HEARTH_WYOMING_PUBLISH"
    env = {**os.environ, "CONTAINERS_CONF": str(conf), "HEARTH_VERSION": tag, "HEARTH_MODEL": "/data/models/tiny",
           publish: f"127.0.0.1:{port}", "HEARTH_API_KEY": "k-compose"}
    volume_with_model(f"{project}_hearth-data", env)
    try:
        t0 = time.monotonic()
        compose(project, file, env, "up", "-d")
        up = time.monotonic() - t0
        if service == "hearth":
            ready = wait(lambda: healthy(port), service, project, env)
            answered = f"{openai_speaks(port, 'k-compose')} bytes of WAV from the OpenAI SDK, a wrong key refused"
        else:
            ready = wait(lambda: describes(port), service, project, env)
            voices, audio = asyncio.run(wyoming_speaks(port))
            assert voices > 0 and audio > 0, (voices, audio)
            answered = f"info with {voices} voices and {audio} bytes of audio from the wyoming client"
        t0 = time.monotonic()
        compose(project, file, env, "down")
        down = time.monotonic() - t0
        left = subprocess.run(["podman", "ps", "-a", "-q", "--filter", f"label=io.podman.compose.project={project}"],
                              env=env, capture_output=True, text=True, check=True).stdout.split()
        assert not left, f"compose down left containers: {left}"
        return (f"{file}: `up -d` {up:.1f} s, ready {ready:.1f} s later on 127.0.0.1:{port}, {answered}; "
                f"`down` {down:.1f} s")
    finally:
        subprocess.run([sys.executable, "-m", "podman_compose", "-p", project, "-f", file, "down"], cwd=ROOT, env=env,
                       capture_output=True, timeout=120, check=False)
        subprocess.run(["podman", "volume", "rm", "-f", f"{project}_hearth-data"], env=env, capture_output=True,
                       check=False)


def main() -> int:
    tag = sys.argv[1] if len(sys.argv) > 1 else version()
    WORK.mkdir(parents=True, exist_ok=True)
    conf = WORK / "containers.conf"
    conf.write_text(CONTAINERS_CONF, encoding="utf-8")
    image = f"ghcr.io/hearth-tts/hearth:{tag}"
    if subprocess.run(["podman", "image", "exists", image], check=False).returncode != 0:
        say(f"{image} is not here: scripts/image.sh build makes it")
        return 2
    t_all = time.monotonic()
    results = [bring_up("compose.yaml", "hearth", tag, conf), bring_up("compose.wyoming.yaml", "wyoming", tag, conf)]
    return summary(results, t_all, "compose checks (podman-compose, runc with lowered rlimits)")


if __name__ == "__main__":
    raise SystemExit(main())
