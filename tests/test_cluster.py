"""`hearth cluster`: hearth serve's app as Ray Serve replicas on a local Ray instance (loopback),
used with the clients people use: the `openai` SDK, plain HTTP, `websockets` and `hearth loadtest`.
With `--listen` each replica transcribes too, whole recordings and live. The command
runs under audit (tests/audited.py): Ray's processes report nothing, write nothing under HOME, and
are all gone once the command has stopped."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request

import pytest
import ray.serve  # noqa: E402, F401
from audited import Audited
from servers import Server


def _ray_processes() -> list[str]:
    out = subprocess.run(["pgrep", "-fa", "raylet|gcs_server"], capture_output=True, text=True, check=False).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


def _live_through_the_proxy(url: str, audio) -> list[dict]:
    """A realtime transcription session (manual commit) through Ray's proxy, with `websockets`."""
    import asyncio
    import base64

    from websockets.asyncio.client import connect

    async def session() -> list[dict]:
        async with connect(url.replace("http", "ws") + "/v1/realtime?intent=transcription", open_timeout=30) as ws:
            events = [json.loads(await ws.recv())]
            await ws.send(json.dumps({"type": "input_audio_buffer.append",
                                      "audio": base64.b64encode(audio.tobytes()).decode("ascii")}))
            await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
            while events[-1]["type"] not in ("conversation.item.input_audio_transcription.completed", "error"):
                events.append(json.loads(await asyncio.wait_for(ws.recv(), 120)))
            return events

    return asyncio.run(session())


def test_two_replicas_serve_like_one_hearth_serve(tiny_dir, asr_dir, tmp_path):
    import io
    import wave

    import numpy as np
    import openai
    from sounds import SIGNALS

    assert not _ray_processes(), "a Ray instance is already running here"
    audited = Audited(tmp_path, keep_cache=True)
    with Server(tiny_dir, "--replicas", "2", "--cpus-per-replica", "0.5", "--max-active", "2", "--listen",
                str(asr_dir), "--listen-backend", "torch",
                command="cluster", ready_s=300, stop_s=90, wait=False, env=audited.env()) as server:
        server.wait_ready()
        client = server.client(timeout=120)
        with client.audio.speech.with_streaming_response.create(
                model="tts-1", voice="ryan", input="Hello from the cluster. Two sentences.", response_format="pcm",
                extra_body={"seed": 7, "max_new_tokens": 8}) as response:
            pcm = b"".join(response.iter_bytes())
        assert pcm and len(pcm) % (1920 * 2) == 0  # whole 80 ms frames of 16-bit samples
        with pytest.raises(openai.BadRequestError) as bad:  # the same error envelope as hearth serve
            client.audio.speech.create(model="tts-1", voice="nobody", input="Hi.")
        assert "ryan" in str(bad.value) and bad.value.body["type"] == "invalid_request_error"

        replicas = set()
        body = json.dumps({"model": "tts-1", "voice": "serena", "input": "Which one?", "response_format": "wav",
                           "max_new_tokens": 4}).encode()
        for _ in range(16):
            request = urllib.request.Request(server.url + "/v1/audio/speech", data=body,
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=120) as r:
                assert r.status == 200 and r.read()[:4] == b"RIFF"
                replicas.add(r.headers["X-Hearth-Replica"])
            if len(replicas) == 2:
                break
        assert len(replicas) == 2, replicas  # requests are spread over both replicas

        cmd = [sys.executable, "-m", "hearth.cli", "loadtest", server.url, "--clients", "3", "--requests", "2",
               "--max-new-tokens", "6", "--json"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        assert r.returncode == 0, r.stderr
        report = json.loads(r.stdout)
        assert report["served"] == 6 and report["errors"] == 0 and report["busy_503"] == 0, report

        # Transcription through the proxy: a whole recording with the SDK, and live over the WebSocket.
        from hearth.listen import Listener, ListenOptions

        samples = SIGNALS["bursts"](1.5)
        pcm16 = np.round(samples * 32767).astype("<i2")
        wav = io.BytesIO()
        with wave.open(wav, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(16000)
            w.writeframes(pcm16.tobytes())
        listener = Listener.load(asr_dir, backend="torch")
        want = listener.transcribe(pcm16.astype(np.float32) / 32768)
        done = client.audio.transcriptions.create(model="gpt-4o-transcribe", file=("a.wav", wav.getvalue()))
        assert done.text == want.text
        from hearth.listen import resample

        at24 = np.round(np.clip(resample(samples, 16000, 24000), -1, 1) * 32767).astype("<i2")
        events = _live_through_the_proxy(server.url, at24)
        assert events[0]["type"] == "session.created" and events[-1]["type"].endswith(".completed"), events
        live = listener.live(ListenOptions(), None, 24000)
        assert events[-1]["transcript"] == (live.push(at24) + live.finish())[-1].text
    deadline = time.monotonic() + 30
    while _ray_processes() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _ray_processes(), "the local Ray instance outlived the command"
    audited.check("hearth cluster")
