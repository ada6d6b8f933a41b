"""What every server shares: one engine and its scheduler, loaded in the background.

A server answers at once while the model loads (`ready` is set when loading has ended, either
way); its connections then find the engine and scheduler here, or the reason they are missing.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hearth.backends import settings
from hearth.engine import Engine, load
from hearth.runtime.scheduler import Scheduler
from hearth.serve.hearing import Hearing, HearingModels

__all__ = ["SharedEngine"]

log = logging.getLogger("hearth")


@dataclass(kw_only=True)
class SharedEngine:
    engine: Engine | None = None
    scheduler: Scheduler | None = None
    hearing: Hearing | None = None  # the listening models (`--listen`, `--aligner`), when started with them
    error: str | None = None  # why loading failed
    ready: threading.Event = field(default_factory=threading.Event)  # loading has ended, well or not
    # Blocking work kept off the event loop: encoding the compressed formats, cloning, the voice
    # store (audio itself is awaited: `Request.aget`). Threads are made as needed, up to 64.
    pool: concurrent.futures.ThreadPoolExecutor = field(
        default_factory=lambda: concurrent.futures.ThreadPoolExecutor(64, thread_name_prefix="hearth-stream")
    )

    def load_in_background(self, path: Path | str, flags: dict[str, Any], max_active: int, max_waiting: int,
                           on_failure: Callable[[BaseException], None], max_batch: int | None = None,
                           hearing: HearingModels | None = None) -> None:
        """Load the engine (and the listening models `hearing` names) and start its scheduler on a
        thread; `on_failure` is called with what went wrong (the server should then stop, with a
        non-zero exit code): loading failed, or later a worker thread died too often to be started
        again (`hearth.reliability.health`). `max_batch` None: `settings.max_batch()`."""

        def run() -> None:
            try:
                batch = min(max_batch if max_batch is not None else settings.max_batch(), max_active)
                engine = load(path, **{**flags, "batch_rows": batch})  # (compiled for that many rows)
                self.hearing = hearing.load() if hearing is not None else None
                aligner = self.hearing.aligner if self.hearing is not None else None
                scheduler = Scheduler(engine, max_active=max_active, max_waiting=max_waiting, max_batch=batch,
                                      aligner=aligner)
                scheduler.health.on_fatal = lambda reason: on_failure(RuntimeError(reason))
                self.scheduler = scheduler
                self.engine = engine
                log.info("ready: %d voices on the %s backend", len(engine.voices), engine.options.backend)
            except BaseException as e:  # noqa: BLE001 - reported, and the server stops
                self.error = str(e)
                on_failure(e)
            finally:
                self.ready.set()

        threading.Thread(target=run, name="hearth-load", daemon=True).start()

    def health(self) -> tuple[int, dict[str, Any]]:
        """(HTTP status, body) of the service's health: 503 while loading or while a worker is down
        or restarting ("degraded", with the reason), 500 when loading failed, else 200 "ok"; the
        failure and restart counts either way."""
        if self.error is not None:
            return 500, {"status": "failed", "error": self.error}
        if self.engine is None or self.scheduler is None:
            return 503, {"status": "loading"}
        report = self.scheduler.health_report()
        return (200 if report["status"] == "ok" else 503), report

    def close(self) -> None:
        if self.scheduler is not None:
            self.scheduler.close()
        if self.engine is not None:
            self.engine.close()
        self.pool.shutdown(wait=False, cancel_futures=True)
