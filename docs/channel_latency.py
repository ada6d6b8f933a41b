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


def wyoming_first_bytes(engine, scheduler, decoded: list[float], text: str, requests: int) -> list[float]:
    """First audio chunk minus the engine's first audio, per synthesis, from a Wyoming server on
    its own event loop in this process, sharing the engine and scheduler."""
    service = WyomingState(config=engine.config, model_name="hearth", seed=1, max_new_tokens=8, playback="eager")
    service.engine, service.scheduler = engine, scheduler
    service.ready.set()

    async def run() -> list[float]:
        server = AsyncTcpServer("127.0.0.1", 0)
        await server.start(lambda reader, writer: Session(reader, writer, service))
        port = server._server.sockets[0].getsockname()[1]  # port 0: the one the system picked
        out = []
        for i in range(requests + 2):  # two to warm up
            async with AsyncTcpClient("127.0.0.1", port) as client:
                start = len(decoded)
                await client.write_event(Synthesize(text=text, voice=SynthesizeVoice(name="ryan")).event())
                while not AudioChunk.is_type((event := await client.read_event()).type):
                    pass
                if i >= 2:
                    out.append((time.monotonic() - decoded[start]) * 1000)
                while (event := await client.read_event()) is not None and event.type != "audio-stop":
                    pass
        await server.stop()
        return out

    return asyncio.run(run())


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
    for _ in range(2):  # warm-up
        open_request("Warming up.", 6).read()
    deltas = []
    for _ in range(args.requests):
        start = len(decoded)
        response = open_request("Hello there, this is one sentence.", 8)
        response.read1(1)
        first_byte = time.monotonic()
        response.read()
        deltas.append((first_byte - decoded[start]) * 1000)
    text, config = "Hello there, this is one sentence.", {"type": "session.config", "voice": "ryan", "seed": 1,
                                                          "response_format": "pcm", "max_new_tokens": 8}
    ws_deltas = []
    for i in range(args.requests + 2):  # two to warm up
        with connect(f"ws://127.0.0.1:{port}/v1/audio/speech/stream", open_timeout=30) as ws:
            start = len(decoded)
            ws.send(json.dumps(config))
            ws.send(json.dumps({"type": "input.text", "text": text}))
            ws.send(json.dumps({"type": "input.done"}))
            while not isinstance(ws.recv(timeout=120), bytes):
                pass
            first_byte = time.monotonic()
            if i >= 2:
                ws_deltas.append((first_byte - decoded[start]) * 1000)
            while True:  # to the session's end
                message = ws.recv(timeout=120)
                if isinstance(message, str) and json.loads(message)["type"] == "session.done":
                    break
    wyoming_deltas = wyoming_first_bytes(engine, state.scheduler, decoded, text, args.requests)
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
    print(json.dumps({"first_byte_minus_first_audio_ms_p50": round(statistics.median(deltas), 2),
                      "p95": round(sorted(deltas)[int(0.95 * (len(deltas) - 1))], 2),
                      "websocket_p50": round(statistics.median(ws_deltas), 2),
                      "websocket_p95": round(sorted(ws_deltas)[int(0.95 * (len(ws_deltas) - 1))], 2),
                      "wyoming_p50": round(statistics.median(wyoming_deltas), 2),
                      "wyoming_p95": round(sorted(wyoming_deltas)[int(0.95 * (len(wyoming_deltas) - 1))], 2),
                      "threads_idle": idle, "threads_with_4_streams": busy,
                      "threads_per_stream": (busy - idle) / 4,
                      "by_name_idle": idle_names, "by_name_with_4_streams": busy_names}))
    sys.stdout.flush()
    server.should_exit = True
    state.scheduler.close()
    engine.close()


if __name__ == "__main__":
    main()
