"""`hearth loadtest URL`: many clients speaking to a running `hearth serve` (or, for a tcp:// URL,
`hearth wyoming`), and what they met.

Each client sends its requests one after another (pcm, read as it streams) and records the time to
the first audio byte, the request's real-time factor (wall time over audio time), and the answer:
served, busy (503, which must come at once), or an error. The server's resident memory is read
from its `/metrics` before and after. Standard library only: a tool anyone can point at a server.
"""

from __future__ import annotations

import http.client
import json
import queue
import re
import socket
import statistics
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, BinaryIO, cast

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
    words_per_second: float = 15.0  # Wyoming: how fast the text arrives (an LLM writing)


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


def _one_wyoming(s: LoadSettings, server: tuple[str, int], text: str, tally: _Tally) -> None:
    from wyoming.event import Event, read_event, write_event

    words = re.findall(r"\s*\S+", text)
    first_end = next((i for i, w in enumerate(words) if w.rstrip()[-1] in ".!?;。！？；"), len(words) - 1)
    events: queue.Queue[tuple[float, Any]] = queue.Queue()
    t0 = time.perf_counter()
    try:
        with socket.create_connection(server, timeout=s.timeout_s) as sock, sock.makefile("rwb") as pair:
            f = cast(BinaryIO, pair)

            def receive() -> None:
                try:
                    while (event := read_event(f)) is not None:
                        events.put((time.perf_counter(), event))
                        if event.type == "synthesize-stopped":
                            break
                except (OSError, ValueError):
                    pass
                events.put((time.perf_counter(), None))

            reader = threading.Thread(target=receive, daemon=True)
            reader.start()
            write_event(Event("synthesize-start", {"voice": {"name": s.voice}}), f)
            sentence_end = t0
            for i, word in enumerate(words):
                write_event(Event("synthesize-chunk", {"text": word}), f)
                f.flush()
                if i == first_end:
                    sentence_end = time.perf_counter()
                time.sleep(1 / s.words_per_second)
            write_event(Event("synthesize", {"text": text, "voice": {"name": s.voice}}), f)  # as clients do
            write_event(Event("synthesize-stop"), f)
            f.flush()
            first, received, error = None, 0, None
            while True:
                at, event = events.get(timeout=s.timeout_s)
                if event is None or event.type == "synthesize-stopped":
                    break
                if event.type == "audio-chunk":
                    first = at if first is None else first
                    received += len(event.payload or b"")
                elif event.type == "error":
                    error = event.data.get("text")
            wall = time.perf_counter() - t0
    except (OSError, queue.Empty) as e:
        with tally.lock:
            tally.errors.append(f"{type(e).__name__}: {e}")
        return
    with tally.lock:
        if error and "busy" in error:
            tally.busy.append(wall)
        elif error or first is None:
            tally.errors.append(error or "no audio")
        else:
            tally.first_byte.append(first - sentence_end)
            tally.audio_s += received / _BYTES_PER_SECOND
            tally.rtf.append(wall / (received / _BYTES_PER_SECOND))


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_load(s: LoadSettings, log: Any = print) -> dict[str, Any]:
    parts = urllib.parse.urlsplit(s.url if "://" in s.url else f"http://{s.url}")
    if parts.scheme not in ("http", "tcp") or not parts.hostname or parts.scheme == "tcp" and not parts.port:
        raise ValueError(f"the URL must look like http://HOST:PORT (hearth serve) or tcp://HOST:PORT (hearth "
                         f"wyoming), got {s.url!r}")
    wyoming = parts.scheme == "tcp"
    if wyoming:
        try:
            import wyoming as _  # noqa: F401
        except ImportError:
            raise ValueError("a tcp:// (Wyoming) load test needs the wyoming package: "
                             "pip install 'hearth-tts[wyoming]'") from None
    server = (parts.hostname, parts.port or 80)
    tally = _Tally()
    rss_before = None if wyoming else _server_rss_bytes(server, 10)
    done = [0]

    def client(k: int) -> None:
        for i in range(s.requests):
            text = TEXTS[(k + i) % len(TEXTS)]
            if wyoming:
                _one_wyoming(s, server, text, tally)
            else:
                _one(s, server, text, 1000 * k + i, tally)
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
    rss_after = None if wyoming else _server_rss_bytes(server, 10)
    return {
        "url": s.url, "clients": s.clients, "requests": s.clients * s.requests,
        "served": len(tally.first_byte), "busy_503": len(tally.busy), "errors": len(tally.errors),
        "error_details": tally.errors[:10],
        "first_byte_p50_s": _percentile(tally.first_byte, 0.5), "first_byte_p95_s": _percentile(tally.first_byte, 0.95),
        "first_byte_from": "the end of the first sentence" if wyoming else "the request",
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
