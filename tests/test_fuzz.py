"""Hostile input, bounded: seeded mutations of valid Wyoming event streams and WebSocket sessions
(random bytes, truncations, flipped bytes, huge or negative declared lengths, events out of order,
oversized and binary messages) against real servers. Each case has a time limit; no case may crash
the server, hang it, or keep it from serving a well-formed request afterwards (checked against the
engine's own audio). What it covers is in docs/reliability.md."""

from __future__ import annotations

import json
import random
import socket
import time

import websockets.sync.client as ws_client  # noqa: E402
from servers import Server, WyomingServer

from hearth.streaming.sinks import to_pcm  # noqa: E402

CASES = 150  # per protocol
TEXT, SEED, FRAMES = "Still here after all that.", 5, 6


def wyoming_line(kind: str, data: dict | None = None, payload: bytes = b"") -> bytes:
    header: dict = {"type": kind}
    extra = b""
    if data is not None:
        extra = json.dumps(data).encode()
        header["data_length"] = len(extra)
    if payload:
        header["payload_length"] = len(payload)
    return json.dumps(header).encode() + b"\n" + extra + payload


VALID_WYOMING = [
    wyoming_line("describe"),
    wyoming_line("synthesize", {"text": "Hi there.", "voice": {"name": "ryan"}}),
    wyoming_line("synthesize-start", {"voice": {"name": "vivian"}}) + wyoming_line("synthesize-chunk", {"text": "One "})
    + wyoming_line("synthesize-chunk", {"text": "two."}) + wyoming_line("synthesize-stop"),
    wyoming_line("audio-chunk", {"rate": 24000, "width": 2, "channels": 1}, bytes(64)),
]


def mutate(rng: random.Random, seeds: list[bytes]) -> bytes:
    data = bytearray(rng.choice(seeds))
    kind = rng.randrange(8)
    if kind == 0:  # noise
        return bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 400)))
    if kind == 1 and data:  # truncated
        return bytes(data[: rng.randrange(len(data))])
    if kind == 2 and data:  # flipped bytes
        for _ in range(rng.randrange(1, 6)):
            data[rng.randrange(len(data))] = rng.getrandbits(8)
        return bytes(data)
    if kind == 3:  # a declared length that never arrives, or makes no sense
        length = rng.choice([10**12, -5, 2**63, "12", None, 3.5])
        return json.dumps({"type": "synthesize", "data_length": length, "payload_length": length}).encode() + b"\n"
    if kind == 4:  # events out of order, repeated
        pieces = [wyoming_line("synthesize-stop"), wyoming_line("synthesize-chunk", {"text": "x"}),
                  wyoming_line("synthesize-start"), wyoming_line("synthesize-start"), wyoming_line("audio-stop")]
        rng.shuffle(pieces)
        return b"".join(pieces)
    if kind == 5:  # wrong types in the data
        value = rng.choice([None, 5, [], {"a": 1}, "x" * 5000, True])
        return wyoming_line("synthesize", {"text": value, "voice": rng.choice([value, {"name": value}])})
    if kind == 6:  # a long header line
        return b'{"type": "synthesize", "data": {"text": "' + b"y" * rng.randrange(60_000, 200_000) + b'"}}\n'
    return bytes(data) + bytes(data[: rng.randrange(len(data) + 1)])  # valid, then a torn copy


def wyoming_case(port: int, blob: bytes, limit_s: float = 10.0) -> None:
    """Send `blob`, close our side, and read whatever comes until the server closes (bounded)."""
    with socket.create_connection(("127.0.0.1", port), timeout=limit_s) as s:
        try:
            s.sendall(blob)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            return  # the server closed on us first: allowed
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            try:
                if not s.recv(65536):
                    return
            except TimeoutError:
                break
            except OSError:
                return
    raise AssertionError(f"the server kept a half-closed connection open for {limit_s} s after {blob[:80]!r}")


def test_wyoming_survives_mutated_streams(tiny_dir, fast_engine):
    expected = to_pcm(fast_engine.synthesize(TEXT, "ryan", seed=SEED, max_new_tokens=FRAMES).samples, "s16")
    rng = random.Random(20261201)
    with WyomingServer(tiny_dir, "--seed", str(SEED), "--max-new-tokens", str(FRAMES)) as server:
        t0 = time.monotonic()
        for i in range(CASES):
            wyoming_case(server.port, mutate(rng, VALID_WYOMING))
            assert server.proc.poll() is None, f"case {i} ended the server:\n{server.logged()}"
        assert time.monotonic() - t0 < 240

        assert server.speak(TEXT) == expected
    assert "Traceback" not in server.stopped_log, server.stopped_log


VALID_WS = [
    {"type": "session.config", "voice": "ryan", "language": "english", "seed": SEED, "max_new_tokens": FRAMES},
    {"type": "input.text", "text": "A few words. "},
    {"type": "input.done"},
    {"type": "input.cancel"},
]


def ws_messages(rng: random.Random) -> list[str | bytes]:
    messages: list[str | bytes] = [json.dumps(m) for m in VALID_WS]
    kind = rng.randrange(6)
    if kind == 0:
        rng.shuffle(messages)
    elif kind == 1:
        i = rng.randrange(len(messages))
        messages[i] = messages[i][: rng.randrange(len(messages[i]))]  # torn JSON
    elif kind == 2:
        messages.insert(rng.randrange(len(messages)), bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 300))))
    elif kind == 3:
        value = rng.choice([None, 5, [], {"a": 1}, "z" * 5000, True, -1, 1e308])
        field = rng.choice(["voice", "language", "seed", "max_new_tokens", "response_format", "text_mode", "text"])
        message = dict(rng.choice(VALID_WS), **{field: value})
        messages.insert(rng.randrange(len(messages)), json.dumps(message))
    elif kind == 4:
        messages.insert(0, json.dumps({"type": "input.text", "text": "w " * rng.randrange(1, 40_000)}))
    else:
        messages = [json.dumps(rng.choice([[], "x", 3, {"type": 7}, {"kind": "input.text"}])) for _ in range(3)]
    return messages


def test_websocket_survives_mutated_sessions(tiny_dir):
    rng = random.Random(1201)
    with Server(tiny_dir) as server:
        url = f"ws://127.0.0.1:{server.port}/v1/audio/speech/stream"
        t0 = time.monotonic()
        for i in range(CASES):
            with ws_client.connect(url, open_timeout=10, max_size=None) as ws:
                for message in ws_messages(rng):
                    try:
                        ws.send(message)
                    except Exception:  # noqa: BLE001 - the server may close a connection it will not serve
                        break
                # Whatever comes back is bounded: an error, audio, session.done; never a hang. A
                # session quiet for 0.1 s is left (a client leaving mid-speech is a case too).
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    try:
                        reply = ws.recv(timeout=0.1)
                    except TimeoutError:
                        break
                    except Exception:  # noqa: BLE001 - closed by the server: allowed
                        break
                    if isinstance(reply, str):
                        assert json.loads(reply)["type"]  # every text reply is a typed JSON message
            assert server.proc.poll() is None, f"case {i} ended the server:\n{server.logged()}"
        assert time.monotonic() - t0 < 300
        with server.client().audio.speech.with_streaming_response.create(
            model="tts-1", voice="ryan", input=TEXT, response_format="pcm",
            extra_body={"seed": SEED, "max_new_tokens": FRAMES},
        ) as response:
            assert response.status_code == 200 and len(response.read()) == (FRAMES - 1) * 1920 * 2
    assert "Traceback" not in server.stopped_log, server.stopped_log
