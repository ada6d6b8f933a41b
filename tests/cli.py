"""The `hearth` command run as a user runs it: a fresh process, its exit code and both streams."""

from __future__ import annotations

import subprocess
import sys


def hearth(*args: str, stdin: bytes | None = None, timeout: float = 300,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "hearth.cli", *args], input=stdin, capture_output=True,
                          timeout=timeout, check=False, env=env)
