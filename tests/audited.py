"""Commands run as a user runs them, under audit: HOME at an empty folder, and in every Python
process of the command an audit hook (tests/audit/sitecustomize.py, through PYTHONPATH) that records
a fork without exec and any connection or name lookup for an address other than loopback. Then
three claims can be checked: nothing recorded, nothing under HOME but Hearth's cache, and no process
of the command left (each carries a tag in its environment, which its children inherit).

The environment a user has is kept, but for the variables that would hide a sender: `CI` (OpenVINO
and NNCF send nothing in CI jobs, so under `.ci/run` a regression would pass unseen), and
`HEARTH_CACHE` (the cache must be HOME's, unless a test shares the session's on purpose).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

AUDIT = Path(__file__).parent / "audit"
HIDING = ("CI", "TF_BUILD", "JENKINS_URL", "NNCF_CI", "NNCF_DEV", "HEARTH_CACHE", "HF_HOME", "HF_HUB_OFFLINE",
          "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "RAY_USAGE_STATS_ENABLED",
          "ORT_DISABLE_TELEMETRY")


class Audited:
    """Commands run with HOME at an empty folder, each process under the audit hook."""

    def __init__(self, root: Path, keep_cache: bool = False):
        self.keep_cache = keep_cache  # keep the session's HEARTH_CACHE (converted models) instead of HOME's
        self.home = root / "home"
        self.work = root / "work"  # the paths a user names (outputs, references)
        self.home.mkdir()
        self.work.mkdir()
        self.log = root / "audit.log"
        self.tag = uuid.uuid4().hex

    def seed_cache(self, conversions: Path) -> None:
        """HOME's cache starts with the finished conversions in `conversions` (a run's HEARTH_CACHE),
        linked, not copied: commands read them as they would their own."""
        for manifest in sorted(conversions.glob("*/*/manifest.json")):
            entry = manifest.parent
            target = self.home / ".cache/hearth" / entry.relative_to(conversions)
            if not target.exists():
                shutil.copytree(entry, target, copy_function=os.link)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in HIDING or (self.keep_cache and k == "HEARTH_CACHE")}
        env.update(HOME=str(self.home), HEARTH_AUDIT_LOG=str(self.log), HEARTH_AUDIT_TAG=self.tag,
                   PYTHONPATH=os.pathsep.join([str(AUDIT), *filter(None, [os.environ.get("PYTHONPATH")])]))
        return env

    def popen(self, *args: str, extra_env: dict[str, str] | None = None, **kw) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "hearth.cli", *args], env={**self.env(), **(extra_env or {})},
                                cwd=self.work, **kw)

    def run(self, *args: str, stdin: str = "", timeout: float = 300) -> subprocess.CompletedProcess:
        r = subprocess.run([sys.executable, "-m", "hearth.cli", *args], env=self.env(), cwd=self.work,
                           input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
        assert r.returncode == 0, r.stderr
        return r

    def records(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines() if line.strip()]

    def left_over(self, grace_s: float = 5.0) -> list[str]:
        """Processes still carrying this run's tag (after a short grace for ones already exiting)."""
        deadline = time.monotonic() + grace_s
        while True:
            found = []
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit():
                    continue
                try:
                    environ = (entry / "environ").read_bytes()
                    if f"HEARTH_AUDIT_TAG={self.tag}".encode() in environ.split(b"\0"):
                        cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                        found.append(f"{entry.name}: {cmdline}")
                except OSError:  # gone meanwhile, or not ours to read
                    continue
            if not found or time.monotonic() > deadline:
                return found
            time.sleep(0.1)

    def outside_cache(self) -> list[str]:
        cache = self.home / ".cache" / "hearth"
        return sorted(str(p.relative_to(self.home)) for p in self.home.rglob("*")
                      if not (p == cache or cache in p.parents or p in cache.parents))

    def check(self, what: str) -> None:
        """The audit's three claims, for everything run so far."""
        assert self.records() == [], f"{what}: sent, looked up or forked: {self.records()}"
        assert self.outside_cache() == [], f"{what}: wrote under HOME outside Hearth's cache: {self.outside_cache()}"
        assert self.left_over() == [], f"{what}: processes outlived the command"


