"""A live `hearth serve` process for tests: started on a free loopback port, stopped with SIGTERM."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any, Self


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Process:
    """A server process writing its log to a file. As a context manager (also a fixture's body,
    `with Server(...) as s: yield s`) it is stopped at the end, and must have exited cleanly when
    nothing else failed; `exit_code` and `stopped_log` then hold how it ended."""

    proc: subprocess.Popen
    log: Any
    stop_s: float
    exit_code: int | None = None
    stopped_log = ""

    def logged(self) -> str:
        self.log.seek(0)
        return self.log.read().decode()

    def stop(self) -> tuple[int, str]:
        """SIGTERM; the exit code and everything the server logged."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=self.stop_s)
        assert not out  # logs go to stderr
        self.exit_code, self.stopped_log = self.proc.returncode, self.logged()
        return self.exit_code, self.stopped_log

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        code, log = self.stop()
        if kind is None:
            assert code == 0, log


class Server(_Process):
    """A live `hearth serve` (or `hearth cluster`) process on a free loopback port."""

    def __init__(self, model, *extra: str, env: dict[str, str] | None = None, wait: bool = True,
                 command: str = "serve", ready_s: float = 120, stop_s: float = 30):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ready_s, self.stop_s = ready_s, stop_s
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - a file, not a pipe: a chatty server never blocks
        self.proc = subprocess.Popen([sys.executable, "-m", "hearth.cli", command, "--model", str(model), "--port",
                                      str(self.port), *extra], stdout=subprocess.PIPE, stderr=self.log, env=env)
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_s
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.logged()
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):  # refused, reset, timed out: not yet
                pass
            time.sleep(0.2)
        raise AssertionError("the server did not become ready")

    def client(self, **kw):
        import openai

        return openai.OpenAI(base_url=self.url + "/v1", api_key=kw.pop("api_key", "unused"), max_retries=0, **kw)


def metrics(server: Server) -> dict[str, float]:
    """The server's /metrics, as {sample name with labels: value}."""
    with urllib.request.urlopen(server.url + "/metrics", timeout=5) as r:
        assert r.headers["Content-Type"].startswith("text/plain")
        text = r.read().decode()
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


def wait_for_metric(server: Server, name: str, value: float, within_s: float = 20) -> None:
    """Until the server's metric `name` reads `value` (an AssertionError with the server's log after `within_s`)."""
    deadline = time.monotonic() + within_s
    while (seen := metrics(server).get(name)) != value:
        assert time.monotonic() < deadline, f"{name} stayed {seen}, not {value}; the server logged:\n{server.logged()}"
        time.sleep(0.05)


class WyomingServer(_Process):
    """A live `hearth wyoming` process on a free loopback port (or another --uri), stopped with SIGTERM."""

    def __init__(self, model, *extra: str, uri: str | None = None, env: dict[str, str] | None = None):
        self.port = free_port()
        self.uri = uri or f"tcp://127.0.0.1:{self.port}"
        self.stop_s = 30
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - a file, not a pipe: a chatty server never blocks
        self.proc = subprocess.Popen([sys.executable, "-m", "hearth.cli", "wyoming", "--model", str(model), "--uri",
                                      self.uri, *extra], stdout=subprocess.PIPE, stderr=self.log, env=env)
        deadline = time.monotonic() + 120
        while "ready:" not in self.logged() and time.monotonic() < deadline:
            assert self.proc.poll() is None, self.logged()
            time.sleep(0.2)
        assert "ready:" in self.logged(), "the server did not become ready"

    def speak(self, text: str, voice: str = "ryan", timeout: float = 120) -> bytes:
        """One synthesis with Home Assistant's client: the PCM of its audio chunks (an error event fails)."""
        import asyncio

        from wyoming.client import AsyncTcpClient
        from wyoming.tts import Synthesize, SynthesizeVoice

        async def one() -> bytes:
            async with AsyncTcpClient("127.0.0.1", self.port) as client:
                await client.write_event(Synthesize(text=text, voice=SynthesizeVoice(name=voice)).event())
                audio = b""
                while True:
                    event = await client.read_event()
                    assert event is not None and event.type != "error", event
                    if event.type == "audio-chunk":
                        audio += event.payload
                    if event.type == "audio-stop":
                        return audio

        return asyncio.run(asyncio.wait_for(one(), timeout))

