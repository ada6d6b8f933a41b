"""Measuring helpers shared by the tools: percentiles and this process's memory."""

from __future__ import annotations

import resource
import statistics

__all__ = ["median_or_none", "p95", "peak_rss_mb", "reset_peak_rss", "rss_mb"]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def rss_mb() -> tuple[float, float]:
    """(current, peak since the last reset) resident set size of this process, from /proc."""
    fields = {}
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return fields.get("VmRSS", float("nan")), fields.get("VmHWM", peak_rss_mb())


def reset_peak_rss() -> None:
    try:
        with open("/proc/self/clear_refs", "w", encoding="utf-8") as f:
            f.write("5")  # resets VmHWM to the current RSS (Linux)
    except OSError:
        pass


def median_or_none(values: list[float]) -> float | None:
    return statistics.median(values) if values else None
