"""`hearth loadtest URL`: many clients speaking to a running `hearth serve` (or, for a tcp:// URL,
`hearth wyoming`), and what they met.

Each client sends its requests one after another (read as they stream) and records the time to
the first audio byte, the request's real-time factor (wall time over audio time, for pcm and wav),
and the answer: served, busy (503, which must come at once), or an error. With `--duration` the
clients go on until the time is up; `--formats` rotates the response formats; `--cancel` makes that
share of requests leave after their first audio (the server must stop them and go on); `--hostile N`
adds N clients that send what a broken or malicious client sends (torn JSON, oversized bodies,
wrong types, a body that never comes, a connection dropped mid-request), each of which must get a
4xx (or, for the stalled and dropped ones, nothing) and never a 5xx. The server's resident memory
is read from its `/metrics` before, every minute, and after. Standard library only: a tool anyone
can point at a server.
"""

from __future__ import annotations

import contextlib
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
    duration_s: float | None = None  # go on until then (each client: at most `requests` if no duration)
    formats: tuple[str, ...] = ("pcm",)
    cancel: float = 0.0  # the share of requests that leave after their first audio
    hostile: int = 0  # clients sending hostile requests


_HOSTILE = [  # (name, raw request bytes or a callable making them) -> a 4xx, never a 5xx
    ("torn JSON", b'{"input": "Hello", "voice": "ryan"'),
    ("not an object", b'["Hello", "ryan"]'),
    ("wrong types", b'{"input": 5, "voice": [1], "speed": "fast", "seed": -1, "response_format": {}}'),
    ("unknown voice", b'{"input": "Hello there.", "voice": "nobody-at-all"}'),
    ("empty input", b'{"input": "   ", "voice": "ryan"}'),
    ("too long input", json.dumps({"input": "word " * 2000, "voice": "ryan"}).encode()),
    ("oversized body", b'{"input": "' + b"x" * (2 << 20) + b'", "voice": "ryan"}'),
    ("not UTF-8", b'{"input": "\xff\xfe", "voice": "ryan"}'),
]


@dataclass
class _Tally:
    cancelled: int = 0
    hostile: dict[str, int] = field(default_factory=dict)  # answers to hostile clients, by status class
    rss_mb: list[float] = field(default_factory=list)
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


def _one(s: LoadSettings, server: tuple[str, int], text: str, seed: int, tally: _Tally, fmt: str = "pcm",
         leave: bool = False) -> None:
    body: dict[str, Any] = {"model": "tts-1", "input": text, "voice": s.voice, "response_format": fmt, "seed": seed}
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
        if leave:  # a client that goes away: the server must stop this request and carry on
            conn.close()
            with tally.lock:
                tally.cancelled += 1
                tally.first_byte.append(t_first)
            return
        while piece := response.read1(65536):
            received += len(piece)
        wall = time.perf_counter() - t0
        conn.close()
    except OSError as e:
        with tally.lock:
            tally.errors.append(f"{type(e).__name__}: {e}")
        return
    audio_s = received / _BYTES_PER_SECOND if fmt in ("pcm", "wav") else 0.0  # others: not measured
    with tally.lock:
        tally.first_byte.append(t_first)
        tally.audio_s += audio_s
        if audio_s:
            tally.rtf.append(wall / audio_s)


def _hostile(s: LoadSettings, server: tuple[str, int], k: int, tally: _Tally) -> None:
    """One hostile request (the k-th kind); its answer is counted by status class."""
    kinds = len(_HOSTILE) + 2
    which = k % kinds
    try:
        with socket.create_connection(server, timeout=30) as sock:
            if which < len(_HOSTILE):
                body = _HOSTILE[which][1]
                head = (f"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(body)}\r\nConnection: close\r\n")
                if s.api_key:
                    head += f"Authorization: Bearer {s.api_key}\r\n"
                with contextlib.suppress(OSError):  # it may answer (413) and close before taking all of it
                    sock.sendall(head.encode() + b"\r\n" + body)
            elif which == len(_HOSTILE):  # a body announced and never sent: dropped after 2 s
                sock.sendall(b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{")
                time.sleep(2)
                outcome = "dropped"
                sock.close()
                with tally.lock:
                    tally.hostile[outcome] = tally.hostile.get(outcome, 0) + 1
                return
            else:  # a valid request dropped before its answer
                body = json.dumps({"input": TEXTS[k % len(TEXTS)], "voice": s.voice}).encode()
                sock.sendall(b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
                sock.close()
                with tally.lock:
                    tally.hostile["dropped"] = tally.hostile.get("dropped", 0) + 1
                return
            answer = b""
            while len(answer) < 12 and (piece := sock.recv(4096)):
                answer += piece
        status = int(answer[9:12]) if answer.startswith(b"HTTP/1.1 ") else 0
    except (OSError, ValueError) as e:
        with tally.lock:
            tally.errors.append(f"hostile {_HOSTILE[which][0] if which < len(_HOSTILE) else which}: {e}")
        return
    outcome = f"{status // 100}xx" if status else "no answer"
    with tally.lock:
        tally.hostile[outcome] = tally.hostile.get(outcome, 0) + 1
        if not 400 <= status < 500:
            tally.errors.append(f"hostile {_HOSTILE[which][0]}: answered {status or 'nothing'}")


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


def _server(s: LoadSettings) -> tuple[tuple[str, int], bool]:
    """The server's address, and whether it speaks Wyoming (tcp://) rather than HTTP."""
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
    if wyoming and (s.hostile or s.cancel or s.formats != ("pcm",)):
        raise ValueError("--formats, --cancel and --hostile are for http:// servers")
    return (parts.hostname, parts.port or 80), wyoming


def _summary(s: LoadSettings, tally: _Tally, requests: int, elapsed: float, wyoming: bool,
             rss_before: float | None, rss_after: float | None) -> dict[str, Any]:
    return {
        "url": s.url, "clients": s.clients, "requests": requests, "formats": list(s.formats),
        "left_early": tally.cancelled, "hostile_answers": dict(sorted(tally.hostile.items())),
        "server_rss_mb_max": max([*tally.rss_mb, *(x / 1e6 for x in (rss_before, rss_after) if x)], default=None),
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


def run_load(s: LoadSettings, log: Any = print) -> dict[str, Any]:  # noqa: ANN401 - a print-like callable
    """Every client's requests (and the hostile ones) against the server, with progress on `log`."""
    server, wyoming = _server(s)
    tally = _Tally()
    rss_before = None if wyoming else _server_rss_bytes(server, 10)
    done = [0]
    t0 = time.perf_counter()
    end = None if s.duration_s is None else t0 + s.duration_s
    stop = threading.Event()

    def more(i: int) -> bool:
        return not stop.is_set() and (time.perf_counter() < end if end is not None else i < s.requests)

    def client(k: int) -> None:
        i = 0
        while more(i):
            text = TEXTS[(k + i) % len(TEXTS)]
            if wyoming:
                _one_wyoming(s, server, text, tally)
            else:
                n = 1000 * k + i
                leave = s.cancel > 0 and (n * 0.6180339887) % 1.0 < s.cancel  # spread evenly, reproducible
                _one(s, server, text, n, tally, s.formats[(k + i) % len(s.formats)], leave)
            i += 1
            with tally.lock:
                done[0] += 1
                n = done[0]
            if end is None and n % max(1, (s.clients * s.requests) // 10) == 0:
                log(f"hearth loadtest: {n}/{s.clients * s.requests} requests")

    def hostile(k: int) -> None:
        i = 0
        while not stop.is_set() and (end is not None and time.perf_counter() < end or end is None and i < s.requests):
            _hostile(s, server, k + i * s.hostile, tally)
            i += 1
            stop.wait(0.1)  # ten a second each: hostile, not a flood

    def watch() -> None:  # progress and memory once a minute
        while not stop.wait(60):
            rss = _server_rss_bytes(server, 10)
            with tally.lock:
                if rss:
                    tally.rss_mb.append(rss / 1e6)
                line = (f"hearth loadtest: {time.perf_counter() - t0:.0f} s, {len(tally.first_byte)} served, "
                        f"{tally.cancelled} left early, {len(tally.busy)} busy, {len(tally.errors)} errors, "
                        f"hostile {dict(sorted(tally.hostile.items()))}, server RSS "
                        f"{f'{rss / 1e6:.0f} MB' if rss else 'unknown'}")
            log(line)

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(s.clients)]
    threads += [threading.Thread(target=hostile, args=(k,), daemon=True) for k in range(s.hostile)]
    watcher = threading.Thread(target=watch, daemon=True)
    if not wyoming:
        watcher.start()
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    finally:
        stop.set()
    elapsed = time.perf_counter() - t0
    rss_after = None if wyoming else _server_rss_bytes(server, 10)
    return _summary(s, tally, done[0], elapsed, wyoming, rss_before, rss_after)


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
