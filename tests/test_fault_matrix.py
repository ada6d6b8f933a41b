"""One client's failure never reaches the others: faults injected at each stage (`hearth.reliability.faults`,
`HEARTH_FAULTS=all`: a stage fails for text holding its marker) for one of four concurrent requests,
over HTTP (the openai client), the WebSocket (websockets) and Wyoming (the wyoming package's client),
against live servers.

One at a time (`--max-batch 1`) every sentence is computed alone, so the other three requests, and
the one after, must give exactly the engine's audio; the failing request gets a clear error (HTTP
500 with OpenAI's envelope, a `sentence_failed` event and its next sentence spoken, Wyoming's
`synthesis-failed`), and `/health` counts the failure under its stage. A client that vanishes
mid-chunk is the last row of the matrix. Batched (`--max-batch 4`), a runtime call computes every
row at once: its failure fails the rows of that call and nothing after, and a request that comes
whole beside the failing one is exactly its audio alone; worker threads that die are
started again and counted. A worker that keeps dying ends the process with a non-zero exit code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
import urllib.error
import urllib.request

import openai
import pytest
from servers import Server, WyomingServer
from threads import at_once
from websockets.sync.client import connect
from wyoming.client import AsyncTcpClient
from wyoming.tts import Synthesize, SynthesizeVoice

from hearth.reliability import faults
from hearth.streaming.sinks import to_pcm
from hearth.text.sentences import split_sentences

FRAMES = 8
CLEAN = [  # (text, voice, language, seed)
    ("Good evening, the lights are off. The door is locked!", "ryan", "english", 5),
    ("Zweiter Satz hier. Und noch einer.", "aiden", "german", 6),
    ("第三个请求。很短。", "vivian", "chinese", 7),
]
WYOMING_SEED = 11  # (a Wyoming server samples every request from its --seed)


def marked(stage: str) -> tuple[str, str, str, int]:
    return f"The fourth one says {faults.marker(stage)} right here. Then it goes on.", "serena", "english", 8


def expected(engine, text, voice, language, seed, mode="whole") -> list[bytes]:
    return [to_pcm(engine.synthesize(t, voice, language, seed=seed + i, max_new_tokens=FRAMES, text_mode=mode)
                   .samples, "s16") for i, t in enumerate(split_sentences(text))]


def health(server) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(server.url + "/health", timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


# -- the three protocols: (what came, per sentence where the protocol says) ----------------------------


def http_speak(server, spec, vanish=False):
    text, voice, language, seed = spec
    client = server.client(timeout=120)
    try:
        with client.audio.speech.with_streaming_response.create(
                model="tts-1", voice=voice, input=text, response_format="pcm",
                extra_body={"language": language, "seed": seed, "max_new_tokens": FRAMES}) as response:
            if vanish:
                next(response.iter_bytes(1920))
                return "vanished"
            try:
                return response.read()
            except Exception as e:  # noqa: BLE001 - the stream ended before its end (HTTP says no more after a 200)
                return CutShort(e)
    except openai.InternalServerError as e:
        return e


class CutShort:
    def __init__(self, error: BaseException):
        self.error = error

    def __repr__(self) -> str:
        return f"CutShort({self.error!r})"


def ws_speak(server, spec, vanish=False, live_first=False):
    """A session, its text in 9-character pieces. `live_first`: the words before the marker first,
    the rest once audio has come (so the sentence is being spoken while its text arrives)."""
    text, voice, language, seed = spec
    with connect(f"ws://127.0.0.1:{server.port}/v1/audio/speech/stream", open_timeout=10, max_size=None) as ws:
        ws.send(json.dumps({"type": "session.config", "voice": voice, "language": language, "seed": seed,
                            "max_new_tokens": FRAMES}))
        held = text.index("fault_") if live_first else 0
        if held:
            ws.send(json.dumps({"type": "input.text", "text": text[:held]}))
        sentences: dict[int, bytes] = {}
        errors, current = [], None

        def take() -> bool:
            nonlocal current
            m = ws.recv(timeout=60)
            if isinstance(m, bytes):
                sentences[current] += m
                return True
            message = json.loads(m)
            if message["type"] == "audio.start":
                current = message["sentence_index"]
                sentences[current] = b""
            elif message["type"] == "error":
                errors.append(message)
            return message["type"] != "session.done"

        while held and not any(sentences.values()):
            take()
        for k in range(held, len(text), 9):
            ws.send(json.dumps({"type": "input.text", "text": text[k : k + 9]}))
        ws.send(json.dumps({"type": "input.done"}))
        while take():
            if vanish and any(sentences.values()):
                return "vanished"
        return sentences, errors


def wyoming_speak(port, spec, vanish=False):
    text, voice, _, _ = spec

    async def go():
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Synthesize(text=text, voice=SynthesizeVoice(name=voice)).event())
            audio = b""
            while True:
                event = await client.read_event()
                assert event is not None
                if event.type == "error":
                    return event.data
                if event.type == "audio-chunk":
                    if vanish:
                        return "vanished"
                    audio += event.payload
                if event.type == "audio-stop":
                    return audio

    return asyncio.run(asyncio.wait_for(go(), 120))


STAGES = ["text_feed", "embedding", "talker", "predictor", "vocoder", "channel", "vanish"]
# An HTTP request's text, and a Wyoming synthesis's sentences, come whole: they have no text feed.
WHOLE_TEXT_STAGES = [s for s in STAGES if s != "text_feed"]


def faulty_server(model, *flags: str):
    """A `hearth serve` with every fault stage armed (for marked texts only), stopped cleanly."""
    with Server(model, *flags, env={**os.environ, "HEARTH_FAULTS": "all"}) as server:
        yield server


@pytest.fixture(scope="module")
def one_at_a_time(tiny_dir):
    yield from faulty_server(tiny_dir, "--max-batch", "1")


@pytest.mark.parametrize("stage", WHOLE_TEXT_STAGES)
def test_http_fault_stays_with_its_request(one_at_a_time, fast_engine, stage):
    specs = [CLEAN[0], CLEAN[1], marked(stage), CLEAN[2]]
    got = at_once([lambda s=s, k=k: http_speak(one_at_a_time, s, vanish=stage == "vanish" and k == 2)
                   for k, s in enumerate(specs)])
    for k in (0, 1, 3):
        text, voice, language, seed = specs[k]
        assert got[k] == b"".join(expected(fast_engine, text, voice, language, seed)), (stage, k, got[k])
    if stage == "vanish":
        assert got[2] == "vanished"
    else:
        assert isinstance(got[2], openai.InternalServerError), got[2]
        assert f"injected fault at stage '{stage}'" in got[2].message
        assert got[2].body["type"] == "server_error"
    text, voice, language, seed = CLEAN[0]
    assert http_speak(one_at_a_time, CLEAN[0]) == b"".join(expected(fast_engine, text, voice, language, seed))


@pytest.mark.parametrize("stage", STAGES)
def test_websocket_fault_stays_with_its_sentence(one_at_a_time, fast_engine, stage):
    specs = [CLEAN[0], CLEAN[1], marked(stage), CLEAN[2]]
    got = at_once([lambda s=s, k=k: ws_speak(one_at_a_time, s, vanish=stage == "vanish" and k == 2,
                                             live_first=k == 2 and stage != "vanish")
                   for k, s in enumerate(specs)])
    for k in (0, 1, 3):
        text, voice, language, seed = specs[k]
        sentences, errors = got[k]
        assert not errors, errors
        assert list(sentences.values()) == expected(fast_engine, text, voice, language, seed, "interleaved"), k
    if stage == "vanish":
        assert got[2] == "vanished"
    else:
        sentences, errors = got[2]
        assert [e["code"] for e in errors] == ["sentence_failed"], errors
        assert f"injected fault at stage '{stage}'" in errors[0]["message"]
        text, voice, language, seed = specs[2]
        rest = expected(fast_engine, text.split(". ", 1)[1], voice, language, seed + 1, "interleaved")
        assert sentences.get(1) == rest[0]  # the next sentence is spoken, exactly


def test_health_counts_each_failure_under_its_stage(one_at_a_time):
    """One failure at each stage (over HTTP; the text feed's over the WebSocket) adds one under that
    stage to /health and the metrics, and a client that vanishes adds none. Counted from what the
    server had counted before, whichever of this module's tests ran first."""
    from servers import metrics

    _, before = health(one_at_a_time)
    talker_before = metrics(one_at_a_time).get('hearth_failures_total{stage="talker"}', 0)
    for stage in WHOLE_TEXT_STAGES:
        http_speak(one_at_a_time, marked(stage), vanish=stage == "vanish")
    ws_speak(one_at_a_time, marked("text_feed"), live_first=True)
    ws_speak(one_at_a_time, CLEAN[1], vanish=True)
    status, body = health(one_at_a_time)
    assert status == 200 and body["status"] == "ok" and body["restarts"] == {}, body
    added = {stage: body["failures"].get(stage, 0) - before["failures"].get(stage, 0) for stage in STAGES}
    assert added == {"text_feed": 1, "embedding": 1, "talker": 1, "predictor": 1, "vocoder": 1, "channel": 1,
                     "vanish": 0}, (before, body)
    values = metrics(one_at_a_time)
    assert values['hearth_failures_total{stage="talker"}'] == talker_before + 1 and values["hearth_healthy"] == 1


@pytest.fixture(scope="module")
def wyoming(tiny_dir):
    with WyomingServer(tiny_dir, "--seed", str(WYOMING_SEED), "--max-new-tokens", str(FRAMES), "--max-batch", "1",
                           env={**os.environ, "HEARTH_FAULTS": "all"}) as server:
        yield server
    assert "Traceback" not in server.stopped_log, server.stopped_log


@pytest.mark.parametrize("stage", WHOLE_TEXT_STAGES)
def test_wyoming_fault_stays_with_its_synthesis(wyoming, fast_engine, stage):
    specs = [CLEAN[0], CLEAN[1], marked(stage), CLEAN[2]]
    got = at_once([lambda s=s, k=k: wyoming_speak(wyoming.port, s, vanish=stage == "vanish" and k == 2)
                   for k, s in enumerate(specs)])
    for k in (0, 1, 3):  # (the wyoming client sends no language beside a voice's name: auto)
        text, voice, _, _ = specs[k]
        assert got[k] == b"".join(expected(fast_engine, text, voice, "auto", WYOMING_SEED)), (stage, k)
    if stage == "vanish":
        assert got[2] == "vanished"
    else:
        assert got[2]["code"] == "synthesis-failed" and f"stage '{stage}'" in got[2]["text"], got[2]
        assert f"failed at {stage}" in wyoming.logged()
    text, voice, _, _ = CLEAN[1]
    assert wyoming_speak(wyoming.port, CLEAN[1]) == b"".join(expected(fast_engine, text, voice, "auto", WYOMING_SEED))


# -- batched: shared calls, and worker threads that die --------------------------------------------------


@pytest.fixture(scope="module")
def batched(tiny_dir):
    yield from faulty_server(tiny_dir, "--max-batch", "4")


@pytest.mark.parametrize("stage", ["talker", "predictor", "batcher", "scheduler", "vocoder_thread"])
def test_batched_failure_ends_with_its_call_and_the_server_heals(batched, fast_engine, stage):
    specs = [CLEAN[0], marked(stage), CLEAN[2], CLEAN[1]]
    got = at_once([lambda s=s: http_speak(batched, s) for s in specs])
    assert isinstance(got[1], openai.InternalServerError) and stage in got[1].message, got[1]
    for k in (0, 2, 3):  # whole, or failed beside it in the same call (or the same dead thread): a 500, or a
        # stream cut short where its audio had started (HTTP has no way to say more after the 200)
        assert isinstance(got[k], bytes | CutShort) or isinstance(
            got[k], openai.InternalServerError) and "injected fault" in got[k].message, (stage, k, got[k])
        if isinstance(got[k], bytes):  # whole: exactly its audio alone (docs/determinism.md)
            assert got[k] == b"".join(expected(fast_engine, *specs[k])), (stage, k)
    text, voice, language, seed = CLEAN[0]
    deadline = time.monotonic() + 10
    while health(batched)[0] != 200:  # a dead worker is started again within its backoff
        assert time.monotonic() < deadline, health(batched)
        time.sleep(0.05)
    assert http_speak(batched, CLEAN[0]) == b"".join(expected(fast_engine, text, voice, language, seed))
    status, body = health(batched)
    if stage in ("batcher", "scheduler"):
        assert body["restarts"][stage] >= 1, body
    elif stage == "vocoder_thread":
        assert body["restarts"]["stream_threads"] >= 1, body
    else:
        assert body["failures"][stage] >= 1, body


def test_a_worker_that_keeps_dying_ends_the_process(tiny_dir):
    server = Server(tiny_dir, env={**os.environ, "HEARTH_FAULTS": "scheduler"})
    try:
        for _ in range(8):
            if server.proc.poll() is not None:
                break
            with contextlib.suppress(Exception):  # (the server may be on its way out)
                http_speak(server, marked("scheduler"))
            time.sleep(0.3)
        server.proc.wait(timeout=30)
    finally:
        if server.proc.poll() is None:
            server.stop()
    log = server.logged()
    assert server.proc.returncode not in (0, None), log
    assert "died too often" in log, log


# -- hostile bodies: nesting refused before it is parsed ---------------------------------------------------


NESTED = "[" * 100_000 + "]" * 100_000  # 200 kB, under every size limit; Python's parser would recurse 100,000 deep


def test_deeply_nested_json_is_bad_input_everywhere(one_at_a_time, wyoming, fast_engine):
    request = urllib.request.Request(one_at_a_time.url + "/v1/audio/speech", method="POST",
                                     data=('{"model": "tts-1", "voice": "ryan", "input": ' + NESTED + "}").encode(),
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(request, timeout=30)
    assert e.value.code == 400
    assert "nests deeper than 32" in json.loads(e.value.read())["error"]["message"]
    with connect(f"ws://127.0.0.1:{one_at_a_time.port}/v1/audio/speech/stream", max_size=None) as ws:
        ws.send('{"type": "input.text", "text": ' + NESTED + "}")
        message = json.loads(ws.recv(timeout=30))
        assert message["type"] == "error" and "nests deeper" in message["message"]
        ws.send(json.dumps({"type": "session.config", "voice": "ryan", "seed": 1, "max_new_tokens": 4}))
        ws.send(json.dumps({"type": "input.text", "text": "Still open."}))
        ws.send(json.dumps({"type": "input.done"}))
        kinds = []
        while not kinds or kinds[-1] != "session.done":
            m = ws.recv(timeout=60)
            if isinstance(m, str):
                kinds.append(json.loads(m)["type"])
        assert "error" not in kinds

    async def wyoming_nested():
        reader, writer = await asyncio.open_connection("127.0.0.1", wyoming.port)
        deep = "[" * 30_000 + "]" * 30_000  # a header line under the 64 kB limit
        extra = ('{"text": "x", "n": ' + NESTED + "}").encode()
        writer.write(('{"type": "synthesize", "data": ' + deep + "}\n").encode())
        writer.write(json.dumps({"type": "synthesize", "data_length": len(extra)}).encode() + b"\n" + extra)
        await writer.drain()
        events = []
        for _ in range(2):
            line = await asyncio.wait_for(reader.readline(), 30)
            header = json.loads(line)
            data = json.loads(await reader.readexactly(header["data_length"])) if header.get("data_length") else {}
            events.append((header["type"], data.get("text", "")))
        writer.close()
        return events

    events = asyncio.run(wyoming_nested())
    assert [kind for kind, _ in events] == ["error", "error"] and all("nests deeper" in t for _, t in events), events
    assert "Traceback" not in wyoming.logged() and "Traceback" not in one_at_a_time.logged()
