"""Cloned voices through `hearth serve`: uploaded with vLLM-Omni's multipart form (`requests`, as
people script it), spoken by name with the `openai` SDK, listed and deleted; and through
`hearth wyoming` with the `wyoming` package's client.

Audio is checked against this process's engine on the same checkpoint and backend, cloning the same
file: codes of that path equal the official package's (test_clone, test_voice_cli), so equal audio
here means the server stored, found and spoke exactly that voice.
"""

from __future__ import annotations

import asyncio
import io
import os

import numpy as np
import openai  # noqa: E402
import pytest
import requests  # noqa: E402
import soundfile
from servers import Server, WyomingServer
from test_clone import REF_TEXT, reference_audio

import hearth
from hearth.streaming.sinks import to_pcm
from hearth.voices.cloning import read_reference

TEXT = "Good morning. The bread is warm."
SENTENCES = ["Good morning.", "The bread is warm."]
SEED, FRAMES = 5, 7  # 6 frames per sentence


def wav_bytes(seconds: float, seed: int, rate: int = 16000, channels: int = 2) -> bytes:
    mono = reference_audio(seconds * rate / 24000, seed)  # reference_audio is made at 24 kHz: any rate reads it
    data = np.stack([mono] + [0.5 * mono] * (channels - 1), axis=1) if channels > 1 else mono
    out = io.BytesIO()
    soundfile.write(out, data, rate, format="WAV", subtype="PCM_16")
    return out.getvalue()


REF = wav_bytes(2.5, 4)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("voices-cache")


@pytest.fixture(scope="module")
def server(base_dir, cache):
    with Server(base_dir, "--backend", "torch", env={**os.environ, "HEARTH_CACHE": str(cache)}) as s:
        yield s


@pytest.fixture(scope="module")
def base(base_dir):
    return hearth.load(base_dir, backend="torch")


def expected(base, voice) -> bytes:
    parts = [base.synthesize(t, voice, "auto", seed=SEED + i, max_new_tokens=FRAMES).samples
             for i, t in enumerate(SENTENCES)]
    return to_pcm(np.concatenate(parts), "s16")


def upload(server, name, audio: bytes | None = REF, **fields):
    files = {"audio_sample": ("ref.wav", audio, "audio/wav")} if audio is not None else None
    return requests.post(server.url + "/v1/audio/voices", data={"name": name, **fields}, files=files, timeout=120)


def speak(server, voice, **extra) -> bytes:
    with server.client().audio.speech.with_streaming_response.create(
        model="tts-1", voice=voice, input=TEXT, response_format="pcm",
        extra_body={"seed": SEED, "max_new_tokens": FRAMES, **extra},
    ) as response:
        assert response.status_code == 200
        return b"".join(response.iter_bytes())


def listed(server) -> dict:
    r = requests.get(server.url + "/v1/audio/voices", timeout=30)
    assert r.status_code == 200
    return r.json()


def test_upload_speak_list_delete(server, base):
    assert listed(server) == {"voices": [], "uploaded_voices": []}

    r = upload(server, "Anna", ref_text=REF_TEXT, consent="rec-1")
    assert r.status_code == 200, r.text
    voice = r.json()["voice"]
    assert r.json()["success"] and voice["name"] == "anna" and voice["mode"] == "in-context"
    assert voice["consent"] == "rec-1" and voice["file_size"] == len(REF) and voice["ref_text"] == REF_TEXT
    assert abs(voice["reference_s"] - 2.5) < 0.01 and voice["created_at"] > 1.7e9
    r = upload(server, "plain", audio=wav_bytes(3.0, 8, rate=44100, channels=1), consent="rec-2")
    assert r.status_code == 200 and r.json()["voice"]["mode"] == "x-vector", r.text  # no transcript: x-vector

    voices = listed(server)
    assert [v["id"] for v in voices["voices"]] == ["anna", "plain"]
    assert [(v["name"], v["mode"], v["consent"]) for v in voices["uploaded_voices"]] == [
        ("anna", "in-context", "rec-1"), ("plain", "x-vector", "rec-2")]

    samples, rate = read_reference(REF)
    assert speak(server, "Anna") == expected(base, base.clone_voice(samples, rate, REF_TEXT))
    samples, rate = read_reference(wav_bytes(3.0, 8, rate=44100, channels=1))
    assert speak(server, "plain") == expected(base, base.clone_voice(samples, rate, x_vector_only=True))

    r = requests.delete(server.url + "/v1/audio/voices/anna", timeout=30)
    assert r.status_code == 200 and r.json() == {"success": True, "message": "Voice 'anna' deleted successfully"}
    with pytest.raises(openai.BadRequestError, match="unknown voice 'anna'.*plain"):
        speak(server, "anna")
    r = requests.delete(server.url + "/v1/audio/voices/anna", timeout=30)
    assert r.status_code == 404 and "not found" in r.json()["error"]["message"]
    assert [v["id"] for v in listed(server)["voices"]] == ["plain"]


def test_inline_reference_audio(server, base):
    """vLLM-Omni's Base task: ref_audio as a base64 data URL in the speech request itself."""
    import base64

    url = "data:audio/wav;base64," + base64.b64encode(REF).decode()
    samples, rate = read_reference(REF)
    got = speak(server, "whoever", ref_audio=url, ref_text=REF_TEXT, task_type="Base")
    assert got == expected(base, base.clone_voice(samples, rate, REF_TEXT))
    got = speak(server, "whoever", ref_audio=url)  # no transcript: the speaker embedding alone
    assert got == expected(base, base.clone_voice(samples, rate, x_vector_only=True))
    for extra, fragment in [({"ref_audio": "https://example.com/a.wav"}, "fetches no URLs"),
                            ({"ref_audio": "data:audio/wav;base64,@@@"}, "not valid base64"),
                            ({"ref_audio": "data:audio/wav;base64," + base64.b64encode(b"RIFF").decode()},
                             "cannot read the reference audio"),
                            ({"ref_text": "Hi."}, "ref_audio, which is missing"),
                            ({"ref_audio": url, "task_type": "CustomVoice"}, "needs a CustomVoice checkpoint"),
                            ({"task_type": "Clone"}, "task_type must be one of")]:
        with pytest.raises(openai.BadRequestError, match=fragment):
            speak(server, "whoever", **extra)


@pytest.mark.parametrize(
    "name,audio,fields,status,fragment",
    [
        ("plain2", wav_bytes(0.5, 1), {}, 400, "at least 1 s"),
        ("quiet", bytes(wav_bytes(2.0, 1)[:44]) + bytes(64000), {}, 400, "silent"),
        ("junk", b"RIFF" + bytes(3000), {}, 400, "cannot read the reference audio"),
        ("long", wav_bytes(31.0, 2, rate=8000, channels=1), {}, 400, "at most 30 s"),
        ("bad name!", REF, {}, 400, "letters, digits"),
        ("", REF, {}, 400, "name is missing"),
        ("nofile", None, {}, 400, "multipart/form-data with the fields name, audio_sample"),
        ("big", bytes(11 << 20), {}, 413, "10 MB"),
        ("flag", REF, {"x_vector_only_mode": "maybe"}, 400, "true or false"),
    ],
    ids=["short", "silent", "junk", "long", "bad-name", "no-name", "no-file", "too-big", "bad-flag"],
)
def test_bad_uploads_are_refused_and_the_server_keeps_serving(server, name, audio, fields, status, fragment):
    r = upload(server, name, audio, **fields)
    assert r.status_code == status, r.text
    assert fragment in r.json()["error"]["message"]
    assert requests.get(server.url + "/health", timeout=30).json()["status"] == "ok"


def webm_bytes(seconds: float, seed: int) -> bytes:
    """Opus in WebM, as a browser's MediaRecorder makes it (libsndfile cannot read it; FFmpeg can)."""
    import av

    out = io.BytesIO()
    samples = reference_audio(seconds, seed)
    with av.open(out, "w", format="webm") as container:
        stream = container.add_stream("libopus", rate=48000)
        stream.layout = "mono"
        resampler = av.AudioResampler(format="s16", layout="mono", rate=48000)
        frame = av.AudioFrame.from_ndarray(samples[None, :], format="flt", layout="mono")
        frame.sample_rate = 24000
        for piece in resampler.resample(frame) + resampler.resample(None):
            for packet in stream.encode(piece):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return out.getvalue()


def test_a_browser_recording_is_read_with_ffmpeg(server, base):
    data = webm_bytes(2.0, 21)
    r = requests.post(server.url + "/v1/audio/voices", data={"name": "webm"},
                      files={"audio_sample": ("rec.webm", data, "audio/webm")}, timeout=120)
    assert r.status_code == 200, r.text
    assert abs(r.json()["voice"]["reference_s"] - 2.0) < 0.05  # Opus pads a little
    samples, rate = read_reference(data)
    assert rate == 48000 and speak(server, "webm") == expected(base, base.clone_voice(samples, rate,
                                                                                      x_vector_only=True))
    assert requests.delete(server.url + "/v1/audio/voices/webm", timeout=30).status_code == 200


def test_duplicates_and_the_wrong_body(server):
    assert upload(server, "twin").status_code == 200
    r = upload(server, "TWIN")  # names ignore case, as vLLM-Omni's
    assert r.status_code == 400 and "Voice 'twin' already exists" in r.json()["error"]["message"]
    r = requests.post(server.url + "/v1/audio/voices", json={"name": "x"}, timeout=30)
    assert r.status_code == 400 and "multipart/form-data" in r.json()["error"]["message"]
    assert requests.delete(server.url + "/v1/audio/voices/twin", timeout=30).status_code == 200


def test_stored_voices_through_wyoming(base_dir, base, tmp_path):
    """A voice added with `hearth voice add`'s code path is listed by `describe` and spoken by name,
    one-shot and streamed (an in-context voice starts each sentence once it is complete)."""
    from wyoming.client import AsyncTcpClient
    from wyoming.info import Describe, Info
    from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice

    from hearth.voices.cloning import Cloner, VoiceStore

    samples, rate = read_reference(REF)
    Cloner(base.checkpoint, VoiceStore(tmp_path / "voices")).add("Bea", samples, rate, REF_TEXT)
    want = expected(base, base.clone_voice(samples, rate, REF_TEXT))
    async def go():
        async with AsyncTcpClient("127.0.0.1", s.port) as client:
            await client.write_event(Describe().event())
            info = Info.from_event(await client.read_event())
            await client.write_event(Synthesize(text=TEXT, voice=SynthesizeVoice(name="bea")).event())
            one_shot = await audio_until(client, "audio-stop")
            await client.write_event(SynthesizeStart(voice=SynthesizeVoice(name="bea")).event())
            for piece in ("Good mor", "ning. The br", "ead is warm."):
                await client.write_event(SynthesizeChunk(text=piece).event())
            await client.write_event(SynthesizeStop().event())
            streamed = await audio_until(client, "synthesize-stopped")
            await client.write_event(Synthesize(text="Hi.", voice=SynthesizeVoice(name="nobody")).event())
            refused = await client.read_event()
            return info, one_shot, streamed, refused

    with WyomingServer(base_dir, "--backend", "torch", "--seed", str(SEED), "--max-new-tokens", str(FRAMES),
                       env={**os.environ, "HEARTH_CACHE": str(tmp_path)}) as s:
        info, one_shot, streamed, refused = asyncio.run(asyncio.wait_for(go(), timeout=240))
    assert [v.name for v in info.tts[0].voices] == ["bea"] and "cloned" in info.tts[0].voices[0].description
    assert one_shot == want and streamed == want
    assert refused.type == "error" and "unknown voice 'nobody'" in refused.data["text"]
    assert "bea" in refused.data["text"]


async def audio_until(client, last: str) -> bytes:
    data = b""
    for _ in range(10_000):
        event = await client.read_event()
        assert event is not None and event.type != "error", event and event.data
        if event.type == "audio-chunk":
            data += event.payload
        if event.type == last:
            return data
    raise AssertionError(f"no {last}")


def test_a_designed_voice_over_http_and_wyoming_needs_its_instructions(tmp_path):
    """A VoiceDesign server: the voice OpenAI's clients must send is ignored, the instructions make
    the voice (the engine's audio for them); without instructions, a 400 that says so. `hearth
    wyoming` refuses to start without --instruct."""
    import subprocess
    import sys

    from hearth.tools.random_checkpoint import as_model_type, tiny_configs, write_checkpoint

    config, codec = tiny_configs("1b7", hidden=96, layers=2, predictor_hidden=48)
    design_dir = write_checkpoint(tmp_path / "design", as_model_type(config, "voice_design"), codec, seed=43)
    design = hearth.load(design_dir, backend="torch")
    instruct = "A deep, slow voice."
    parts = [design.synthesize(t, None, "auto", instruct=instruct, seed=SEED + i, max_new_tokens=FRAMES).samples
             for i, t in enumerate(SENTENCES)]
    with Server(design_dir, "--backend", "torch") as s:
        assert speak(s, "alloy", instructions=instruct) == to_pcm(np.concatenate(parts), "s16")
        with pytest.raises(openai.BadRequestError, match="speaks the voice its instruction describes") as e:
            speak(s, "alloy")
        assert e.value.body["param"] == "instructions"  # the one rule (VoiceRules.check_instruct), OpenAI's name
        assert requests.get(s.url + "/health", timeout=30).json()["kind"] == "VoiceDesign"
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "wyoming", "--model", str(design_dir)],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 2 and "--instruct" in r.stderr


def test_listing_without_the_key_leaves_out_stored_voices(base_dir, tmp_path):
    """Open WebUI lists voices without its key: a keyed server still answers, but a stored (cloned)
    voice, the user's own, is listed only to a client with the key; an alias pointed at it too."""
    with Server(base_dir, "--backend", "torch", "--api-key", "sesame", "--voice-alias", "alloy=neighbour",
               env={**os.environ, "HEARTH_CACHE": str(tmp_path / "cache")}) as s:
        keyed = {"Authorization": "Bearer sesame"}
        r = requests.post(s.url + "/v1/audio/voices", data={"name": "neighbour", "ref_text": REF_TEXT},
                          files={"audio_sample": ("ref.wav", REF, "audio/wav")}, headers=keyed, timeout=120)
        assert r.status_code == 200, r.text
        with_key = requests.get(s.url + "/v1/audio/voices", headers=keyed, timeout=30).json()
        assert {v["id"] for v in with_key["voices"]} == {"neighbour", "alloy"}
        assert [v["name"] for v in with_key["uploaded_voices"]] == ["neighbour"]
        without = requests.get(s.url + "/v1/audio/voices", timeout=30)
        assert without.status_code == 200
        assert without.json() == {"voices": [], "uploaded_voices": []}
        wrong = requests.get(s.url + "/v1/audio/voices", headers={"Authorization": "Bearer nope"}, timeout=30)
        assert wrong.json() == {"voices": [], "uploaded_voices": []}
