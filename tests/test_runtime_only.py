"""Hearth where torch is not installed, as the runtime alone (`pip install hearth-tts`) leaves it.

Each process here runs with torch, onnx, onnxscript and nncf hidden (`HEARTH_TEST_WITHOUT`, see
tests/audit/sitecustomize.py: importing one fails and its package metadata is absent) and an empty
cache of its own. It loads a model directory `hearth export` wrote, speaks through every surface (the
Python API, `hearth say`, `hearth serve` with the OpenAI client, `hearth wyoming` with Home
Assistant's client) the same audio, sample for sample, as this process (which has torch) makes from
that directory; what would need converting says what to install instead. A hearing model's export
(Qwen3-ASR) transcribes there too, through `hearth transcribe` and `hearth wyoming --listen`.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import wave

import numpy as np
import pytest
from servers import Server, WyomingServer
from sounds import voiced

import hearth
from hearth.streaming.sinks import to_pcm

WITHOUT = "torch,onnx,onnxscript,nncf"
TEXT = "Spoken on a board with no torch."
SEED, FRAMES = 5, 8


def runtime_env(cache) -> dict[str, str]:
    return {**os.environ, "HEARTH_TEST_WITHOUT": WITHOUT, "HEARTH_CACHE": str(cache)}


@pytest.fixture(scope="module")
def exported(tiny_export):
    return tiny_export


@pytest.fixture(scope="module")
def expected(exported):
    """{backend: float32 samples of TEXT} made in this process from the export ("default": with
    this machine's default choices, as the CLI and the servers make it)."""
    out = {}
    for backend, vocoder in (("openvino", "bf16"), ("onnxruntime", "onnxruntime"), (None, None)):
        engine = hearth.load(exported, backend=backend, vocoder=vocoder)  # (None: this machine's default)
        try:
            audio = engine.synthesize(TEXT, "ryan", seed=SEED, max_new_tokens=FRAMES, budget=None)
            out[backend or "default"] = audio.samples
        finally:
            engine.close()
    return out


def run_without_torch(args: list[str], cache, timeout: float = 300) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, *args], capture_output=True, timeout=timeout, check=False,
                          env=runtime_env(cache))


def test_the_harness_hides_torch(tmp_path):
    script = ("import importlib.metadata as m\n"
              "try:\n    import torch\nexcept ModuleNotFoundError:\n    print('no import')\n"
              "try:\n    m.version('torch')\nexcept m.PackageNotFoundError:\n    print('no metadata')\n"
              "import hearth, onnxruntime\nprint('runtimes')")
    r = run_without_torch(["-c", script], tmp_path)
    assert r.stdout.decode().split() == ["no", "import", "no", "metadata", "runtimes"], r.stderr.decode()


@pytest.mark.parametrize("backend", ["openvino", "onnxruntime"])
def test_the_python_api_speaks_an_export_without_torch(exported, expected, backend, tmp_path):
    vocoder = "bf16" if backend == "openvino" else "onnxruntime"
    script = (
        "import sys, hearth, numpy as np\n"
        f"e = hearth.load({str(exported)!r}, backend={backend!r}, vocoder={vocoder!r})\n"
        f"a = e.synthesize({TEXT!r}, 'ryan', seed={SEED}, max_new_tokens={FRAMES}, budget=None)\n"
        "sys.stdout.buffer.write(a.samples.astype(np.float32).tobytes())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'onnx', 'onnxscript', 'nncf')"
        " or m.startswith(('hearth.convert.', 'hearth.model'))), file=sys.stderr)\n"
    )
    r = run_without_torch(["-c", script], tmp_path / "cache")
    assert r.returncode == 0, r.stderr.decode()
    assert r.stderr.decode().strip().splitlines()[-1] == "[]"  # nor the converting modules of Hearth
    assert "convert" not in r.stderr.decode()  # (hearth.convert itself is the lazy converter alone)
    assert not any((tmp_path / "cache").glob("*/lm-*")), "nothing is converted into the cache"
    got = np.frombuffer(r.stdout, np.float32)
    assert got.size > 0 and np.array_equal(got, expected[backend])


def test_hearth_say_speaks_an_export_without_torch(exported, expected, tmp_path):
    r = run_without_torch(["-m", "hearth.cli", "say", TEXT, "--model", str(exported), "--voice", "ryan",
                           "--seed", str(SEED), "--max-new-tokens", str(FRAMES),
                           "--no-guard", "--out", "-"], tmp_path / "cache")
    assert r.returncode == 0, r.stderr.decode()
    with wave.open(io.BytesIO(r.stdout)) as w:
        pcm = w.readframes(w.getnframes())
    assert pcm == to_pcm(expected["default"], "s16")


def test_hearth_serve_and_wyoming_serve_an_export_without_torch(exported, expected, tmp_path):
    want = to_pcm(expected["default"], "s16")
    with Server(exported, env=runtime_env(tmp_path / "cache")) as server:
        got = server.client().audio.speech.create(model="tts-1", voice="ryan", input=TEXT, response_format="pcm",
                                                  extra_body={"seed": SEED, "max_new_tokens": FRAMES}).content
        assert got == want

    with WyomingServer(exported, "--seed", str(SEED), "--max-new-tokens", str(FRAMES),
                            env=runtime_env(tmp_path / "cache")) as wyoming:
        assert wyoming.speak(TEXT) == want


def test_what_needs_converting_says_what_to_install(tiny_dir, tmp_path):
    """A checkpoint never converted, or the torch reference, is refused with what to do instead."""
    r = run_without_torch(["-m", "hearth.cli", "say", "Hello.", "--model", str(tiny_dir), "--out", "-"],
                          tmp_path / "cache")
    err = r.stderr.decode()
    assert r.returncode == 2 and r.stdout == b"", err
    assert "hearth-tts[convert]" in err and "hearth export" in err and "unexpected" not in err
    r = run_without_torch(["-m", "hearth.cli", "say", "Hello.", "--model", str(tiny_dir), "--backend", "torch",
                           "--out", "-"], tmp_path / "cache")
    assert r.returncode == 2 and "the torch reference needs torch" in r.stderr.decode(), r.stderr.decode()
    r = run_without_torch(["-m", "hearth.cli", "doctor"], tmp_path / "cache")
    assert r.returncode == 0 and "torch: not installed" in r.stdout.decode(), r.stderr.decode()


def test_every_file_of_an_export_is_readable_by_all(exported, tmp_path):
    """An export is copied to other machines and read by other users (a container's, a service's):
    all its files are readable by all, also where the checkpoint's are not (safetensors writes 0600;
    such a file is copied and made readable, not linked)."""
    from hearth.convert.export_files import copy_tree

    # (What the runtimes add while the module's other tests use it, their compiled blobs and primed
    # states, is this machine's own, not the export's.)
    written = [p for p in exported.rglob("*") if p.is_file()
               and not any(part.startswith(("compiled-", "primed")) for part in p.relative_to(exported).parts)]
    unreadable = [str(p.relative_to(exported)) for p in written if p.stat().st_mode & 0o444 != 0o444]
    assert written and not unreadable, unreadable
    source = tmp_path / "source"
    source.mkdir()
    (source / "model.safetensors").write_bytes(b"weights")
    (source / "model.safetensors").chmod(0o600)
    copy_tree(source, tmp_path / "out")
    copied = tmp_path / "out" / "model.safetensors"
    assert copied.read_bytes() == b"weights" and copied.stat().st_mode & 0o444 == 0o444
    assert (source / "model.safetensors").stat().st_mode & 0o777 == 0o600  # the user's own file is left as it was


@pytest.fixture(scope="module")
def hearing_export(own_asr_dir, tmp_path_factory):
    """`hearth export` of a Qwen3-ASR checkpoint (int8 networks for both runtimes), and its manifest."""
    out = tmp_path_factory.mktemp("asr-export") / "export"
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "export", str(own_asr_dir), str(out), "--json"],
                       capture_output=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr.decode()
    return out, json.loads(r.stdout)


def test_a_hearing_model_s_export_transcribes_without_torch(hearing_export, own_asr_dir, tmp_path):
    """The same transcript, byte for byte, as this process's install gives from the checkpoint
    (whose conversions the export copied), on each runtime, with nothing converted."""
    exported, manifest = hearing_export
    assert manifest["source"]["kind"] == "Qwen3-ASR" and manifest["runtimes"] == ["openvino", "onnxruntime"]
    assert [c["what"] for c in manifest["converted"]] == ["openvino Qwen3-ASR (int8)", "onnxruntime Qwen3-ASR (int8)"]
    recording = tmp_path / "speech.wav"
    with wave.open(str(recording), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes((voiced(2.5, seed=3) * 32767).astype("<i2").tobytes())
    for backend in ("openvino", "onnxruntime"):
        args = ["transcribe", str(recording), "--backend", backend, "--max-new-tokens", "12"]
        r = run_without_torch(["-m", "hearth.cli", *args, "--model", str(exported)], tmp_path / "cache")
        assert r.returncode == 0, r.stderr.decode()
        want = subprocess.run([sys.executable, "-m", "hearth.cli", *args, "--model", str(own_asr_dir)],
                              capture_output=True, timeout=300, check=False)
        assert want.returncode == 0 and r.stdout == want.stdout and r.stdout.strip(), want.stderr.decode()
    assert not any((tmp_path / "cache").rglob("manifest.json")), "nothing is converted into the cache"


def test_wyoming_listens_with_a_hearing_export_without_torch(exported, hearing_export, tmp_path):
    """What the container and the add-on run with HEARTH_LISTEN: `hearth wyoming --listen EXPORT`,
    offering speech-to-text to Home Assistant's client and speaking as before."""
    from wyoming.asr import Transcribe
    from wyoming.audio import AudioChunk, AudioStart, AudioStop
    from wyoming.client import AsyncTcpClient
    from wyoming.info import Describe

    pcm = (voiced(1.5, seed=5) * 32767).astype("<i2").tobytes()

    async def exchange(port: int) -> tuple:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Describe().event())
            info = await client.read_event()
            await client.write_event(Transcribe(language="en").event())
            await client.write_event(AudioStart(rate=16000, width=2, channels=1).event())
            for i in range(0, len(pcm), 3200):
                await client.write_event(AudioChunk(rate=16000, width=2, channels=1, audio=pcm[i:i + 3200]).event())
            await client.write_event(AudioStop().event())
            events = [await client.read_event()]
            while events[-1].type != "transcript-stop":
                events.append(await client.read_event())
            return info, events

    with WyomingServer(exported, "--listen", str(hearing_export[0]), "--max-new-tokens", str(FRAMES),
                       env=runtime_env(tmp_path / "cache")) as wyoming:
        info, events = asyncio.run(asyncio.wait_for(exchange(wyoming.port), 300))
        assert [p["name"] for p in info.data["asr"]] == ["hearth-asr"] and info.data["tts"]
        assert [e.type for e in events][-2:] == ["transcript", "transcript-stop"]
        assert isinstance(events[-2].data["text"], str)
        assert wyoming.speak(TEXT)
    assert not any((tmp_path / "cache").rglob("manifest.json")), "nothing is converted into the cache"
