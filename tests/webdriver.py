"""Just enough of the W3C WebDriver protocol to drive Debian's headless Chromium through its
`chromedriver`: JSON over HTTP on loopback, so the tests need no browser-automation package (and
nothing that downloads a browser)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from typing import Any

_ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C key of an element reference


class WebDriverError(RuntimeError):
    pass


class Chromium:
    def __init__(self, chromium: str, chromedriver: str, profile: str, flags: list[str]):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self._driver = subprocess.Popen([chromedriver, f"--port={port}"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        self._base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                self._call("GET", "/status")
                break
            except OSError:
                if time.monotonic() > deadline:
                    self._driver.kill()
                    raise
                time.sleep(0.1)
        capabilities = {"browserName": "chrome", "goog:chromeOptions": {
            "binary": chromium, "args": [*flags, f"--user-data-dir={profile}"]}}
        session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})
        self._session = f"/session/{session['sessionId']}"

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self._base + path, data, {"Content-Type": "application/json"},
                                         method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as e:
            raise WebDriverError(json.loads(e.read())["value"].get("message", str(e))) from None

    def get(self, url: str) -> None:
        self._call("POST", self._session + "/url", {"url": url})

    @property
    def title(self) -> str:
        return self._call("GET", self._session + "/title")

    def run(self, script: str, *args: Any) -> Any:
        """Run `script` (a function body; `arguments` holds `args`) in the page; its return value."""
        return self._call("POST", self._session + "/execute/sync", {"script": script, "args": list(args)})

    def _element(self, css: str) -> str:
        return self._call("POST", self._session + "/element", {"using": "css selector", "value": css})[_ELEMENT]

    def click(self, css: str) -> None:
        self._call("POST", f"{self._session}/element/{self._element(css)}/click", {})

    def type(self, css: str, text: str) -> None:
        element = self._element(css)
        self._call("POST", f"{self._session}/element/{element}/clear", {})
        self._call("POST", f"{self._session}/element/{element}/value", {"text": text})

    def text(self, css: str) -> str:
        return self._call("GET", f"{self._session}/element/{self._element(css)}/text")

    def screenshot(self) -> bytes:
        import base64

        return base64.b64decode(self._call("GET", self._session + "/screenshot"))

    def wait(self, script: str, timeout: float = 60.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.run(script)
            if value:
                return value
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for: {script}")

    def quit(self) -> None:
        try:
            self._call("DELETE", self._session)
        finally:
            self._driver.terminate()
            self._driver.wait(timeout=10)
