"""OpenAI's realtime transcription on `hearth serve --listen` (`WS /v1/realtime?intent=transcription`,
hearth/serve/realtime.py), through real clients on loopback: the openai SDK's realtime client with
today's session, `websockets` with the beta session and everything refused. A tiny random
Qwen3-ASR: its text is meaningless, so what is held is the protocol, and the transcript against
`Listener.live` run here on the same audio."""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import time

import numpy as np
import pytest
from servers import Server
from sounds import sweep

RATE = 24000  # OpenAI's pcm16
PIECE = RATE // 4  # 0.25 s, as a microphone sends it


@pytest.fixture(scope="module")
def listening(tiny_dir, asr_dir):
    """`hearth serve` with a Qwen3-ASR (qwen-asr's writer: its answers end before the token limit)."""
    with Server(tiny_dir, "--backend", "torch", "--listen", str(asr_dir), "--listen-backend", "torch") as s:
        yield s


def pcm24(seconds: float) -> np.ndarray:
    """tests/sounds.py's sweep, resampled to 24 kHz, as 16-bit samples."""
    from hearth.listen import resample

    return np.round(np.clip(resample(sweep(seconds), 16000, RATE), -1, 1) * 32767).astype("<i2")


def b64(samples: np.ndarray) -> str:
    return base64.b64encode(samples.astype("<i2").tobytes()).decode("ascii")


@functools.cache
def _server_events():
    from openai.types.realtime.realtime_server_event import RealtimeServerEvent
    from pydantic import TypeAdapter

    return TypeAdapter(RealtimeServerEvent)


def checked(raw: str | bytes) -> dict:
    """A server event, every field held to the openai SDK's types (`openai.types.realtime`'s union of
    server events); the beta `transcription_session.updated` to none, as the SDK's type of it requires a
    `client_secret` that, as its documentation says, an update over the WebSocket does not carry."""
    event = json.loads(raw)
    if event["type"] != "transcription_session.updated":
        assert _server_events().validate_json(raw).type == event["type"]
    return event


def in_process(asr_dir, pieces: list[np.ndarray], options) -> list:
    """`Listener.live`'s events for `pieces` pushed one by one, every update heard."""
    from hearth.listen import Listener, LiveOptions

    live = Listener.load(asr_dir, backend="torch").live(options, LiveOptions(), RATE)
    return [e for p in pieces for e in live.push(p)] + live.finish()


def test_the_openai_sdk_gets_the_text_while_the_audio_comes(listening, asr_dir):
    """Today's session through the SDK: deltas of kept text while the audio is appended, then at the
    commit `committed`, a last delta where the final goes on from the text sent, and `completed`.

    The transcript is the live transcription's final, and the server's equals the one made here only
    because the server heard chunk 2: each update's answer is forced to start with the last heard
    one's less its rollback, and a server behind its audio hears only the latest of the chunks
    waiting (`latest_only`), so a server that skipped chunk 2 would start chunk 3 from chunk 1's
    answer. The pause after 4.25 s makes it hear chunk 2 whatever the machine's pace: only chunk 2
    can give the first delta (with unfixed_chunks 2, chunk 1's update keeps nothing), and chunk 3
    comes after it. Whether chunk 1 was heard does not matter (chunk 2's start is not forced), and
    7 s have no chunk 4 to skip chunk 3 for (the commit hears the rest, then the tail)."""
    import openai

    from hearth.listen import ListenOptions

    audio = pcm24(7.0)
    pieces = [audio[i : i + PIECE] for i in range(0, audio.size, PIECE)]
    want = in_process(asr_dir, pieces, ListenOptions(language="English", context="Anna, Berlin"))
    assert [e.kind for e in want] == ["partial"] * 3 + ["final"]
    assert want[0].stable == 0 and want[1].stable > 0  # (the premise above: chunk 2 gives the first kept text)

    async def session() -> tuple[list, int]:
        client = openai.AsyncOpenAI(base_url=listening.url + "/v1", api_key="unused", max_retries=0)
        async with client.realtime.connect(extra_query={"intent": "transcription"}) as conn:

            async def recv():  # (as `conn.recv()` gives it, the JSON checked first)
                raw = await conn.recv_bytes()
                checked(raw)
                return conn.parse_event(raw)

            events = [await recv()]
            await conn.session.update(session={"type": "transcription", "audio": {"input": {
                "format": {"type": "audio/pcm", "rate": 24000}, "turn_detection": None,
                "transcription": {"model": "gpt-4o-transcribe", "language": "en", "prompt": "Anna, Berlin"}}}})
            events.append(await recv())
            first_delta = asyncio.Event()

            async def read() -> None:
                while True:
                    events.append(event := await recv())
                    if event.type == "conversation.item.input_audio_transcription.delta":
                        first_delta.set()
                    if event.type in ("conversation.item.input_audio_transcription.completed", "error"):
                        return

            reader = asyncio.create_task(read())
            for i, piece in enumerate(pieces):
                if i == 17:  # 4.25 s: chunk 2 heard (see above)
                    await asyncio.wait_for(first_delta.wait(), 300)
                await conn.input_audio_buffer.append(audio=b64(piece))
                await asyncio.sleep(0.25)
            before_commit = len(events)
            await conn.input_audio_buffer.commit()
            await asyncio.wait_for(reader, 300)
            return events, before_commit

    events, before_commit = asyncio.run(asyncio.wait_for(session(), 600))
    created, updated, *item = events
    assert created.type == "session.created" and created.session.type == "transcription"
    assert created.session.audio.input.format.rate == 24000 and created.session.audio.input.turn_detection is None
    assert updated.type == "session.updated"
    assert updated.session.audio.input.transcription.language == "en"
    assert updated.session.audio.input.transcription.prompt == "Anna, Berlin"
    kinds = [e.type for e in item]
    delta = "conversation.item.input_audio_transcription.delta"
    assert kinds[-1] == "conversation.item.input_audio_transcription.completed", kinds
    assert kinds.count("input_audio_buffer.committed") == 1
    assert set(kinds[:-1]) == {delta, "input_audio_buffer.committed"}
    assert kinds.index("input_audio_buffer.committed") >= before_commit - 2  # (deltas before it: streamed)
    assert kinds[0] == delta and before_commit > 2
    committed, completed = item[kinds.index("input_audio_buffer.committed")], item[-1]
    assert committed.previous_item_id is None
    assert {e.item_id for e in item} == {committed.item_id}
    assert {e.content_index for e in item if e is not committed} == {0}
    assert len({e.event_id for e in events}) == len(events)

    deltas = [e.delta for e in item if e.type == delta]
    assert all(deltas) and deltas[0] == want[1].text[: want[1].stable]
    transcript = completed.transcript
    assert transcript == want[-1].text  # the live transcription's final, as made here
    joined = "".join(deltas)
    assert joined == transcript or not transcript.startswith(joined)  # completed by the final where it goes on
    assert completed.usage.type == "duration" and completed.usage.seconds == pytest.approx(7.0)


async def _recv(ws, timeout: float = 120) -> dict:
    return checked(await asyncio.wait_for(ws.recv(), timeout))


def test_the_beta_session_and_what_is_refused(listening, asr_dir):
    """The beta `transcription_session.update` with `websockets`; semantic_vad, server_vad set wrong, G.711, an unknown
    language, an empty commit and malformed events get an `error` and change nothing (the items after
    are transcribed with the first update's language and prompt); a cleared buffer is gone (no event
    of it comes); the next items are transcribed as the engine does, each after the last."""
    from websockets.asyncio.client import connect

    from hearth.listen import ListenOptions

    first, second = pcm24(1.5), pcm24(0.5)

    async def exchange() -> tuple[list, list]:
        answers: list = []
        async with connect(listening.url.replace("http", "ws") + "/v1/realtime?intent=transcription",
                           open_timeout=10) as ws:
            created = await _recv(ws)
            assert created["type"] == "session.created" and created["event_id"].startswith("event_")

            async def ask(event: dict | str | bytes) -> dict:
                await ws.send(event if isinstance(event, (str, bytes)) else json.dumps(event))
                answers.append(await _recv(ws))
                return answers[-1]

            beta = {"type": "transcription_session.update", "session": {
                "input_audio_format": "pcm16", "turn_detection": None,
                "input_audio_transcription": {"model": "whisper-1", "language": "English", "prompt": "Anna"}}}
            await ask(beta)
            for wrong in ({"turn_detection": {"type": "server_vad", "silence_duration_ms": 5}},
                          {"turn_detection": {"type": "semantic_vad"}}, {"input_audio_format": "g711_ulaw"},
                          {"input_audio_transcription": {"language": "xx"}}):
                await ask({**beta, "event_id": "mine", "session": {**beta["session"], **wrong}})
            ga = {"type": "transcription", "audio": {"input": {"turn_detection": {"type": "server_vad",
                                                                                  "idle_timeout_ms": 5000}}}}
            await ask({"type": "session.update", "session": ga})
            await ask({"type": "session.update", "session": {"type": "transcription",
                                                             "audio": {"input": {"format": {"type": "audio/pcmu"}}}}})
            await ask({"type": "session.update", "session": {"type": "realtime"}})
            await ask({"type": "input_audio_buffer.commit"})
            await ask("{not json")
            await ask(b"\x00\x01")
            await ask({"type": "response.create"})
            await ask({"type": "input_audio_buffer.append", "audio": "%%%"})
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": b64(pcm24(2.5))}))
            assert (await ask({"type": "input_audio_buffer.clear"}))["type"] == "input_audio_buffer.cleared"
            await ask({"type": "input_audio_buffer.commit"})  # the cleared audio is gone
            items: list = []
            for audio in (first, second):
                await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": b64(audio)}))
                await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
                while (event := await _recv(ws))["type"] != "conversation.item.input_audio_transcription.completed":
                    items.append(event)
                items.append(event)
        return answers, items

    answers, items = asyncio.run(asyncio.wait_for(exchange(), 600))
    session = answers[0]
    assert session["type"] == "transcription_session.updated"
    assert session["session"]["input_audio_format"] == "pcm16" and session["session"]["turn_detection"] is None
    assert session["session"]["input_audio_transcription"] == {"model": "whisper-1", "language": "English",
                                                              "prompt": "Anna"}
    errors = [a for a in answers[1:] if a["type"] == "error"]
    codes = [(e["error"]["code"], e["error"]["param"]) for e in errors]
    assert codes == [
        ("invalid_value", "session.turn_detection.silence_duration_ms"),
        ("turn_detection_not_available", "session.turn_detection"),
        ("invalid_value", "session.input_audio_format"),
        ("invalid_value", "session.input_audio_transcription.language"),
        ("invalid_value", "session.audio.input.turn_detection.idle_timeout_ms"),
        ("invalid_value", "session.audio.input.format"),
        ("invalid_value", "session.type"),
        ("input_audio_buffer_commit_empty", None),
        ("invalid_json", None),
        ("invalid_json", None),
        ("invalid_value", "type"),
        ("invalid_value", "audio"),
        ("input_audio_buffer_commit_empty", None),
    ], codes
    assert all(e["error"]["type"] == "invalid_request_error" and e["event_id"] for e in errors)
    assert "turn_detection null" in errors[1]["error"]["message"] and "server_vad" in errors[1]["error"]["message"]
    assert [e["error"]["event_id"] for e in errors[:4]] == ["mine"] * 4
    assert "0.00ms" in errors[-1]["error"]["message"]

    committed = [e for e in items if e["type"] == "input_audio_buffer.committed"]
    completed = [e for e in items if e["type"] == "conversation.item.input_audio_transcription.completed"]
    assert len(committed) == len(completed) == 2
    assert committed[0]["previous_item_id"] is None and committed[1]["previous_item_id"] == committed[0]["item_id"]
    assert {e["item_id"] for e in items if "item_id" in e} == {c["item_id"] for c in committed}
    options = ListenOptions(language="English", context="Anna")
    for audio, done in zip((first, second), completed, strict=True):
        want = in_process(asr_dir, [audio], options)  # (under one chunk: the final alone, nothing forced)
        assert [e.kind for e in want] == ["final"] and done["transcript"] == want[0].text
        deltas = "".join(e["delta"] for e in items
                         if e["type"].endswith(".delta") and e["item_id"] == done["item_id"])
        assert deltas == done["transcript"]


def test_a_client_that_leaves_mid_item_leaves_the_server_serving(listening):
    """A client gone while an update runs: the next one is served, and the server stops cleanly."""
    from websockets.asyncio.client import connect

    url = listening.url.replace("http", "ws") + "/v1/realtime?intent=transcription"

    async def leave_then_come_back() -> dict:
        async with connect(url, open_timeout=10) as ws:
            await _recv(ws)
            # Gone at once: the append is handled before the close that follows it, so its update is
            # under way when the client leaves, however fast the machine (after a pause it may be done).
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": b64(pcm24(4.5))}))
        async with connect(url, open_timeout=10) as ws:
            await _recv(ws)
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": b64(pcm24(0.5))}))
            await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
            while (event := await _recv(ws, 300))["type"] != "conversation.item.input_audio_transcription.completed":
                assert event["type"] in ("input_audio_buffer.committed",
                                         "conversation.item.input_audio_transcription.delta"), event
            return event

    assert asyncio.run(asyncio.wait_for(leave_then_come_back(), 600))["transcript"] is not None
    deadline = time.monotonic() + 30
    while "the client went away; its 1 task(s) have ended" not in listening.logged():  # (its update awaited)
        assert time.monotonic() < deadline, listening.logged()
        time.sleep(0.1)


def test_refused_connections_say_why_and_close(listening, tiny_dir):
    """A wrong intent, a missing key, a server without --listen: one `error`, then the close."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async def refused(url: str, **kw) -> tuple[dict, int | None]:
        async with connect(url, open_timeout=10, **kw) as ws:
            event = await _recv(ws, 30)
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 30)
            return event, ws.close_code

    ws_url = listening.url.replace("http", "ws") + "/v1/realtime"
    for query in ("?model=gpt-realtime", "?intent=conversation", ""):
        event, code = asyncio.run(refused(ws_url + query))
        assert event["type"] == "error" and event["error"]["code"] == "invalid_intent" and code == 1008
        assert "?intent=transcription" in event["error"]["message"]
    with Server(tiny_dir, "--backend", "torch", "--api-key", "sesame") as keyed:
        url = keyed.url.replace("http", "ws") + "/v1/realtime?intent=transcription"
        event, code = asyncio.run(refused(url))
        assert event["error"]["code"] == "invalid_api_key" and code == 1008
        event, code = asyncio.run(refused(url, additional_headers={"Authorization": "Bearer sesame"}))
        assert event["error"]["code"] == "model_not_loaded" and code == 1008
        assert "--listen Qwen/Qwen3-ASR-0.6B" in event["error"]["message"]


def _voiced24(layout: list[tuple[str, float, int]]) -> np.ndarray:
    """sounds.voiced stretches and silences, at 24 kHz as 16-bit samples."""
    from sounds import silence, voiced

    from hearth.listen import resample

    audio = np.concatenate([voiced(s, seed) if kind == "speech" else silence(s) for kind, s, seed in layout])
    return np.round(np.clip(resample(audio, 16000, RATE), -1, 1) * 32767).astype("<i2")


def test_server_vad_cuts_the_audio_into_items_at_pauses(listening, asr_dir):
    """Today's session with server_vad, through the SDK: each stretch of speech an item (speech_started,
    speech_stopped and committed, completed) with OpenAI's times, a pause shorter than
    silence_duration_ms inside one, and the speech under way at the end ended by a commit. Each
    stretch is shorter than a chunk (no partial: its final is the model on its audio whatever the
    server's pace), so the transcripts equal `Listener.live` with the same voice activity run here."""
    import openai

    from hearth.listen import Listener, ListenOptions, LiveOptions

    audio = _voiced24([("silence", 0.6, 0), ("speech", 0.6, 1), ("silence", 0.2, 0), ("speech", 0.5, 2),
                       ("silence", 0.9, 0), ("speech", 1.0, 3), ("silence", 0.25, 0)])
    vad = LiveOptions(vad=True, vad_threshold=0.6, padding_s=0.2, silence_s=0.4)
    live = Listener.load(asr_dir, backend="torch").live(ListenOptions(language="English"), vad, RATE)
    want = live.push(audio) + live.end_speech()
    finals = [e for e in want if e.kind == "final"]
    assert [e.kind for e in want if e.kind != "partial"] == ["speech_started", "speech_stopped", "final"] * 2

    async def session() -> list:
        client = openai.AsyncOpenAI(base_url=listening.url + "/v1", api_key="unused", max_retries=0)
        async with client.realtime.connect(extra_query={"intent": "transcription"}) as conn:

            async def recv():
                raw = await conn.recv_bytes()
                checked(raw)
                return conn.parse_event(raw)

            events = [await recv()]
            await conn.session.update(session={"type": "transcription", "audio": {"input": {
                "turn_detection": {"type": "server_vad", "threshold": 0.6, "prefix_padding_ms": 200,
                                   "silence_duration_ms": 400, "create_response": False},
                "transcription": {"model": "gpt-4o-transcribe", "language": "en"}}}})
            events.append(await recv())
            for at in range(0, audio.size, PIECE):
                await conn.input_audio_buffer.append(audio=b64(audio[at : at + PIECE]))
            while sum(e.type.endswith(".completed") for e in events) < 1:
                events.append(await recv())
            await conn.input_audio_buffer.commit()
            while sum(e.type.endswith(".completed") for e in events) < 2:
                events.append(await recv())
            return events

    created, updated, *item = asyncio.run(asyncio.wait_for(session(), 600))
    td = updated.session.audio.input.turn_detection
    assert (td.type, td.threshold, td.prefix_padding_ms, td.silence_duration_ms) == ("server_vad", 0.6, 200, 400)
    kinds = [e.type for e in item if not e.type.endswith(".delta")]
    assert kinds == ["input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped",
                     "input_audio_buffer.committed", "conversation.item.input_audio_transcription.completed"] * 2
    started = [e for e in item if e.type == "input_audio_buffer.speech_started"]
    stopped = [e for e in item if e.type == "input_audio_buffer.speech_stopped"]
    committed = [e for e in item if e.type == "input_audio_buffer.committed"]
    completed = [e for e in item if e.type.endswith(".completed")]
    ids = [e.item_id for e in started]
    assert len(set(ids)) == 2 and [e.item_id for e in stopped] == [e.item_id for e in completed] == ids
    assert [c.previous_item_id for c in committed] == [None, ids[0]]
    starts = [e for e in want if e.kind == "speech_started"]
    stops = [e for e in want if e.kind == "speech_stopped"]
    assert [e.audio_start_ms for e in started] == [round(e.offset * 1000) for e in starts]
    assert [e.audio_end_ms for e in stopped] == [round((e.offset + e.audio_s) * 1000) for e in stops]
    assert 350 <= started[0].audio_start_ms <= 600 and 2400 <= started[1].audio_start_ms <= 2800
    assert [c.transcript for c in completed] == [e.text for e in finals]
    for done in completed:
        deltas = "".join(e.delta for e in item if e.type.endswith(".delta") and e.item_id == done.item_id)
        assert deltas == done.transcript


def test_a_session_that_sends_nothing_is_closed_after_the_idle_timeout(tiny_dir, asr_dir):
    """`--idle-timeout`: a session silent that long gets its speech under way (server_vad) transcribed,
    then an `error` saying why, then a normal close; the server serves the next session."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosedOK

    audio = _voiced24([("silence", 0.4, 0), ("speech", 1.0, 1)])  # speech to the end: under way at the timeout

    async def idle(url: str) -> tuple[list, float]:
        async with connect(url, open_timeout=10) as ws:
            events = [await _recv(ws)]
            await ws.send(json.dumps({"type": "session.update", "session": {"type": "transcription", "audio": {
                "input": {"turn_detection": {"type": "server_vad"}}}}}))
            events.append(await _recv(ws))
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": b64(audio)}))
            t0 = time.monotonic()
            with pytest.raises(ConnectionClosedOK):
                while True:
                    events.append(await _recv(ws, 60))
            return events, time.monotonic() - t0, ws.close_code

    with Server(tiny_dir, "--backend", "torch", "--listen", str(asr_dir), "--listen-backend", "torch",
                "--idle-timeout", "2") as server:
        url = server.url.replace("http", "ws") + "/v1/realtime?intent=transcription"
        events, waited, code = asyncio.run(asyncio.wait_for(idle(url), 120))
        kinds = [e["type"] for e in events[2:] if not e["type"].endswith(".delta")]
        assert kinds == ["input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped",
                         "input_audio_buffer.committed", "conversation.item.input_audio_transcription.completed",
                         "error"], kinds
        assert events[-1]["error"]["code"] == "session_idle_timeout" and "--idle-timeout" in events[-1]["error"][
            "message"]
        assert waited >= 2.0 and code == 1000
        assert "idle for 2 s, closed" in server.logged()
