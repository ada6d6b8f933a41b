"""Calls run side by side, for tests of concurrent clients."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def at_once(calls: list[Callable[[], Any]], timeout: float = 180) -> list[Any]:
    """Run the calls on threads of their own, all at once; each one's result, or the exception it
    raised, in order. None is left running (an AssertionError if one outlives `timeout`)."""
    results: list[Any] = [None] * len(calls)

    def run(k: int, call: Callable[[], Any]) -> None:
        try:
            results[k] = call()
        except BaseException as e:  # noqa: BLE001 - a result like any other
            results[k] = e

    threads = [threading.Thread(target=run, args=(k, c)) for k, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
        assert not t.is_alive(), "a call was left running"
    return results
