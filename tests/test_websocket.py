"""`hearth serve`'s WebSocket `/v1/audio/speech/stream`, through a real WebSocket client (`websockets`).

Text goes in as pieces; audio must start before the text is complete, each sentence's audio must
equal the engine's interleaved-mode audio of that sentence (seed + i), a cancel must stop the
session at once and say what was sent, and bad input must get an error without losing the
connection.
"""

from __future__ import annotations

import json
import time

import pytest
import websockets.sync.client as ws_client  # noqa: E402
from servers import Server

from hearth.text.normalize import normalize
from hearth.text.sentences import split_sentences

TEXT = "Hello there, my good friend, welcome back home tonight. 你好，欢迎回家。 The third one, with 3.5 cups!"
SEED, FRAMES = 17, 12



def connect(server, **kw):
    return ws_client.connect(f"ws://127.0.0.1:{server.port}/v1/audio/speech/stream", open_timeout=10, **kw)


def receive(ws, timeout=120):
    """The next message: a dict for JSON text, bytes for audio."""
    message = ws.recv(timeout=timeout)
    return json.loads(message) if isinstance(message, str) else message


def session(ws, pieces, hold_last_until_audio=True, **config):
    """One session: config, the pieces (the last held back until audio has come), input.done; then
    every message up to session.done."""
    ws.send(json.dumps({"type": "session.config", "voice": "ryan", "language": "english", "seed": SEED,
                        "max_new_tokens": FRAMES, **config}))
    for piece in pieces[:-1]:
        ws.send(json.dumps({"type": "input.text", "text": piece}))
    messages = []
    if hold_last_until_audio:
        while not any(isinstance(m, bytes) for m in messages):
            messages.append(receive(ws))
    ws.send(json.dumps({"type": "input.text", "text": pieces[-1]}))
    ws.send(json.dumps({"type": "input.done"}))
    while not (isinstance(messages[-1:] and messages[-1], dict) and messages[-1]["type"] == "session.done"):
        messages.append(receive(ws))
    return messages


def by_sentence(messages):
    """Audio bytes per sentence, checking the order of events."""
    out: dict[int, bytearray] = {}
    current = None
    for m in messages:
        if isinstance(m, bytes):
            assert current is not None, "audio outside audio.start/audio.done"
            out[current] += m
        elif m["type"] == "audio.start":
            assert current is None and m["format"] in ("pcm", "wav") and m["sample_rate"] == 24000
            current = m["sentence_index"]
            out[current] = bytearray()
        elif m["type"] == "audio.done":
            assert m["sentence_index"] == current
            current = None
    return out


def expected(engine, speed=1.0):
    from hearth.streaming.sinks import to_pcm
    from hearth.streaming.stretch import stretch

    return [to_pcm(stretch(engine.synthesize(t, "ryan", "english", seed=SEED + i, max_new_tokens=FRAMES,
                                             text_mode="interleaved").samples, speed, 24000), "s16")
            for i, t in enumerate(split_sentences(TEXT))]


def test_audio_starts_before_the_text_ends_and_equals_the_engine(server, fast_engine):
    pieces = [TEXT[:5], TEXT[5:23], TEXT[23:40], TEXT[40:70], TEXT[70:]]  # the first sentence ends at 55
    with connect(server) as ws:
        messages = session(ws, pieces)
    first_audio = next(i for i, m in enumerate(messages) if isinstance(m, bytes))
    assert first_audio < len(messages) - 1  # audio came before the last piece was sent (it was held)
    done = [m for m in messages if isinstance(m, dict) and m["type"] == "audio.done"]
    assert [m["sentence_text"] for m in done] == list(split_sentences(normalize(TEXT, "english").text))  # as said
    assert messages[-1] == {"type": "session.done", "total_sentences": 3}
    audio = by_sentence(messages)
    want = expected(fast_engine)
    assert sorted(audio) == [0, 1, 2]
    for i, pcm in enumerate(want):
        assert bytes(audio[i]) == pcm, i


def test_wav_sentences_and_a_second_session_on_one_connection(server, fast_engine):
    with connect(server) as ws:
        wav = by_sentence(session(ws, [TEXT], hold_last_until_audio=False, response_format="wav"))
        pcm = by_sentence(session(ws, [TEXT[:30], TEXT[30:]]))  # the same connection, a new session
    want = expected(fast_engine)
    for i in range(3):
        assert bytes(wav[i][:4]) == b"RIFF" and bytes(wav[i][44:]) == want[i]
        assert bytes(pcm[i]) == want[i]


def test_speed_in_session_config(server, fast_engine):
    """session.config's speed: each sentence is its audio stretched (the pitch kept: test_speed.py),
    streamed as before; an impossible speed is an error and the connection stays."""
    pieces = [TEXT[:20], TEXT[20:]]
    with connect(server) as ws:
        audio = by_sentence(session(ws, pieces, speed=1.6))
        ws.send(json.dumps({"type": "session.config", "voice": "ryan", "speed": 0}))
        m = receive(ws, timeout=30)
        assert m["type"] == "error" and "0.25 to 4.0" in m["message"]
        slow = by_sentence(session(ws, [TEXT], hold_last_until_audio=False, speed=0.7, response_format="wav"))
    for i, pcm in enumerate(expected(fast_engine, 1.6)):
        assert bytes(audio[i]) == pcm, i
    for i, pcm in enumerate(expected(fast_engine, 0.7)):
        assert bytes(slow[i][44:]) == pcm, i


def test_cancel_stops_at_once_and_says_what_was_sent(server):
    long = " ".join(["This sentence goes on and on, and it does not stop for a long while"] * 3) + "."
    with connect(server) as ws:
        ws.send(json.dumps({"type": "session.config", "voice": "ryan", "seed": 3, "max_new_tokens": 2000}))
        ws.send(json.dumps({"type": "input.text", "text": long}))
        received = 0
        while received < 3 * 1920 * 2:
            m = receive(ws)
            if isinstance(m, bytes):
                received += len(m)
        t0 = time.monotonic()
        ws.send(json.dumps({"type": "input.cancel"}))
        while True:
            m = receive(ws, timeout=30)
            if isinstance(m, bytes):
                received += len(m)
            elif m["type"] == "session.cancelled":
                break
        stop_s = time.monotonic() - t0
        assert stop_s < 5
        assert m["audio_s_sent"] == pytest.approx(received / 2 / 24000, abs=1e-3)
        consumed = m["text_consumed"]
        assert consumed and long.startswith(consumed) and len(consumed) < len(long)
        # The connection is still usable.
        pcm = by_sentence(session(ws, ["Short one."], hold_last_until_audio=False, max_new_tokens=4))
        assert len(pcm[0]) == 3 * 1920 * 2


@pytest.mark.parametrize(
    "message,fragment",
    [
        ("not json", "not valid JSON"),
        (json.dumps(["a list"]), "JSON object"),
        (json.dumps({"type": "input.text", "text": "Hi."}), "send session.config first"),
        (json.dumps({"type": "shout"}), "unknown message type"),
        (json.dumps({"type": "session.config", "voice": "nobody"}), "ryan"),  # lists the voices
        (json.dumps({"type": "session.config"}), "needs a \"voice\""),
        (json.dumps({"type": "session.config", "voice": "ryan", "response_format": "mp3"}), "'pcm' or 'wav'"),
        (json.dumps({"type": "session.config", "voice": "ryan", "seed": -1}), "seed"),
        (json.dumps({"type": "session.config", "voice": "ryan", "colour": "blue"}), "colour"),
    ],
)
def test_bad_messages_get_an_error_and_the_connection_stays(server, message, fragment):
    with connect(server) as ws:
        ws.send(message)
        m = receive(ws, timeout=30)
        assert m["type"] == "error" and fragment in m["message"], m
        pcm = by_sentence(session(ws, ["Still here."], hold_last_until_audio=False, max_new_tokens=3))
        assert len(pcm[0]) == 2 * 1920 * 2


def test_binary_and_double_config_and_text_after_done(server):
    with connect(server) as ws:
        ws.send(b"\x00\x01")
        assert "binary frames" in receive(ws, timeout=30)["message"]
        ws.send(json.dumps({"type": "session.config", "voice": "ryan", "max_new_tokens": 3}))
        ws.send(json.dumps({"type": "session.config", "voice": "ryan"}))
        assert "already open" in receive(ws, timeout=30)["message"]
        ws.send(json.dumps({"type": "input.text", "text": 5}))
        assert "string" in receive(ws, timeout=30)["message"]
        ws.send(json.dumps({"type": "input.done"}))
        assert receive(ws, timeout=30) == {"type": "session.done", "total_sentences": 0}
        ws.send(json.dumps({"type": "input.text", "text": "late"}))
        assert "needs an open session" in receive(ws, timeout=30)["message"]


def test_api_key_and_client_that_leaves(tiny_dir):
    with Server(tiny_dir, "--api-key", "sesame") as s:
        with connect(s) as ws:
            m = receive(ws, timeout=30)
            assert m["type"] == "error" and "API key" in m["message"]
            with pytest.raises(Exception, match="1008"):
                ws.recv(timeout=30)
        with connect(s, additional_headers={"Authorization": "Bearer sesame"}) as ws:
            ws.send(json.dumps({"type": "session.config", "voice": "ryan", "max_new_tokens": 4000}))
            ws.send(json.dumps({"type": "input.text", "text": "A long sentence that the client will not wait for."}))
            assert receive(ws)["type"] == "audio.start"
            assert isinstance(receive(ws), bytes)
        # Left mid-sentence: its generation stops; the server serves the next client.
        with connect(s, additional_headers={"Authorization": "Bearer sesame"}) as ws:
            pcm = by_sentence(session(ws, ["Next."], hold_last_until_audio=False, max_new_tokens=3))
            assert len(pcm[0]) == 2 * 1920 * 2
    assert "websocket session 1: cancelled, the client went away" in s.stopped_log, s.stopped_log
