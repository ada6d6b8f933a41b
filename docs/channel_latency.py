"""Threads per streaming request, and the servers' first byte minus the engine's first audio.

Not part of the package or the suite: the numbers in the #23 closing note and docs/performance.md
("Request channel") come from

    python -m hearth.tools.random_checkpoint /tmp/tiny06 --size tiny
    python docs/channel_latency.py /tmp/tiny06 [--requests 20]

`hearth serve`'s app runs in this process (uvicorn on a thread, loopback), so both moments are read
on one clock: the engine's first audio is when the vocoder returned a request's first chunk (its
`decode` is wrapped here), the first byte when the client received it: over HTTP (`openai`-style
POST), the WebSocket (one `session.config`, the text, `input.done`) and Wyoming (`synthesize`, its
own asyncio server in this process, playback eager). Threads per request: the
threads alive while 4 streaming requests are held open mid-stream, minus those before the first,
over 4 (shared threads, such as the batcher's, count once), with the threads by name.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import statistics
import sys
import threading
import time

import uvicorn
from websockets.sync.client import connect
from wyoming.audio import AudioChunk
from wyoming.client import AsyncTcpClient
from wyoming.server import AsyncTcpServer
from wyoming.tts import Synthesize, SynthesizeVoice

from hearth.engine import load
from hearth.scheduler import Scheduler
from hearth.serve.http import ServerState, create_app
from hearth.serve.wyoming import Session, WyomingState


def names() -> dict[str, int]:
    """Live threads by name, numbers stripped (hearth-vocoder-3 -> hearth-vocoder)."""
    out: dict[str, int] = {}
    for t in threading.enumerate():
        key = t.name.rstrip("0123456789_-").split("_")[0] or t.name
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


class WyomingOnAThread:
    """A Wyoming server sharing the engine and scheduler, on an event loop of its own thread."""

    def __init__(self, engine, scheduler):
        service = WyomingState(config=engine.config, model_name="hearth", seed=1, max_new_tokens=8,
                               playback="eager")
        service.engine, service.scheduler = engine, scheduler
        service.ready.set()
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.server = AsyncTcpServer("127.0.0.1", 0)
        self.call(self.server.start(lambda reader, writer: Session(reader, writer, service)))
        self.port = self.server._server.sockets[0].getsockname()[1]  # port 0: the one the system picked

    def call(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=300)

    def first_byte(self, text: str) -> float:
        """One synthesis: the moment its first audio chunk came (the rest is read to the end)."""

        async def run() -> float:
            async with AsyncTcpClient("127.0.0.1", self.port) as client:
                await client.write_event(Synthesize(text=text, voice=SynthesizeVoice(name="ryan")).event())
                while not AudioChunk.is_type((await client.read_event()).type):
                    pass
                first = time.monotonic()
                while (event := await client.read_event()) is not None and event.type != "audio-stop":
                    pass
                return first

        return self.call(run())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--backend", default=None)
    parser.add_argument("--max-batch", type=int, default=4, help="streams stepped together (1: one at a time)")
    args = parser.parse_args()
    engine = load(args.model, **({"backend": args.backend} if args.backend else {}))
    decoded: list[float] = []
    decode = engine.vocoder.decode

    def timed_decode(*a, **k):  # the engine's audio, the moment it exists
        out = decode(*a, **k)
        decoded.append(time.monotonic())
        return out

    engine.vocoder.decode = timed_decode  # type: ignore[method-assign]
    state = ServerState(model_name="hearth")
    state.engine, state.scheduler = engine, Scheduler(engine, max_active=8, max_waiting=8,
                                                        max_batch=args.max_batch)
    state.ready.set()
    server = uvicorn.Server(uvicorn.Config(create_app(state), host="127.0.0.1", port=0, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]

    def open_request(text: str, tokens: int) -> http.client.HTTPResponse:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        body = {"input": text, "voice": "ryan", "response_format": "pcm", "seed": 1, "max_new_tokens": tokens}
        conn.request("POST", "/v1/audio/speech", json.dumps(body), {"Content-Type": "application/json"})
        return conn.getresponse()

    idle = threading.active_count()  # before any request: the engine's warm worker pair, uvicorn
    idle_names = names()
    text = "Hello there, this is one sentence."
    config = {"type": "session.config", "voice": "ryan", "seed": 1, "response_format": "pcm", "max_new_tokens": 8}
    wyoming = WyomingOnAThread(engine, state.scheduler)

    def engine_first() -> float:  # the engine's own first audio (as `hearth say` gets it)
        stream = engine.stream(text, "ryan", seed=1, max_new_tokens=8)
        next(c for c in stream if c.frames)
        first = time.monotonic()
        stream.close()
        return first

    def http_first() -> float:
        response = open_request(text, 8)
        response.read1(1)
        first = time.monotonic()
        response.read()
        return first

    def websocket_first() -> float:
        with connect(f"ws://127.0.0.1:{port}/v1/audio/speech/stream", open_timeout=30) as ws:
            ws.send(json.dumps(config))
            ws.send(json.dumps({"type": "input.text", "text": text}))
            ws.send(json.dumps({"type": "input.done"}))
            while not isinstance(ws.recv(timeout=120), bytes):
                pass
            first = time.monotonic()
            while True:  # to the session's end
                message = ws.recv(timeout=120)
                if isinstance(message, str) and json.loads(message)["type"] == "session.done":
                    return first

    ways = {"engine": engine_first, "http": http_first, "websocket": websocket_first,
            "wyoming": lambda: wyoming.first_byte(text)}
    # Interleaved, one of each per round (the host's noise moves between minutes): from the call to
    # the first audio, and (servers) from the vocoder's return of the first chunk to the first byte.
    totals: dict[str, list[float]] = {name: [] for name in ways}
    after_decode: dict[str, list[float]] = {name: [] for name in ways if name != "engine"}
    for i in range(args.requests + 2):  # two rounds to warm up
        for name, way in ways.items():
            start, t0 = len(decoded), time.monotonic()
            first = way()
            if i >= 2:
                totals[name].append((first - t0) * 1000)
                if name != "engine":
                    after_decode[name].append((first - decoded[start]) * 1000)
    time.sleep(0.5)
    long = " ".join(f"Sentence {i} goes on for a while, and then it goes on some more." for i in range(12))
    held = [open_request(long, 2000) for _ in range(4)]
    for response in held:
        response.read1(1)
    busy, busy_names = 0, {}
    for _ in range(20):  # the most seen while the four generate
        if threading.active_count() > busy:
            busy, busy_names = threading.active_count(), names()
        time.sleep(0.02)
    for response in held:
        response.close()
    def p50(values: list[float]) -> float:
        return round(statistics.median(values), 2)

    print(json.dumps({"first_audio_ms_p50": {name: p50(v) for name, v in totals.items()},
                      "over_the_engine_ms": {name: p50([t - e for t, e in zip(v, totals["engine"], strict=True)])
                                             for name, v in totals.items() if name != "engine"},
                      "after_the_first_decode_ms_p50": {name: p50(v) for name, v in after_decode.items()},
                      "after_the_first_decode_ms_p95": {name: round(sorted(v)[int(0.95 * (len(v) - 1))], 2)
                                                        for name, v in after_decode.items()},
                      "threads_idle": idle, "threads_with_4_streams": busy,
                      "threads_per_stream": (busy - idle) / 4,
                      "by_name_idle": idle_names, "by_name_with_4_streams": busy_names}))
    sys.stdout.flush()
    server.should_exit = True
    state.scheduler.close()
    engine.close()


if __name__ == "__main__":
    main()
