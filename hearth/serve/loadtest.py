"""`hearth loadtest URL`: many clients speaking to a running `hearth serve`, and what they met.

Each client sends its requests one after another (pcm, read as it streams) and records the time to
the first audio byte, the request's real-time factor (wall time over audio time), and the answer:
served, busy (503, which must come at once), or an error. The server's resident memory is read
from its `/metrics` before and after. Standard library only: a tool anyone can point at a server.
"""

from __future__ import annotations

import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LoadSettings", "run_load"]

TEXTS = [
    "The kettle is on, and the house is warm tonight.",
    "Your package arrived this afternoon and is waiting by the door.",
    "Reminder: the back-up finished without errors.",
    "Good morning. It will rain later, so take an umbrella.",
]
_BYTES_PER_SECOND = 24000 * 2


@dataclass(frozen=True)
class LoadSettings:
    url: str
    clients: int = 1
    requests: int = 5
    voice: str = "ryan"
    api_key: str | None = None
    max_new_tokens: int | None = None
    timeout_s: float = 600.0


@dataclass
class _Tally:
    first_byte: list[float] = field(default_factory=list)
    rtf: list[float] = field(default_factory=list)
    busy: list[float] = field(default_factory=list)  # how long each 503 took to come
    errors: list[str] = field(default_factory=list)
    audio_s: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _server_rss_bytes(server: tuple[str, int], timeout: float) -> float | None:
    try:
        conn = http.client.HTTPConnection(*server, timeout=timeout)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("hearth_resident_memory_bytes "):
            return float(line.split()[1])
    return None


def _one(s: LoadSettings, server: tuple[str, int], text: str, seed: int, tally: _Tally) -> None:
    body: dict[str, Any] = {"model": "tts-1", "input": text, "voice": s.voice, "response_format": "pcm", "seed": seed}
    if s.max_new_tokens:
        body["max_new_tokens"] = s.max_new_tokens
    headers = {"Content-Type": "application/json"}
    if s.api_key:
        headers["Authorization"] = f"Bearer {s.api_key}"
    t0 = time.perf_counter()
    try:
        conn = http.client.HTTPConnection(*server, timeout=s.timeout_s)
        conn.request("POST", "/v1/audio/speech", json.dumps(body), headers)
        response = conn.getresponse()
        if response.status == 503:
            response.read()
            with tally.lock:
                tally.busy.append(time.perf_counter() - t0)
            return
        if response.status != 200:
            message = response.read()[:300].decode(errors="replace")
            with tally.lock:
                tally.errors.append(f"{response.status}: {message}")
            return
        first = response.read1(65536)
        t_first = time.perf_counter() - t0
        received = len(first)
        while piece := response.read1(65536):
            received += len(piece)
        wall = time.perf_counter() - t0
        conn.close()
    except OSError as e:
        with tally.lock:
            tally.errors.append(f"{type(e).__name__}: {e}")
        return
    audio_s = received / _BYTES_PER_SECOND
    with tally.lock:
        tally.first_byte.append(t_first)
        tally.audio_s += audio_s
        if audio_s:
            tally.rtf.append(wall / audio_s)


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_load(s: LoadSettings, log: Any = print) -> dict[str, Any]:
    parts = urllib.parse.urlsplit(s.url if "://" in s.url else f"http://{s.url}")
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"URL must look like http://HOST:PORT, got {s.url!r}")
    server = (parts.hostname, parts.port or 80)
    tally = _Tally()
    rss_before = _server_rss_bytes(server, 10)
    done = [0]

    def client(k: int) -> None:
        for i in range(s.requests):
            _one(s, server, TEXTS[(k + i) % len(TEXTS)], 1000 * k + i, tally)
            with tally.lock:
                done[0] += 1
                n = done[0]
            if n % max(1, (s.clients * s.requests) // 10) == 0:
                log(f"hearth loadtest: {n}/{s.clients * s.requests} requests")

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(s.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    rss_after = _server_rss_bytes(server, 10)
    return {
        "url": s.url, "clients": s.clients, "requests": s.clients * s.requests,
        "served": len(tally.first_byte), "busy_503": len(tally.busy), "errors": len(tally.errors),
        "error_details": tally.errors[:10],
        "first_byte_p50_s": _percentile(tally.first_byte, 0.5), "first_byte_p95_s": _percentile(tally.first_byte, 0.95),
        "rtf_p50": _percentile(tally.rtf, 0.5), "rtf_p95": _percentile(tally.rtf, 0.95),
        "busy_answer_max_s": max(tally.busy) if tally.busy else None,
        "audio_s": tally.audio_s, "elapsed_s": elapsed,
        "throughput_x_realtime": tally.audio_s / elapsed if elapsed else None,
        "server_rss_mb_before": rss_before / 1e6 if rss_before else None,
        "server_rss_mb_after": rss_after / 1e6 if rss_after else None,
        "mean_rtf": statistics.mean(tally.rtf) if tally.rtf else None,
    }


def main_loadtest(s: LoadSettings, as_json: bool) -> int:
    result = run_load(s, log=lambda m: print(m, file=sys.stderr))
    if as_json:
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
    else:
        for key, value in result.items():
            shown = f"{value:.3f}" if isinstance(value, float) else value
            print(f"{key:24} {shown}")
    return 0 if result["errors"] == 0 else 1
