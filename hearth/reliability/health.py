"""A resident service's health: failures by stage, and worker threads kept alive.

One `Health` per scheduler records what went wrong (each failed sentence under the stage it failed
at, `hearth.reliability.faults`) and which of its worker threads is down. A `Supervisor` runs a worker thread
(the scheduler's, the batcher's) and, if the thread dies anyway (a bug: every failure of one
request is caught before it gets that far), fails what that thread had in hand, waits (a backoff
that doubles from `backoff_s`) and starts it again, reporting it down meanwhile. A worker that
dies more than `max_restarts` times within `window_s` is not started again: the health's
`on_fatal` is told, and a server then exits non-zero so that systemd, Docker or Ray Serve
restarts the whole process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Health", "Supervisor"]

log = logging.getLogger(__name__)


@dataclass
class Health:
    """What a scheduler's workers went through (thread-safe)."""

    failures: Counter[str] = field(default_factory=Counter)  # failed sentences, by stage
    restarts: Counter[str] = field(default_factory=Counter)  # worker restarts, by worker
    down: dict[str, str] = field(default_factory=dict)  # worker -> why it is down now
    fatal: str | None = None  # a worker that will not be started again, and why
    last_failure: str | None = None  # the newest failure, for a human
    # Told once when a worker has died too often: a server stops with a non-zero exit code.
    on_fatal: Callable[[str], None] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def failed(self, stage: str, error: BaseException) -> None:
        with self._lock:
            self.failures[stage] += 1
            self.last_failure = f"{stage}: {type(error).__name__}: {error}"

    def worker_down(self, worker: str, reason: str) -> None:
        with self._lock:
            self.down[worker] = reason

    def worker_up(self, worker: str, restarted: bool) -> None:
        with self._lock:
            self.down.pop(worker, None)
            if restarted:
                self.restarts[worker] += 1

    def give_up(self, worker: str, reason: str) -> None:
        with self._lock:
            self.down[worker] = reason
            first = self.fatal is None
            self.fatal = self.fatal or f"{worker}: {reason}"
            on_fatal = self.on_fatal
        if first and on_fatal is not None:
            on_fatal(f"the {worker} worker died too often ({reason})")

    @property
    def ok(self) -> bool:
        with self._lock:
            return not self.down and self.fatal is None

    def report(self) -> dict[str, Any]:
        """For /health: "ok", or "degraded" with the workers down and why; the counts either way."""
        with self._lock:
            out: dict[str, Any] = {"status": "ok" if not self.down and self.fatal is None else "degraded"}
            if self.down:
                out["reason"] = "; ".join(f"the {w} worker is down ({why})" for w, why in sorted(self.down.items()))
            if self.fatal:
                out["fatal"] = self.fatal
            out["failures"] = dict(self.failures)
            out["restarts"] = dict(self.restarts)
            if self.last_failure:
                out["last_failure"] = self.last_failure
            return out


class Supervisor:
    """Runs `body()` on a daemon thread named `name`, and starts it again if it raises.

    `on_death(error)` is called on that thread before the restart: it fails whatever the dead body
    had in hand (its in-flight requests get the error; new ones are served by the next body).
    `body` returning normally ends the supervision (the worker was closed)."""

    def __init__(self, name: str, body: Callable[[], None], health: Health,
                 on_death: Callable[[BaseException], None], *, backoff_s: float = 0.05, max_backoff_s: float = 5.0,
                 max_restarts: int = 5, window_s: float = 60.0):
        self.name = name
        self.body = body
        self.health = health
        self.on_death = on_death
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self.max_restarts, self.window_s = max_restarts, window_s
        self.stopped = threading.Event()  # set by `stop`: no restart, and a backoff ends at once
        self._deaths: deque[float] = deque()
        self.thread = threading.Thread(target=self._run, name=f"hearth-{name}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()

    def _run(self) -> None:
        restarted = False
        while True:
            if restarted:
                self.health.worker_up(self.name, restarted=True)
                log.warning("the %s worker was started again", self.name)
            try:
                self.body()
                return
            except BaseException as e:  # noqa: BLE001 - a worker that dies is restarted, not lost
                reason = f"{type(e).__name__}: {e}"
                log.exception("the %s worker died", self.name)
                self.health.worker_down(self.name, f"restarting after {reason}")
                try:
                    self.on_death(e)
                except BaseException:  # noqa: BLE001 - failing its requests must not stop the restart
                    log.exception("failing the %s worker's requests failed", self.name)
                now = time.monotonic()
                self._deaths.append(now)
                while self._deaths and now - self._deaths[0] > self.window_s:
                    self._deaths.popleft()
                if len(self._deaths) > self.max_restarts:
                    log.critical("the %s worker died %d times within %.0f s; not starting it again", self.name,
                                 len(self._deaths), self.window_s)
                    self.health.give_up(self.name, reason)
                    return
                # The backoff doubles with each death within the window.
                delay = min(self.backoff_s * 2 ** (len(self._deaths) - 1), self.max_backoff_s)
                if self.stopped.wait(delay):
                    self.health.worker_up(self.name, restarted=False)
                    return
                restarted = True
