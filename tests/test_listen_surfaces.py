"""Every surface of listening, and word timestamps of Hearth's speech on each, through real clients:
`hearth transcribe` and `hearth say --captions` as commands, `hearth serve --listen --aligner` with
the openai SDK, requests and websockets (and schemathesis on the listening routes), `hearth wyoming
--listen` with Home Assistant's wyoming client. Tiny random checkpoints: the text and times are
meaningless, so the structure is what is held."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance
from servers import Server, WyomingServer

TEXT = "It's 21.5 °C in Berlin today. See you at 7:30 pm, Anna!"
SPEECH = {"input": TEXT, "voice": "ryan", "response_format": "pcm", "max_new_tokens": 8, "seed": 4}


def wav_bytes(seconds: float = 1.5, rate: int = 44100, channels: int = 2) -> bytes:
    x = (0.3 * np.random.default_rng(1).standard_normal((int(rate * seconds), channels)) * 32767).astype("<i2")
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(x.tobytes())
    return out.getvalue()


def hearth_cmd(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hearth.cli", *args], input=stdin, capture_output=True,
                          timeout=600, check=False)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    path = tmp_path_factory.mktemp("rec") / "speech.wav"
    path.write_bytes(wav_bytes())
    return path


@pytest.fixture(scope="module")
def listening(tiny_dir, own_asr_dir, own_aligner_dir):
    """`hearth serve` with both listening models beside the speech model."""
    with Server(tiny_dir, "--backend", "torch", "--listen", str(own_asr_dir), "--aligner", str(own_aligner_dir)) as s:
        yield s


# -- hearth transcribe -----------------------------------------------------------------------------

def test_transcribe_prints_the_text_and_only_the_text(own_asr_dir, recording):
    done = hearth_cmd("transcribe", str(recording), "--model", str(own_asr_dir), "--max-new-tokens", "6")
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().endswith("\n") and b"transcribed" in done.stderr
    piped = hearth_cmd("transcribe", "-", "--model", str(own_asr_dir), "--max-new-tokens", "6",
                       stdin=recording.read_bytes())
    assert piped.stdout == done.stdout


def test_transcribe_live_from_raw_pcm_on_stdin_follows_the_api(own_asr_dir, recording):
    """`... | hearth transcribe --live -`: raw PCM (16-bit, any rate and channels) read as it comes;
    each segment's final text is a line on stdout, and with --json every update is a line of JSON:
    the same events as `Listener.live` gives for the same audio. A file is fed the same way."""
    from hearth.listen import Listener, ListenOptions, LiveOptions, decode_audio

    audio = decode_audio(recording.read_bytes())  # 1.5 s of 44.1 kHz stereo
    pcm = np.round(np.clip(audio.samples, -1, 1) * 32767).astype("<i2")
    live = ("--model", str(own_asr_dir), "--backend", "torch", "--max-new-tokens", "6", "--chunk-s", "0.5",
            "--segment-s", "1")
    listener = Listener.load(own_asr_dir, backend="torch")
    session = listener.live(ListenOptions(max_new_tokens=6), LiveOptions(chunk_s=0.5, max_segment_s=1),
                            sample_rate=audio.sample_rate)
    want = session.push(pcm.reshape(-1, 2)) + session.finish()
    assert [e.kind for e in want] == ["partial", "partial", "final", "partial", "final"]

    lines = hearth_cmd("transcribe", "--live", "-", "--rate", "44100", "--channels", "2", *live, stdin=pcm.tobytes())
    assert lines.returncode == 0, lines.stderr.decode()
    assert lines.stdout.decode("utf-8") == "".join(e.text + "\n" for e in want if e.kind == "final")
    assert b"of audio heard" in lines.stderr
    as_json = hearth_cmd("transcribe", "--live", "-", "--rate", "44100", "--channels", "2", "--json", *live,
                         stdin=pcm.tobytes())
    got = [json.loads(line) for line in as_json.stdout.decode("utf-8").splitlines()]
    assert [(g["type"], g["segment"], g["audio_s"], g["text"], g["stable"]) for g in got] == [
        (e.kind, e.segment, round(e.audio_s, 3), e.text, e.stable) for e in want]
    from_file = hearth_cmd("transcribe", "--live", str(recording), *live)
    assert from_file.stdout == lines.stdout


def test_transcribe_live_with_vad_gives_a_line_to_each_stretch_of_speech(own_asr_dir):
    """`--live --vad`: silence is not heard, each stretch of speech is a segment whose final is a line
    (--json: the speech events too), as `Listener.live` with voice activity gives them."""
    from sounds import silence, voiced

    from hearth.listen import Listener, ListenOptions, LiveOptions

    audio = np.concatenate([silence(0.7), voiced(1.1, 1), silence(0.8), voiced(0.9, 2), silence(0.7)])
    pcm = np.round(audio * 32767).astype("<i2")
    listener = Listener.load(own_asr_dir, backend="torch")
    session = listener.live(ListenOptions(max_new_tokens=6), LiveOptions(chunk_s=0.5, vad=True, silence_s=0.4))
    want = session.push(pcm) + session.finish()
    assert [e.kind for e in want if e.kind != "partial"] == ["speech_started", "speech_stopped", "final"] * 2
    args = ("transcribe", "--live", "-", "--vad", "--silence-s", "0.4", "--chunk-s", "0.5", "--model",
            str(own_asr_dir), "--backend", "torch", "--max-new-tokens", "6")
    lines = hearth_cmd(*args, stdin=pcm.tobytes())
    assert lines.returncode == 0, lines.stderr.decode()
    assert lines.stdout.decode("utf-8") == "".join(e.text + "\n" for e in want if e.kind == "final")
    as_json = hearth_cmd(*args, "--json", stdin=pcm.tobytes())
    got = [json.loads(line) for line in as_json.stdout.decode("utf-8").splitlines()]
    assert [(g["type"], g["segment"], g["offset"], g["audio_s"], g["text"]) for g in got] == [
        (e.kind, e.segment, round(e.offset, 3), round(e.audio_s, 3), e.text) for e in want]
    wrong = hearth_cmd(*args[:-2], "--vad-threshold", "1.5", stdin=pcm.tobytes())
    assert wrong.returncode == 2 and b"vad_threshold must be" in wrong.stderr


def test_transcribe_live_refuses_what_it_cannot_give(own_asr_dir):
    for extra, says in ((("--timestamps",), b"--timestamps is not given live"),
                        (("--chunk-s", "0"), b"chunk_s must be"),
                        (("--rate", "1000"), b"sample rate")):
        done = hearth_cmd("transcribe", "--live", "-", "--model", str(own_asr_dir), "--backend", "torch", *extra,
                          stdin=np.zeros(16000, "<i2").tobytes())
        assert done.returncode == 2 and says in done.stderr, done.stderr.decode()
        assert done.stdout == b""
    empty = hearth_cmd("transcribe", "--live", "-", "--model", str(own_asr_dir), "--backend", "torch", stdin=b"")
    assert empty.returncode == 2 and b"no audio came" in empty.stderr


def test_transcribe_takes_the_compiled_runtimes_weights(own_asr_dir, recording):
    """--weights reaches the compiled runtime: fp32 on ONNX Runtime transcribes as the torch reference."""
    args = ("transcribe", str(recording), "--model", str(own_asr_dir), "--max-new-tokens", "6")
    torch_ref = hearth_cmd(*args, "--backend", "torch")
    fp32 = hearth_cmd(*args, "--backend", "onnxruntime", "--weights", "fp32")
    assert fp32.returncode == 0, fp32.stderr.decode()
    assert fp32.stdout == torch_ref.stdout
    assert any((Path(os.environ["HEARTH_CACHE"]) / "onnxruntime").glob("asr-fp32-*"))  # the fp32 conversion
    wrong = hearth_cmd(*args, "--weights", "int3")
    assert wrong.returncode == 2 and b"int8" in wrong.stderr


def test_transcribe_json_has_words_and_their_places(own_asr_dir, own_aligner_dir, recording, tmp_path):
    captions = tmp_path / "out.srt"
    done = hearth_cmd("transcribe", str(recording), "--model", str(own_asr_dir), "--max-new-tokens", "6", "--json",
                      "--timestamps", "--aligner", str(own_aligner_dir), "--language", "en", "--context", "Hearth",
                      "--captions", str(captions))
    assert done.returncode == 0, done.stderr.decode()
    body = json.loads(done.stdout)
    assert set(body) == {"language", "text", "duration", "words"} and body["duration"] == pytest.approx(1.5)
    for w in body["words"]:
        assert w["start"] <= w["end"] and body["text"][w["text_start"]:w["text_end"]].replace("'", "")
    assert captions.read_text(encoding="utf-8").startswith("1\n") or not body["text"].strip()


@pytest.mark.parametrize("args, message", [
    (["/nonexistent.wav"], "no such file"),
    (["-"], "empty"),
    (["{text}"], "not audio"),
    (["{wav}", "--language", "Klingon"], "unknown language"),
])
def test_transcribe_refuses_bad_input_with_exit_2(own_asr_dir, recording, tmp_path, args, message):
    text = tmp_path / "notes.wav"
    text.write_text("not a recording", encoding="utf-8")
    args = [a.format(text=text, wav=recording) for a in args]
    done = hearth_cmd("transcribe", *args, "--model", str(own_asr_dir), stdin=b"")
    assert done.returncode == 2 and message in done.stderr.decode() and done.stdout == b""


# -- POST /v1/audio/transcriptions -----------------------------------------------------------------

def test_the_openai_sdk_transcribes_unchanged(listening, recording):
    client = listening.client()
    with recording.open("rb") as f:
        plain = client.audio.transcriptions.create(model="whisper-1", file=f)
    assert isinstance(plain.text, str)
    with recording.open("rb") as f:
        verbose = client.audio.transcriptions.create(model="whisper-1", file=f, response_format="verbose_json",
                                                     timestamp_granularities=["word", "segment"], language="en",
                                                     prompt="Names: Hearth.")
    assert verbose.language == "english" and verbose.duration == pytest.approx(1.5)
    assert verbose.segments and verbose.segments[0].start == 0.0
    assert all(w.start <= w.end for w in verbose.words or [])
    for fmt in ("text", "srt", "vtt"):
        with recording.open("rb") as f:
            body = client.audio.transcriptions.create(model="x", file=f, response_format=fmt)
        assert isinstance(body, str) and (fmt != "vtt" or body.startswith("WEBVTT"))
    with recording.open("rb") as f:
        events = list(client.audio.transcriptions.create(model="x", file=f, stream=True))
    assert [e.type for e in events][-1] == "transcript.text.done"
    assert events[-1].text == "".join(e.delta for e in events[:-1])


def test_bad_recordings_are_refused_and_harm_nothing(listening, recording):
    url = listening.url + "/v1/audio/transcriptions"
    for data, message in ((b"", "empty"), (b"GIF89a not audio", "not audio")):
        r = requests.post(url, files={"file": ("x.wav", data)}, data={"model": "x"}, timeout=60)
        assert r.status_code == 400 and message in r.json()["error"]["message"] and r.json()["error"]["param"] == "file"
    r = requests.post(url, files={"file": ("x.wav", recording.read_bytes())}, data={"language": "xx"}, timeout=60)
    assert r.status_code == 400 and r.json()["error"]["param"] == "language"
    r = requests.post(url, files={"file": ("x.wav", recording.read_bytes())}, data={"temperature": "0.4"}, timeout=60)
    assert r.status_code == 200 and "temperature is ignored" in r.headers["X-Hearth-Warning"]


def test_a_server_without_the_models_says_how_to_start_with_them(server, recording):
    r = requests.post(server.url + "/v1/audio/transcriptions", files={"file": ("x.wav", recording.read_bytes())},
                      timeout=60)
    assert r.status_code == 400 and "--listen" in r.json()["error"]["message"]
    r = requests.post(server.url + "/dev/captioned_speech", json=SPEECH, timeout=60)
    assert r.status_code == 400 and "--aligner" in r.json()["error"]["message"]
    doc = requests.get(server.url + "/openapi.json", timeout=30).json()
    assert "/v1/audio/transcriptions" not in doc["paths"]
    assert doc["components"]["schemas"]["Speech"]["properties"]["word_timestamps"]["anyOf"][0]["const"] is False


# -- word timestamps over HTTP and the WebSocket --------------------------------------------------

def _check_words(words, total_s):
    times = [t for w in words for t in (w["start_time"], w["end_time"])]
    assert words and times == sorted(times) and times[-1] <= total_s + 1e-3
    assert any(TEXT[w["source_start"]:w["source_end"]] == "21.5 °C" for w in words)
    assert TEXT[words[0]["source_start"]:words[0]["source_end"]] == "It's"


def test_captioned_speech_streams_lines_and_answers_whole(listening):
    r = requests.post(listening.url + "/dev/captioned_speech", json=SPEECH, timeout=120)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in r.text.splitlines()]
    audio = b"".join(base64.b64decode(line["audio"]) for line in lines)
    words = [w for line in lines for w in line["timestamps"]]
    _check_words(words, len(audio) / 2 / 24000)
    whole = requests.post(listening.url + "/dev/captioned_speech", json={**SPEECH, "stream": False}, timeout=120)
    assert base64.b64decode(whole.json()["audio"]) == audio and whole.json()["timestamps"] == words


def test_sse_carries_timestamp_events_after_each_sentence(listening):
    r = requests.post(listening.url + "/v1/audio/speech", json={**SPEECH, "stream_format": "sse",
                                                                "word_timestamps": True}, timeout=120)
    events = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: ")]
    kinds = [e["type"] for e in events]
    assert kinds.count("speech.audio.timestamps") == 2 and kinds[-1] == "speech.audio.done"
    audio = b"".join(base64.b64decode(e["audio"]) for e in events if e["type"] == "speech.audio.delta")
    _check_words([w for e in events if e["type"] == "speech.audio.timestamps" for w in e["words"]],
                 len(audio) / 2 / 24000)
    bare = requests.post(listening.url + "/v1/audio/speech", json={**SPEECH, "word_timestamps": True}, timeout=120)
    assert bare.content == audio and "stream_format sse" in bare.headers["X-Hearth-Warning"]


def test_the_websocket_sends_timestamps_after_each_sentence(listening):
    from websockets.sync import client as ws_client

    with ws_client.connect(listening.url.replace("http", "ws") + "/v1/audio/speech/stream", open_timeout=10) as ws:
        ws.send(json.dumps({"type": "session.config", "voice": "ryan", "max_new_tokens": 8, "seed": 4,
                            "word_timestamps": True}))
        for piece in ("It's 21", ".5 °C in Berlin to", "day. See you at 7:30 pm, Anna!"):
            ws.send(json.dumps({"type": "input.text", "text": piece}))
        ws.send(json.dumps({"type": "input.done"}))
        kinds, words, audio = [], [], 0
        for _ in range(10_000):
            m = ws.recv(timeout=120)
            if isinstance(m, bytes):
                audio += len(m)
                continue
            m = json.loads(m)
            kinds.append(m["type"])
            words += m.get("words", [])
            if m["type"] in ("session.done", "error"):
                break
    assert kinds.count("timestamps") == 2 and kinds[-1] == "session.done"
    assert kinds.index("timestamps") > kinds.index("audio.done")
    _check_words(words, audio / 2 / 24000)


def test_hearth_say_writes_captions(tiny_dir, own_aligner_dir, tmp_path):
    for suffix in ("vtt", "srt", "json"):
        out = tmp_path / f"c.{suffix}"
        done = hearth_cmd("say", TEXT, "--model", str(tiny_dir), "--backend", "torch", "--voice", "ryan",
                          "--max-new-tokens", "8", "--out", str(tmp_path / "s.wav"), "--captions", str(out),
                          "--aligner", str(own_aligner_dir))
        assert done.returncode == 0, done.stderr.decode()
        text = out.read_text(encoding="utf-8")
        if suffix == "json":
            _check_words(json.loads(text)["words"], 30.0)
        else:
            assert "It's 21.5 °C in Berlin today." in text and "-->" in text
    bad = hearth_cmd("say", TEXT, "--model", str(tiny_dir), "--captions", str(tmp_path / "c.txt"))
    assert bad.returncode == 2 and ".vtt, .srt or .json" in bad.stderr.decode()


# -- schemathesis on the listening routes -----------------------------------------------------------

@pytest.fixture(scope="module")
def listening_schema(listening):
    return schemathesis.openapi.from_url(listening.url + "/openapi.json")


listening_routes = schemathesis.pytest.from_fixture("listening_schema").include(
    path_regex="^/(v1/audio/transcriptions|dev/captioned_speech)$")


@listening_routes.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_listening_routes_keep_their_document(case):
    """The routes a server with both listening models adds or changes (word_timestamps true)."""
    if isinstance(case.body, dict) and case.operation.path in ("/dev/captioned_speech", "/v1/audio/speech"):
        n = case.body.get("max_new_tokens")  # (as tests/test_schema.py bounds it: a schema-violating value stays)
        if n is None or (isinstance(n, int | float) and not isinstance(n, bool) and n > 3):
            case.body["max_new_tokens"] = 3
    # A schema-valid upload whose `file` is not a recording is refused (no schema can say "audio"), and
    # so is a schema-valid `input` with text_format ssml that is no SSML document (nor "well-formed XML").
    case.call_and_validate(timeout=60, excluded_checks=[positive_data_acceptance])


# -- Wyoming speech to text ------------------------------------------------------------------------

def test_wyoming_streams_the_transcript_while_the_audio_comes(tiny_dir, asr_dir):
    """Streaming transcripts as Home Assistant reads them: audio sent at about real time, and
    `transcript-start` then `transcript-chunk`s arrive while it is still being sent; after
    `audio-stop`, `transcript` (the whole recording's text, as without streaming) and
    `transcript-stop`. The chunks joined are the start of the text each update kept, completed by
    the transcript where it goes on from them."""
    from sounds import sweep
    from wyoming.asr import Transcribe
    from wyoming.audio import AudioChunk, AudioStart, AudioStop
    from wyoming.client import AsyncTcpClient

    pcm = np.round(sweep(8.0) * 32767).astype("<i2").tobytes()
    step = 16000 * 2 // 4  # 0.25 s

    async def exchange(port: int) -> tuple[list, int]:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Transcribe().event())
            await client.write_event(AudioStart(rate=16000, width=2, channels=1).event())
            events: list = []
            reader = asyncio.create_task(_read_until(client, "transcript-stop", events))
            for i in range(0, len(pcm), step):
                await client.write_event(AudioChunk(rate=16000, width=2, channels=1, audio=pcm[i:i + step]).event())
                await asyncio.sleep(0.25)  # as a microphone sends it
            before_stop = len(events)
            await client.write_event(AudioStop().event())
            await reader
            return events, before_stop

    # (qwen-asr's writer: its transcripts end before the token limit, as real ones do)
    listening = ("--listen", str(asr_dir), "--listen-backend", "torch")
    with WyomingServer(tiny_dir, "--backend", "torch", *listening) as wyoming:
        events, before_stop = asyncio.run(asyncio.wait_for(exchange(wyoming.port), 300))
    types = [e.type for e in events]
    assert types[0] == "transcript-start" and types[-2:] == ["transcript", "transcript-stop"], types
    assert set(types[1:-2]) == {"transcript-chunk"}, types
    assert before_stop >= 2 and types[1] == "transcript-chunk"  # streamed while the audio came
    chunks = "".join(e.data["text"] for e in events if e.type == "transcript-chunk")
    text = events[-2].data["text"]
    assert all(e.data["text"] for e in events if e.type == "transcript-chunk")
    assert chunks == text or not text.startswith(chunks)  # completed by the transcript where it goes on


async def _read_until(client, last: str, into: list) -> None:
    while True:
        event = await client.read_event()
        assert event is not None, into
        into.append(event)
        if event.type == last:
            return


def test_wyoming_transcribes_with_home_assistant_s_client(tiny_dir, own_asr_dir):
    from wyoming.asr import Transcribe
    from wyoming.audio import AudioChunk, AudioStart, AudioStop
    from wyoming.client import AsyncTcpClient
    from wyoming.info import Describe

    pcm = np.frombuffer(wav_bytes(1.0, 22050, 2)[44:], "<i2").tobytes()

    async def exchange(port: int) -> list:
        got = []
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Describe().event())
            got.append(await client.read_event())
            await client.write_event(Transcribe(language="en", transcript_names=["Hearth"]).event())
            await client.write_event(AudioStart(rate=22050, width=2, channels=2).event())
            for i in range(0, len(pcm), 4096):
                await client.write_event(AudioChunk(rate=22050, width=2, channels=2, audio=pcm[i:i + 4096]).event())
            await client.write_event(AudioStop().event())
            streamed = [await client.read_event()]
            while streamed[-1].type != "transcript-stop":
                streamed.append(await client.read_event())
            types = [e.type for e in streamed]
            assert types[0] == "transcript-start" and types[-2:] == ["transcript", "transcript-stop"], types
            assert set(types[1:-2]) <= {"transcript-chunk"}, types
            got.append(streamed[-2])
            await client.write_event(AudioStart(rate=100, width=2, channels=1).event())
            got.append(await client.read_event())
        return got

    with WyomingServer(tiny_dir, "--backend", "torch", "--listen", str(own_asr_dir)) as wyoming:
        info, transcript, refused = asyncio.run(asyncio.wait_for(exchange(wyoming.port), 300))
        assert [p["name"] for p in info.data["asr"]] == ["hearth-asr"] and info.data["tts"]
        assert info.data["asr"][0]["supports_transcript_streaming"] is True
        assert "en" in info.data["asr"][0]["models"][0]["languages"]
        assert transcript.type == "transcript" and isinstance(transcript.data["text"], str)
        assert refused.type == "error" and "4000 to 384000 Hz" in refused.data["text"]
        assert wyoming.speak("Still speaking.")  # the speech side is untouched
