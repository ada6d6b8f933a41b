"""The worker threads a stream runs on: a pair per stream (generation, vocoder), kept warm between
streams and stopped together when the engine closes."""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
from collections.abc import Callable

from hearth.reliability import faults

__all__ = ["Workers"]

log = logging.getLogger(__name__)



class _Worker:
    """One daemon thread running submitted calls in order. Daemon: whatever happens, a stuck call
    can never keep the process from exiting (the engine also stops its streams on close)."""

    def __init__(self, name: str):
        self._tasks: queue.SimpleQueue[tuple[Callable[[], object], concurrent.futures.Future] | None] = (
            queue.SimpleQueue()
        )
        self.dying = False
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (task := self._tasks.get()) is not None:
            fn, future = task
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as e:  # noqa: BLE001 - handed to whoever waits on the future
                if isinstance(e, faults.InjectedFault) and e.stage == "vocoder_thread":
                    self.dying = True  # (before the future's callbacks run: its pair is not kept)
                    future.set_exception(e)
                    raise  # the thread dies (supervision's test: its pair is replaced)
                future.set_exception(e)
            else:
                future.set_result(result)

    @property
    def alive(self) -> bool:
        return self.thread.is_alive() and not self.dying

    def submit(self, fn: Callable[[], object]) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._tasks.put((fn, future))
        return future

    def close(self) -> None:
        self._tasks.put(None)


class Workers:
    """Pairs of long-lived worker threads a pipeline runs on: one generates, one vocodes.

    Each live stream holds a pair of its own, so streams on several threads run side by side; a
    finished stream's pair is kept for the next (a fresh thread pays for its math library's thread
    pool on its first heavy call: about 80 ms of first-audio latency here), up to `keep` idle pairs.
    """

    def __init__(self, keep: int = 2) -> None:
        self.keep = keep
        self._idle: list[tuple[_Worker, _Worker]] = []
        self._lock = threading.Lock()
        self._count = 0
        self._closed = False
        self._live: set[threading.Event] = set()  # the stop flags of streams running on a pair
        self.replaced = 0  # idle pairs found with a dead thread, and replaced

    def acquire(self) -> tuple[_Worker, _Worker]:
        with self._lock:
            if self._closed:
                raise RuntimeError("the engine is closed")
            while self._idle:
                pair = self._idle.pop()
                if all(w.alive for w in pair):
                    return pair
                self.replaced += 1  # a thread died (it must not take the next stream with it)
                log.warning("a stream worker thread had died; the next stream starts new ones")
                for worker in pair:
                    worker.close()
            self._count += 1
            n = self._count
        return _Worker(f"hearth-generate-{n}"), _Worker(f"hearth-vocoder-{n}")

    def release(self, pair: tuple[_Worker, _Worker]) -> None:
        with self._lock:
            if not all(w.alive for w in pair):
                self.replaced += 1  # a thread died: the next stream gets new ones
                log.warning("a stream worker thread died; the next stream starts new ones")
            elif not self._closed and len(self._idle) < self.keep:
                self._idle.append(pair)
                return
        for worker in pair:
            worker.close()

    def warm(self, fn: Callable[[], object]) -> None:
        """Run `fn` on the generate thread of an idle pair (and keep the pair), raising its error."""
        pair = self.acquire()
        try:
            pair[0].submit(fn).result()
        finally:
            self.release(pair)

    def track(self, stop: threading.Event) -> None:
        with self._lock:
            self._live.add(stop)

    def untrack(self, stop: threading.Event) -> None:
        with self._lock:
            self._live.discard(stop)

    def close(self) -> None:
        """Stop every live stream (each ends within a frame) and end the idle threads."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            live = list(self._live)
        for stop in live:
            stop.set()
        for pair in idle:
            for worker in pair:
                worker.close()
