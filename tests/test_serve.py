"""`hearth serve` as its clients meet it: a live server process on loopback, the real `openai` SDK.

Audio is checked against the engine in this process (same checkpoint, same default backend): the
server speaks sentence by sentence, sentence i with seed + i, so its pcm equals those sentences'
`synthesize` output joined; wav and flac carry the same samples; mp3, opus and aac decode to 24 kHz
audio of the expected length.
"""

from __future__ import annotations

import base64
import io
import json
import time
import urllib.error
import urllib.request

import av  # noqa: E402
import numpy as np
import openai  # noqa: E402
import pytest
import requests
from servers import Server, metrics, wait_for_metric

TEXT = "Hello there, welcome home. This is the second sentence."
SENTENCES = ["Hello there, welcome home.", "This is the second sentence."]
SEED, FRAMES = 41, 9  # max_new_tokens 9: 8 frames per sentence



@pytest.fixture(scope="module")
def expected_pcm(fast_engine):
    from hearth.streaming.sinks import to_pcm

    parts = [fast_engine.synthesize(t, "ryan", seed=SEED + i, max_new_tokens=FRAMES).samples
             for i, t in enumerate(SENTENCES)]
    return to_pcm(np.concatenate(parts), "s16")


def at_speed(engine, speed):
    """What the server must send at `speed`: each sentence's audio stretched as one stream."""
    from hearth.streaming.sinks import to_pcm
    from hearth.streaming.stretch import stretch

    parts = [stretch(engine.synthesize(t, "ryan", seed=SEED + i, max_new_tokens=FRAMES).samples, speed, 24000)
             for i, t in enumerate(SENTENCES)]
    return to_pcm(np.concatenate(parts), "s16")


def speak(server, fmt, voice="Ryan", speed=None, **extra):
    rate = {} if speed is None else {"speed": speed}  # the SDK's own parameter
    with server.client().audio.speech.with_streaming_response.create(
        model="tts-1", voice=voice, input=TEXT, response_format=fmt, **rate,
        extra_body={"seed": SEED, "max_new_tokens": FRAMES, **extra},
    ) as response:
        assert response.status_code == 200
        return response.headers, b"".join(response.iter_bytes())


def decode(data: bytes, rate: int = 24000) -> np.ndarray:
    with av.open(io.BytesIO(data)) as container:
        resampler = av.AudioResampler(format="s16", layout="mono", rate=rate)
        frames = [f for frame in container.decode(audio=0) for f in resampler.resample(frame)]
        frames += resampler.resample(None)
    return np.concatenate([f.to_ndarray().reshape(-1) for f in frames])


def test_pcm_equals_the_engine(server, expected_pcm):
    headers, data = speak(server, "pcm")
    assert headers["content-type"] == "audio/pcm"
    assert data == expected_pcm  # 2 sentences x 8 frames x 1920 samples, bit for bit


def test_openai_voice_names_speak_their_voice(server, expected_pcm):
    """OpenAI's voice names are aliases of the checkpoint's voices: echo is Ryan by default."""
    headers, data = speak(server, "pcm", voice="echo")
    assert data == expected_pcm


def test_pcm_equals_hearth_say(server, tiny_dir, fast_engine):
    """The same request as `hearth say` (same text, seed, bound and speed) gives the same samples."""
    import subprocess
    import sys

    headers, data = speak(server, "pcm", speed=1.5)
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "say", TEXT, "--model", str(tiny_dir), "--voice", "ryan",
                        "--seed", str(SEED), "--max-new-tokens", str(FRAMES), "--speed", "1.5", "--out", "-"],
                       capture_output=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout[44:] == data == at_speed(fast_engine, 1.5) and headers["x-hearth-seed"] == str(SEED)
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "say", "Hi.", "--model", str(tiny_dir), "--speed", "5",
                        "--out", "-"], capture_output=True, timeout=300, check=False)
    assert r.returncode == 2 and not r.stdout and b"0.25 to 4.0" in r.stderr


@pytest.mark.parametrize("fmt,speed", [("pcm", 2.0), ("wav", 0.5), ("flac", 1.25), ("mp3", 0.75), ("opus", 3.0),
                                       ("aac", 0.4)])
def test_speed_changes_the_rate_in_every_format(server, fast_engine, fmt, speed):
    """pcm, wav and flac carry exactly the stretched samples; the compressed formats decode to
    their length. Pitch and timing of the stretcher itself: test_speed.py."""
    want = at_speed(fast_engine, speed)
    _, data = speak(server, fmt, speed=speed)
    if fmt in ("pcm", "wav", "flac"):
        assert (data if fmt == "pcm" else decode(data).tobytes()) == want
    else:
        assert len(want) // 2 <= len(decode(data)) <= len(want) // 2 + 4096
    assert len(want) // 2 == pytest.approx(2 * 8 * 1920 / speed, abs=2)


def test_speed_one_gives_the_same_bytes(server):
    """speed 1.0 is the default, and the server does not ignore speed (another one changes the bytes)."""
    for fmt in ("mp3", "pcm"):
        plain = speak(server, fmt)[1]
        assert speak(server, fmt, speed=1.0)[1] == plain, fmt
        assert speak(server, fmt, speed=1.25)[1] != plain, fmt


@pytest.mark.parametrize("fmt", ["wav", "flac"])
def test_lossless_formats_carry_the_same_samples(server, expected_pcm, fmt):
    _, data = speak(server, fmt)
    if fmt == "wav":
        assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
        assert data[44:] == expected_pcm
    samples = decode(data)
    assert samples.tobytes() == expected_pcm


@pytest.mark.parametrize("fmt,media", [("mp3", "audio/mpeg"), ("opus", "audio/ogg"), ("aac", "audio/aac")])
def test_compressed_formats_decode_to_the_right_length(server, fmt, media):
    headers, data = speak(server, fmt)
    assert headers["content-type"] == media
    samples = decode(data)
    expected = 2 * 8 * 1920
    # Encoders add their own priming and padding (a few frames of 1024-1152 samples at most).
    assert expected <= len(samples) <= expected + 4096, len(samples)


def test_open_webui_and_home_assistant_requests(server):
    """What those clients send, field for field (no SDK): Open WebUI lists voices and models without
    a key, then posts model, input and voice only (so mp3) and reads the whole body; Home Assistant's
    OpenAI-TTS integrations post mp3 with speed and instructions and merge their extra_payload into
    the body."""
    voices = requests.get(server.url + "/v1/audio/voices", timeout=30).json()["voices"]
    assert all(isinstance(v["id"], str) and isinstance(v["name"], str) for v in voices)
    models = requests.get(server.url + "/v1/audio/models", timeout=30).json()["models"]
    body = {"model": models[0]["id"], "input": "Hi.", "voice": "alloy"}  # Open WebUI's fallback voice
    r = requests.post(server.url + "/v1/audio/speech", json=body, timeout=120)
    assert r.status_code == 200 and r.headers["content-type"] == "audio/mpeg", r.text
    assert len(decode(r.content)) >= 1920
    extra_payload = {"seed": SEED, "max_new_tokens": FRAMES}
    body = {"model": "tts-1", "input": TEXT, "voice": "echo", "response_format": "mp3", "speed": 1.25,
            "instructions": "Calm and warm.", **extra_payload}
    r = requests.post(server.url + "/v1/audio/speech", json=body, timeout=120)
    assert r.status_code == 200 and r.headers["content-type"] == "audio/mpeg", r.text
    assert "ignored" in r.headers["x-hearth-warning"]  # instructions need a 1.7B model
    assert 2 * 8 * 1920 / 1.25 <= len(decode(r.content)) <= 2 * 8 * 1920 / 1.25 + 4096


LONG = " ".join(["word"] * 50)  # one sentence whose frame budget (40 + 12 per token) is hundreds of frames


def test_default_format_is_mp3_and_audio_arrives_long_before_the_end(server):
    body = json.dumps({"model": "gpt-4o-mini-tts", "input": LONG, "voice": {"id": "vivian"},
                       "max_new_tokens": 4000}).encode()
    req = urllib.request.Request(server.url + "/v1/audio/speech", body, {"Content-Type": "application/json"})
    t0 = time.monotonic()
    with urllib.request.urlopen(req, timeout=120) as r:
        assert r.headers["Content-Type"] == "audio/mpeg"
        first = r.read1(65536)
        t_first = time.monotonic() - t0
        rest = r.read()
        t_all = time.monotonic() - t0
    assert first[:3] == b"ID3" or first[0] == 0xFF
    assert len(decode(first + rest)) >= 200 * 1920
    assert t_first < 0.25 * t_all  # streamed: the first bytes came while most of the audio was still to be made


@pytest.mark.parametrize("speed", [1.0, 0.8])
def test_sse_deltas_then_done(server, expected_pcm, fast_engine, speed):
    body = {"model": "tts-1", "input": TEXT, "voice": "ryan", "response_format": "pcm", "stream_format": "sse",
            "seed": SEED, "max_new_tokens": FRAMES, "speed": speed}
    req = urllib.request.Request(server.url + "/v1/audio/speech", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        events = [json.loads(line[6:]) for line in r.read().decode().splitlines() if line.startswith("data: ")]
    assert [e["type"] for e in events[:-1]] == ["speech.audio.delta"] * (len(events) - 1)
    assert events[-1]["type"] == "speech.audio.done" and events[-1]["usage"]["output_tokens"] == 16
    want = expected_pcm if speed == 1.0 else at_speed(fast_engine, speed)
    assert b"".join(base64.b64decode(e["audio"]) for e in events[:-1]) == want


OPENAI_VOICES = {"alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse",
                 "marin", "cedar"}  # the names OpenAI's speech API documents


def test_voices_models_health(server):
    with urllib.request.urlopen(server.url + "/v1/audio/voices") as r:
        voices = json.loads(r.read())["voices"]
    own = {v["id"] for v in voices if "alias_of" not in v}
    assert own == {"vivian", "serena", "uncle_fu", "dylan", "eric", "ryan", "aiden", "ono_anna", "sohee"}
    aliases = {v["id"]: v for v in voices if "alias_of" in v}
    assert set(aliases) == OPENAI_VOICES and all(v["alias_of"] in own for v in aliases.values())
    assert aliases["echo"]["alias_of"] == "ryan" and aliases["echo"]["name"] == "echo (Ryan)"
    ryan = next(v for v in voices if v["id"] == "ryan")
    assert ryan["name"] == "Ryan" and "english" in ryan["languages"]
    assert {m.id for m in server.client().models.list()} >= {"tts-1", "gpt-4o-mini-tts"}
    with urllib.request.urlopen(server.url + "/v1/audio/models") as r:  # Open WebUI's shape
        assert {m["id"] for m in json.loads(r.read())["models"]} >= {"tts-1", "tts-1-hd", "gpt-4o-mini-tts"}
    with urllib.request.urlopen(server.url + "/health") as r:
        assert json.loads(r.read())["status"] == "ok"


@pytest.mark.parametrize(
    "body,status,param,fragment",
    [
        ({"input": "Hi.", "voice": "bob"}, 400, "voice", "choose one of: aiden"),
        ({"input": "", "voice": "ryan"}, 400, "input", "non-empty"),
        ({"input": "x" * 4097, "voice": "ryan"}, 400, "input", "4096"),
        ({"input": "Hi.", "voice": "ryan", "speed": "fast"}, 400, "speed", "0.25 to 4.0"),
        ({"input": "Hi.", "voice": "ryan", "speed": 0.2}, 400, "speed", "0.25 to 4.0"),
        ({"input": "Hi.", "voice": "ryan", "speed": 9}, 400, "speed", "0.25 to 4.0"),
        ({"input": "Hi.", "voice": "ryan", "response_format": "ogg"}, 400, "response_format", "mp3, opus"),
        ({"input": "Hi.", "voice": "ryan", "language": "klingon"}, 400, "language", "english"),
        ({"input": "Hi.", "voice": "ryan", "seed": -1}, 400, "seed", "seed"),
        ({"input": "Hi.", "voice": "ryan", "seed": "7"}, 400, "seed", "whole number"),
        ({"input": "Hi.", "voice": "ryan", "language": 5}, 400, "language", "unknown language"),
        ({"input": "Hi.", "voice": "ryan", "max_new_tokens": True}, 400, "max_new_tokens", "at least 1"),
        ({"input": "Hi.", "voice": "ryan", "text_mode": ["whole"]}, 400, "text_mode", "interleaved"),
        ({"input": "Hi.", "voice": "ryan", "stream_format": "ws"}, 400, "stream_format", "sse"),
        ({"input": "Hi.", "voice": "ryan", "ref_audio": "data:audio/wav;base64,UklGRg=="}, 400, "ref_audio",
         "needs a Base checkpoint"),
        ("not json", 400, None, "JSON object"),
    ],
)
def test_bad_requests_get_the_openai_error_envelope(server, body, status, param, fragment):
    raw = body.encode() if isinstance(body, str) else json.dumps({"model": "tts-1", **body}).encode()
    req = urllib.request.Request(server.url + "/v1/audio/speech", raw, {"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=30)
    assert info.value.code == status
    error = json.loads(info.value.read())["error"]
    assert fragment in error["message"] and error["type"] == "invalid_request_error" and error["param"] == param


def test_voice_upload_needs_a_base_checkpoint(server):
    import requests

    r = requests.post(server.url + "/v1/audio/voices", data={"name": "me", "ref_text": "Hi."},
                      files={"audio_sample": ("ref.wav", b"RIFF" + bytes(100), "audio/wav")}, timeout=30)
    assert r.status_code == 405 and "needs a Base checkpoint" in r.json()["error"]["message"]
    assert "ryan" in r.json()["error"]["message"] and r.headers["allow"] == "GET"
    assert requests.delete(server.url + "/v1/audio/voices/ryan", timeout=30).status_code == 405
    assert requests.get(server.url + "/v1/audio/voices", timeout=30).json()["uploaded_voices"] == []


def test_sdk_maps_errors(server):
    with pytest.raises(openai.BadRequestError, match="unknown voice"):
        server.client().audio.speech.create(model="tts-1", voice="nobody", input="Hi.")
    with pytest.raises(openai.NotFoundError):
        server.client().post("/nowhere", cast_to=object, body={})


def test_body_too_large(server):
    """Refused from its Content-Length, before the body is read (a client still sending it may see
    the connection close, so this one sends only the headers and reads the answer)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.putrequest("POST", "/v1/audio/speech")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(2 << 20))
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == 413
    assert "over 1048576 bytes" in json.loads(response.read())["error"]["message"]
    conn.close()


def test_api_key_busy_and_disconnect(tiny_dir):
    """One server with a key and room for one request at a time: 401 without the key, 503 with
    Retry-After when full (at once, never a hang), and a client that leaves stops its generation."""
    with Server(tiny_dir, "--api-key", "sesame", "--max-active", "1", "--max-queue", "0",
                "--voice-alias", "Alloy=Eric") as s:
        with pytest.raises(openai.AuthenticationError):
            s.client(api_key="wrong").audio.speech.create(model="tts-1", voice="ryan", input="Hi.")
        with pytest.raises(openai.AuthenticationError):  # as OpenAI's
            s.client(api_key="wrong").models.list()
        # Open WebUI lists models and voices without its key: both answer (no stored voices in them).
        assert requests.get(s.url + "/v1/audio/models", timeout=30).status_code == 200
        listed = requests.get(s.url + "/v1/audio/voices", timeout=30).json()
        alloy = next(v for v in listed["voices"] if v["id"] == "alloy")
        assert alloy["alias_of"] == "eric"  # (a Base server's stored voices: test_serve_voices)
        client = s.client(api_key="sesame")
        # Many sentences: even if random weights end one early, the request stays admitted (two
        # sentences ahead of a reader that has stopped reading).
        held_text = " ".join([LONG + "."] * 15)
        with client.audio.speech.with_streaming_response.create(
            model="tts-1", voice="ryan", input=held_text, response_format="pcm", extra_body={"max_new_tokens": 4000},
        ) as held:
            chunks = held.iter_bytes(3840)  # kept: a dropped iterator would close the connection
            assert next(chunks)
            t0 = time.monotonic()
            try:
                client.audio.speech.create(model="tts-1", voice="ryan", input="Me too.")
            except openai.APIStatusError as e:
                refused = e
            else:
                pytest.fail(f"served while another request held the only slot; the server logged:\n{s.logged()}")
            assert refused.status_code == 503 and int(refused.response.headers["retry-after"]) >= 1
            assert time.monotonic() - t0 < 5
            assert next(chunks)  # the held request was still streaming all along
        # Leaving the block closed the connection mid-stream: the server cancels and frees its slot.
        wait_for_metric(s, "hearth_active_streams", 0)
        wait_for_metric(s, "hearth_queue_depth", 0)  # between sentences a request waits, still admitted
        again = client.audio.speech.create(model="tts-1", voice="alloy", input="Room again.", response_format="pcm",
                                           extra_body={"max_new_tokens": 5})
        assert len(again.content) == 4 * 1920 * 2
    ended = [line for line in s.stopped_log.splitlines() if "request 1: cancelled after" in line]
    assert ended, s.stopped_log
    frames = int(ended[0].split("after ")[1].split(" frames")[0])
    assert frames < 200  # stopped long before its sentence's budget of 600-odd frames ran out


def test_metrics_in_prometheus_text(server):
    speak(server, "pcm")
    with pytest.raises(openai.BadRequestError):
        server.client().audio.speech.create(model="tts-1", voice="nobody", input="Hi.")
    values = metrics(server)
    assert values['hearth_requests_total{status="200"}'] >= 1 and values['hearth_requests_total{status="400"}'] >= 1
    assert values["hearth_first_byte_seconds_count"] >= 1
    assert values['hearth_first_byte_seconds_bucket{le="+Inf"}'] == values["hearth_first_byte_seconds_count"]
    assert values["hearth_real_time_factor_count"] >= 1 and values["hearth_real_time_factor_sum"] > 0
    assert values["hearth_active_streams"] == 0 and values["hearth_queue_depth"] == 0


def test_loadtest_reports_served_and_busy(tiny_dir):
    """`hearth loadtest` against a server with room for one request: every request is served or
    answered 503 at once, none fails, and the report carries latency, RTF and the server's memory."""
    import subprocess
    import sys

    with Server(tiny_dir, "--max-active", "1", "--max-queue", "0") as s:
        r = subprocess.run([sys.executable, "-m", "hearth.cli", "loadtest", s.url, "--clients", "4", "--requests",
                            "3", "--max-new-tokens", "12", "--json"], capture_output=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr.decode()
    report = json.loads(r.stdout)
    assert report["requests"] == 12 and report["errors"] == 0
    assert report["served"] + report["busy_503"] == 12 and report["served"] >= 1
    if report["busy_503"]:
        assert report["busy_answer_max_s"] < 5
    assert 0 < report["first_byte_p50_s"] <= report["first_byte_p95_s"]
    assert report["rtf_p50"] > 0 and report["server_rss_mb_after"] > 100


def test_loadtest_soak_mode_with_cancels_and_hostile_clients(server):
    """--duration, rotated formats, clients that leave, hostile clients: nothing fails, every hostile
    request gets a 4xx (or is dropped by its own client), and the server logs no traceback."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "hearth.cli", "loadtest", server.url, "--clients", "2", "--duration", "6",
                        "--formats", "pcm,mp3,opus", "--cancel", "0.5", "--hostile", "1", "--max-new-tokens", "6",
                        "--json"], capture_output=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr.decode()
    report = json.loads(r.stdout)
    assert report["errors"] == 0 and report["served"] >= 4 and report["left_early"] >= 1, report
    assert report["formats"] == ["pcm", "mp3", "opus"]
    assert set(report["hostile_answers"]) <= {"4xx", "dropped"} and report["hostile_answers"]["4xx"] >= 5, report
    assert "Traceback" not in server.logged()
    bad = subprocess.run([sys.executable, "-m", "hearth.cli", "loadtest", server.url, "--formats", "ogg"],
                         capture_output=True, timeout=60, check=False)
    assert bad.returncode == 2 and b"--formats" in bad.stderr


def test_loading_cors_and_instructions(tiny_dir, tmp_path):
    """While a fresh cache is filled the server answers 503 "loading" (health and speech alike); browsers
    from an allowed origin get CORS headers; instructions to a 0.6B model come back as a warning."""
    import os

    env = dict(os.environ, HEARTH_CACHE=str(tmp_path / "fresh-cache"))  # the first start converts (the language
    with Server(tiny_dir, "--cors", "http://example.test", "--vocoder", "torch", env=env,  # model only)
                wait=False) as s:
        seen = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and 200 not in seen:
            try:
                with urllib.request.urlopen(s.url + "/health", timeout=2) as r:
                    seen.append(r.status)
            except urllib.error.HTTPError as e:
                seen.append(e.code)
                if e.code == 503 and seen.count(503) == 1:
                    assert json.loads(e.read())["status"] == "loading" and e.headers["Retry-After"] == "5"
                    with pytest.raises(openai.APIStatusError) as info:
                        s.client().audio.speech.create(model="tts-1", voice="ryan", input="Too early.")
                    assert info.value.status_code == 503 and "loading" in str(info.value)
            except (urllib.error.URLError, ConnectionError):
                pass  # not listening yet
            time.sleep(0.05)
        assert 503 in seen and seen[-1] == 200, seen
        preflight = urllib.request.Request(s.url + "/v1/audio/speech", method="OPTIONS", headers={
            "Origin": "http://example.test", "Access-Control-Request-Method": "POST"})
        with urllib.request.urlopen(preflight) as r:
            assert r.headers["Access-Control-Allow-Origin"] == "http://example.test"
        with s.client().audio.speech.with_streaming_response.create(
            model="tts-1", voice="ryan", input="Softly.", response_format="pcm", instructions="Whisper.",
            extra_body={"max_new_tokens": 4},
        ) as response:
            assert "ignored" in response.headers["x-hearth-warning"]
            assert len(response.read()) == 3 * 1920 * 2
