"""One request to `hearth serve` (HTTP, the openai client's route) and one to `hearth wyoming` (the
wyoming client library), each server on a free loopback port: the servers' part of
scripts/arm64_smoke.sh. Bounded: each server gets READY_S to start (emulated cores are slow) and
every request a timeout.

    python scripts/arm64_servers.py MODEL
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable

READY_S = 900
REQUEST_S = 600


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(command: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "hearth.cli", *command], stdout=subprocess.DEVNULL)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_until(proc: subprocess.Popen[bytes], name: str, ready: Callable[[], bool]) -> None:
    """Poll `ready` every second until it holds; fail if the server exits or READY_S passes."""
    deadline = time.monotonic() + READY_S
    while not ready():
        if proc.poll() is not None:
            raise SystemExit(f"{name} exited with {proc.returncode} while starting")
        if time.monotonic() > deadline:
            raise SystemExit(f"{name} did not become ready in {READY_S} s")
        time.sleep(1)


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return True
    except OSError:
        return False


def http(model: str) -> None:
    port = free_port()
    proc = start(["serve", "--model", model, "--port", str(port)])
    try:
        wait_until(proc, "hearth serve", lambda: _healthy(port))
        body = json.dumps({"model": "tts-1", "input": "One request over HTTP.", "voice": "vivian",
                           "response_format": "wav"}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/audio/speech", body,
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=REQUEST_S) as r:
            audio = r.read()
        assert audio[:4] == b"RIFF" and len(audio) > 1000, audio[:200]
        print(f"hearth serve: {len(audio)} bytes of WAV", file=sys.stderr)
    finally:
        stop(proc)


async def wyoming(model: str) -> None:
    from wyoming.audio import AudioChunk, AudioStop
    from wyoming.client import AsyncTcpClient
    from wyoming.tts import Synthesize, SynthesizeVoice

    port = free_port()
    proc = start(["wyoming", "--model", model, "--uri", f"tcp://127.0.0.1:{port}"])
    try:
        await asyncio.get_running_loop().run_in_executor(None, wait_until, proc, "hearth wyoming",
                                                         lambda: _listening(port))
        samples = 0
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Synthesize("One request over Wyoming.", SynthesizeVoice("vivian")).event())
            while True:
                event = await asyncio.wait_for(client.read_event(), REQUEST_S)
                assert event is not None, "the server closed the connection"
                if AudioChunk.is_type(event.type):
                    chunk = AudioChunk.from_event(event)
                    samples += len(chunk.audio) // chunk.width
                elif AudioStop.is_type(event.type):
                    break
        assert samples > 0
        print(f"hearth wyoming: {samples} samples", file=sys.stderr)
    finally:
        stop(proc)


if __name__ == "__main__":
    http(sys.argv[1])
    asyncio.run(wyoming(sys.argv[1]))
