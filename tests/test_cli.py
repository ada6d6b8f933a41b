"""The `hearth` command as a user runs it: a subprocess on a tiny checkpoint."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from cli import hearth as run
from conftest import DEFAULT_BACKEND


def test_codes_json_matches_api(tiny_dir, engine):
    r = run("codes", "Good morning, Hearth.", "--model", str(tiny_dir), "--voice", "Ryan", "--language", "English",
            "--seed", "42", "--max-new-tokens", "9", "--backend", "torch")
    assert r.returncode == 0, r.stderr.decode()
    data = json.loads(r.stdout)  # stdout is only the JSON document
    expected = engine.generate_codes("Good morning, Hearth.", "ryan", "english", seed=42, max_new_tokens=9)
    assert data["codes"] == expected.codes.tolist()
    assert data["frames"] == 8 and data["stop_reason"] == "max_new_tokens" and data["seed"] == 42
    assert all(len(frame) == 16 for frame in data["codes"])
    assert data["backend"] == "torch"


def test_default_is_the_fast_path(tiny_dir, fast_engine, tmp_path):
    """Without backend flags the command runs int8 weights on this machine's default runtime, exactly
    as hearth.load() does."""
    r = run("codes", "Good morning, Hearth.", "--model", str(tiny_dir), "--seed", "42", "--max-new-tokens", "9",
            "--text-mode", "stream")
    assert r.returncode == 0, r.stderr.decode()
    data = json.loads(r.stdout)
    assert data["backend"] == DEFAULT_BACKEND and data["text_mode"] == "interleaved"
    expected = fast_engine.generate_codes("Good morning, Hearth.", "vivian", seed=42, max_new_tokens=9,
                                          text_mode="interleaved")
    assert data["codes"] == expected.codes.tolist()
    out = tmp_path / "fast.wav"
    r = run("say", "Hello.", "--model", str(tiny_dir), "--seed", "4", "--max-new-tokens", "6", "--out", str(out))
    assert r.returncode == 0, r.stderr.decode()
    import soundfile as sf

    data, _ = sf.read(out, dtype="float32")
    samples = fast_engine.synthesize("Hello.", "vivian", seed=4, max_new_tokens=6).samples
    assert data.shape == samples.shape and np.abs(data - samples).max() <= 1 / 32767 + 1e-6

def test_say_writes_wav(tiny_dir, engine, tmp_path):
    out = tmp_path / "a.wav"
    r = run("say", "Hello.", "--model", str(tiny_dir), "--greedy", "--max-new-tokens", "6", "--out", str(out),
            "--backend", "torch")
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == b""
    import soundfile as sf

    data, sr = sf.read(out, dtype="float32")
    assert sr == 24000
    expected = engine.synthesize("Hello.", "vivian", greedy=True, max_new_tokens=6).samples
    assert data.shape == (5 * 1920,) == expected.shape
    assert np.abs(data - expected).max() <= 1 / 32767 + 1e-6  # s16 quantisation only


def test_say_speaks_sentence_by_sentence(tiny_dir, engine):
    """Sentence i with seed + i, as `hearth serve` does; --whole speaks one prompt, as the official package."""
    text = "First one here. And a second one!"
    args = ("--model", str(tiny_dir), "--seed", "11", "--max-new-tokens", "5", "--out", "-", "--sample-format",
            "f32", "--backend", "torch")
    r = run("say", text, *args)
    assert r.returncode == 0, r.stderr.decode()
    assert b"2 sentences" in r.stderr and b"seed 11" in r.stderr
    import io

    import soundfile as sf

    data, _ = sf.read(io.BytesIO(r.stdout), dtype="float32")
    parts = [engine.synthesize(t, "vivian", seed=11 + i, max_new_tokens=5).samples
             for i, t in enumerate(["First one here.", "And a second one!"])]
    assert np.array_equal(data, np.concatenate(parts))
    r = run("say", text, "--whole", *args)
    assert r.returncode == 0, r.stderr.decode()
    data, _ = sf.read(io.BytesIO(r.stdout), dtype="float32")
    assert np.array_equal(data, engine.synthesize(text, "vivian", seed=11, max_new_tokens=5).samples)


def test_say_f32_to_stdout_from_stdin(tiny_dir, engine):
    r = run("say", "-", "--model", str(tiny_dir), "--seed", "3", "--max-new-tokens", "4", "--out", "-",
            "--sample-format", "f32", "--backend", "torch", stdin=b"Piped text.")
    assert r.returncode == 0, r.stderr.decode()
    import io

    import soundfile as sf

    data, _sr = sf.read(io.BytesIO(r.stdout), dtype="float32")
    expected = engine.synthesize("Piped text.", "vivian", seed=3, max_new_tokens=4).samples
    assert np.array_equal(data, expected)


def test_say_without_device_writes_default_file(tiny_dir, tmp_path):
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "say", "Hi.", "--model", str(tiny_dir), "--greedy",
                        "--max-new-tokens", "3"], capture_output=True, cwd=tmp_path, timeout=300, check=False)
    assert r.returncode == 0, r.stderr.decode()
    assert (tmp_path / "hearth.wav").stat().st_size == 44 + 2 * 2 * 1920
    assert b"hearth.wav" in r.stderr


def test_voices(tiny_dir):
    r = run("voices", "--model", str(tiny_dir), "--json")
    data = json.loads(r.stdout)
    assert sorted(data["voices"]) == sorted(
        ["vivian", "serena", "uncle_fu", "dylan", "eric", "ryan", "aiden", "ono_anna", "sohee"])
    assert data["languages"][0] == "auto" and len(data["languages"]) == 11
    assert data["dialects"] == {"eric": "sichuan_dialect", "dylan": "beijing_dialect"}
    assert len(data["aliases"]) == 13 and set(data["aliases"].values()) <= set(data["voices"])  # OpenAI's names
    r = run("voices", "--model", str(tiny_dir), "--voice-alias", "robot=Eric")
    assert b"robot (eric)" in r.stdout and b"echo (" in r.stdout


@pytest.mark.parametrize(
    "args,stdin,fragment",
    [
        (["say", "", "--out", "x.wav"], None, "text is empty"),
        (["say", " \n\t ", "--out", "x.wav"], None, "text is empty"),
        (["say", "-", "--out", "x.wav"], b"", "text is empty"),
        (["codes", "hi", "--voice", "bob"], None, "vivian"),
        (["codes", "hi", "--language", "klingon"], None, "english"),
        (["codes", "-"], b"\xff\xfe broken", "not valid UTF-8"),
        (["codes", "x" * 100_000], None, "too long"),
        (["say", "-", "--whole", "--out", "x.wav"], b"Word. " * 6000, "too long for one prompt"),
        (["say", "-", "--out", "x.wav"], b"Word. " * 17_000, "at most 100,000"),
        (["codes", "hi", "--max-new-tokens", "0"], None, "--max-new-tokens: must be at least 1"),
        (["codes", "hi", "--seed", "-3"], None, "--seed: must lie between 0"),
        (["codes", "hi", "--seed", "abc"], None, "expected a whole number"),
        (["say", "hi", "--chunk-frames", "0"], None, "--chunk-frames: must be at least 1"),
        (["say", "hi", "--first-chunk-frames", "-1"], None, "--first-chunk-frames: must be at least 1"),
        (["say", "hi", "--out", "/nonexistent/dir/x.wav"], None, "does not exist"),
        (["say", "hi", "--out", "."], None, "is a folder"),
        (["say", "hi", "--out", "x.mp3"], None, ".wav"),
        (["say", "hi", "--lm-threads", "0"], None, "--lm-threads: must be at least 1"),
        (["say", "hi", "--device", "TPU"], None, "device must be an OpenVINO device"),
        (["say", "hi", "--dtype", "bfloat16"], None, "dtype applies to the torch backend"),
        (["say", "hi", "--backend", "torch", "--weights", "int8"], None, "weights: for the OpenVINO language model"),
        (["say", "hi", "--vocoder", "torch", "--vocoder-threads", "2"], None, "for a compiled vocoder only"),
        (["say", "hi", "--out", "/proc/x.wav"], None, "cannot write there"),
        (["say", "hi", "--text-mode", "fast"], None, "invalid choice"),
        (["say", "hi", "--sample-format", "u8"], None, "invalid choice"),
        (["speak", "--sink", "wav"], None, "--sink wav needs --out"),
        (["speak", "--sink", "wav", "--out", "/nonexistent/x.wav"], None, "does not exist"),
        (["speak", "--sink", "null", "--out", "x.wav"], None, "--out is for --sink wav"),
        (["speak", "--voice", "bob", "--sink", "null"], None, "vivian"),
        (["soak", "--sentences", "0"], None, "--sentences: must be at least 1"),
        (["soak", "--idle", "-1"], None, "--idle: must be zero or more"),
        (["soak", "--duration", "0"], None, "--duration: must be more than zero"),
        (["soak", "--idle", "nan"], None, "--idle: must be zero or more"),
        (["bench", "--frames", "0"], None, "--frames: must be at least 1"),
        (["bench", "--runs", "0"], None, "--runs: must be at least 1"),
        (["bench", "--text", " "], None, "--text is empty"),
        (["tune", "--runs", "0"], None, "--runs: must be at least 1"),
        (["accuracy", "--frames", "0"], None, "--frames: must be at least 1"),
        (["voices", "--json", "--model", "/nonexistent/ckpt"], None, "hf download"),
        (["wyoming", "--uri", "http://x:1"], None, "use tcp://HOST:PORT, unix://PATH or stdio://"),
        (["wyoming", "--uri", "tcp://127.0.0.1"], None, "give a host and a port"),
        (["wyoming", "--uri", "unix:///nonexistent/dir/s.sock"], None, "does not exist"),
        (["wyoming", "--uri", "stdio://", "--zeroconf"], None, "announces a tcp:// server"),
        (["wyoming", "--seed", "-1"], None, "--seed"),
        (["wyoming", "--model", "/nonexistent/ckpt"], None, "hf download"),
    ],
)
def test_bad_input_is_refused_before_loading(tiny_dir, tmp_path, monkeypatch, capsys, args, stdin, fragment):
    """Every bad value: exit code 2 and a message, before any weights are read (a tripwire stands in
    for the engine), nothing on stdout, nothing written."""
    import io

    import hearth.engine
    from hearth.cli import main

    def tripwire(*_a, **_k):
        raise AssertionError("the model was loaded before the input was checked")

    monkeypatch.setattr(hearth.engine.Engine, "__init__", tripwire)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8"))
    model = [] if "--model" in args else ["--model", str(tiny_dir)]
    try:
        code = main([*args, *model])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2, err
    assert fragment in err
    assert out == ""
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("args,fragment", [
    (["loadtest", "ftp://x:1"], "must look like http://HOST:PORT"),
    (["loadtest", "tcp://127.0.0.1:1", "--max-new-tokens", "5"], "start `hearth wyoming` with it"),
    (["loadtest", "tcp://127.0.0.1:1", "--words-per-second", "0"], "--words-per-second"),
])
def test_loadtest_bad_input(capsys, args, fragment):
    from hearth.cli import main

    try:
        code = main(args)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2 and fragment in err and out == "", err


def test_bad_output_path_exits_at_once(tiny_dir, tmp_path):
    """The command as a user runs it: a message and exit code 2 within seconds, no traceback, no hang."""
    t0 = time.monotonic()
    r = run("say", "hi", "--out", "/nonexistent/dir/x.wav", "--model", str(tiny_dir), timeout=60)
    err = r.stderr.decode()
    assert r.returncode == 2 and "does not exist" in err and "Traceback" not in err, err
    assert time.monotonic() - t0 < 30


def test_failure_after_loading_exits_instead_of_hanging(tiny_dir, tmp_path):
    """A sink that fails mid-stream (a full disk): the command reports it and ends, workers and all."""
    import stat
    from pathlib import Path

    if not (Path("/dev/full").exists() and stat.S_ISCHR(Path("/dev/full").stat().st_mode)):
        pytest.skip("no /dev/full device here")
    r = run("say", "Hello there.", "--model", str(tiny_dir), "--seed", "1", "--max-new-tokens", "20",
            "--out", "/dev/full", timeout=120)
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "No space left on device" in err and "Traceback" not in err


def test_interrupt_leaves_no_partial_file(tiny_dir, tmp_path):
    """Ctrl-C while a long sentence is being written: exit 130, no WAV file, no .part file left."""
    out = tmp_path / "long.wav"
    # A shell that runs the suite in the background ignores SIGINT, and a child inherits that (as it
    # should); a terminal's Ctrl-C is what is tested, so the handler Python installs is restored.
    start = ("import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
             "runpy.run_module('hearth.cli', run_name='__main__', alter_sys=True)")
    proc = subprocess.Popen([sys.executable, "-c", start, "say", "A very long story.", "--model",
                             str(tiny_dir), "--seed", "2", "--max-new-tokens", "100000", "--no-guard", "--backend",
                             "torch", "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        part = tmp_path / "long.wav.part"
        deadline = time.monotonic() + 120
        while not (part.exists() and part.stat().st_size > 44 + 2 * 1920) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert part.exists(), "the WAV file was never started"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()  # never left running (a no-op once it has exited)
    assert proc.returncode == 130, err.decode()
    assert list(tmp_path.iterdir()) == []


def test_long_text_within_limit_is_spoken(engine):
    """Long but legal texts are accepted (the guard bounds the audio, not the text)."""
    text = "This sentence is repeated. " * 100
    codes = engine.generate_codes(text, "aiden", "english", greedy=True, max_new_tokens=3)
    assert codes.codes.shape == (2, 16)


def test_missing_model_exit_code(tmp_path):
    r = run("say", "hi", "--model", str(tmp_path / "absent"))
    assert r.returncode == 2
    assert b"hf download" in r.stderr and b"Traceback" not in r.stderr


def test_say_speaks_stdin_as_it_arrives(tiny_dir, engine):
    """`--text-mode interleaved -`: audio comes out while stdin is still open (the rest of the text
    is held back until it has), and equals each sentence's interleaved audio (seed + i)."""
    import io
    import threading

    import soundfile as sf

    first = "Good evening, and welcome back to the house by the river where we "
    rest = "sat.\nA second line. Ünïcödé 你好。"
    proc = subprocess.Popen([sys.executable, "-m", "hearth.cli", "say", "-", "--text-mode", "interleaved", "--model",
                             str(tiny_dir), "--seed", "8", "--max-new-tokens", "10", "--out", "-", "--sample-format",
                             "f32", "--backend", "torch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = bytearray()
    got_audio = threading.Event()

    def read():
        while data := proc.stdout.read1(65536):
            out.extend(data)
            if len(out) > 44 + 1920 * 4:  # the header and a frame of audio
                got_audio.set()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        proc.stdin.write(first.encode())
        proc.stdin.flush()
        spoke_early = got_audio.wait(timeout=120)
        data = rest.encode()
        proc.stdin.write(data[:27])  # cut inside a multi-byte character
        proc.stdin.flush()
        proc.stdin.write(data[27:])
        proc.stdin.close()
        proc.wait(timeout=120)
    finally:
        proc.kill()
        reader.join(timeout=30)
    err = proc.stderr.read().decode()
    assert proc.returncode == 0, err
    assert spoke_early, "no audio before stdin ended"
    samples, _ = sf.read(io.BytesIO(bytes(out)), dtype="float32")
    sentences = ["Good evening, and welcome back to the house by the river where we sat.", "A second line.",
                 "Ünïcödé 你好。"]
    parts = [engine.synthesize(t, "vivian", seed=8 + i, max_new_tokens=10, text_mode="interleaved").samples
             for i, t in enumerate(sentences)]
    assert np.array_equal(samples, np.concatenate(parts))
    empty = run("say", "-", "--text-mode", "interleaved", "--model", str(tiny_dir), "--out", "-", "--backend",
                "torch", stdin=b" ... \n")
    assert empty.returncode == 2 and b"empty" in empty.stderr
