"""`hearth cluster`: hearth serve's app as Ray Serve replicas on a local Ray instance (loopback),
used with the clients people use: the `openai` SDK, plain HTTP, and `hearth loadtest`. The command
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


def test_two_replicas_serve_like_one_hearth_serve(tiny_dir, tmp_path):
    import openai

    assert not _ray_processes(), "a Ray instance is already running here"
    audited = Audited(tmp_path, keep_cache=True)
    with Server(tiny_dir, "--replicas", "2", "--cpus-per-replica", "0.5", "--max-active", "2",
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
    deadline = time.monotonic() + 30
    while _ray_processes() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _ray_processes(), "the local Ray instance outlived the command"
    audited.check("hearth cluster")
