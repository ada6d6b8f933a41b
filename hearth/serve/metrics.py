"""`GET /metrics`: the server's figures in Prometheus' text format (written by hand: a few lines).

Requests by status code, first-byte latency and per-request real-time factor as histograms, the
scheduler's queue depth, active streams and the process's resident memory as gauges, and failed
sentences by the stage they failed at, worker restarts and workers down (`hearth.reliability.health`).
"""

from __future__ import annotations

import bisect
import os
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

__all__ = ["Metrics"]

_LATENCY_BUCKETS = (0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.5, 5.0, 10.0)
_RTF_BUCKETS = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0)


def _resident_bytes() -> int:
    """This process's resident memory (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="utf-8") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class _Histogram:
    def __init__(self, buckets: tuple[float, ...]):
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)  # the last one: above every bucket
        self.total = 0.0
        self.n = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.total += value
        self.n += 1

    def lines(self, name: str) -> list[str]:
        out, cumulative = [], 0
        for bound, count in zip(self.buckets, self.counts, strict=False):
            cumulative += count
            out.append(f'{name}_bucket{{le="{bound}"}} {cumulative}')
        out.append(f'{name}_bucket{{le="+Inf"}} {self.n}')
        out += [f"{name}_sum {self.total:.6f}", f"{name}_count {self.n}"]
        return out


class Metrics:
    def __init__(self, gauges: Callable[[], dict[str, int]], health: Callable[[], dict[str, Any]] = dict):
        self._lock = threading.Lock()
        self._requests: Counter[str] = Counter()
        self._first_byte = _Histogram(_LATENCY_BUCKETS)
        self._rtf = _Histogram(_RTF_BUCKETS)
        self._gauges = gauges  # queue depth and active streams, read at scrape time
        self._health = health  # failures and restarts, read at scrape time

    def request(self, status: int) -> None:
        with self._lock:
            self._requests[str(status)] += 1

    def first_byte(self, seconds: float) -> None:
        with self._lock:
            self._first_byte.observe(seconds)

    def real_time_factor(self, rtf: float) -> None:
        with self._lock:
            self._rtf.observe(rtf)

    def render(self) -> str:
        with self._lock:
            lines = ["# HELP hearth_requests_total Speech requests answered, by HTTP status.",
                     "# TYPE hearth_requests_total counter"]
            lines += [f'hearth_requests_total{{status="{s}"}} {n}' for s, n in sorted(self._requests.items())]
            lines += ["# HELP hearth_first_byte_seconds From the request to its first audio byte.",
                      "# TYPE hearth_first_byte_seconds histogram",
                      *self._first_byte.lines("hearth_first_byte_seconds")]
            lines += ["# HELP hearth_real_time_factor Wall time over audio time, per finished request.",
                      "# TYPE hearth_real_time_factor histogram", *self._rtf.lines("hearth_real_time_factor")]
        health = self._health()
        lines += ["# HELP hearth_failures_total Sentences that failed, by the stage they failed at.",
                  "# TYPE hearth_failures_total counter"]
        lines += [f'hearth_failures_total{{stage="{k}"}} {n}' for k, n in sorted(health.get("failures", {}).items())]
        lines += ["# HELP hearth_worker_restarts_total Worker threads started again after dying.",
                  "# TYPE hearth_worker_restarts_total counter"]
        lines += [f'hearth_worker_restarts_total{{worker="{k}"}} {n}'
                  for k, n in sorted(health.get("restarts", {}).items())]
        gauges = {**self._gauges(), "resident_memory_bytes": _resident_bytes()}
        if health:
            gauges["healthy"] = int(health.get("status") == "ok")
        for name, value in gauges.items():
            lines += [f"# TYPE hearth_{name} gauge", f"hearth_{name} {value}"]
        return "\n".join(lines) + "\n"
