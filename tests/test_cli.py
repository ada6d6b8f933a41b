"""The `hearth` command as a user runs it: a subprocess on a tiny checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest


def run(*args, stdin: bytes | None = None):
    cmd = [sys.executable, "-m", "hearth.cli", *args]
    return subprocess.run(cmd, input=stdin, capture_output=True, timeout=300, check=False)


def test_codes_json_matches_api(tiny_dir, engine):
    r = run("codes", "Good morning, Hearth.", "--model", str(tiny_dir), "--voice", "Ryan", "--language", "English",
            "--seed", "42", "--max-new-tokens", "9")
    assert r.returncode == 0, r.stderr.decode()
    data = json.loads(r.stdout)  # stdout is only the JSON document
    expected = engine.generate_codes("Good morning, Hearth.", "ryan", "english", seed=42, max_new_tokens=9)
    assert data["codes"] == expected.codes.tolist()
    assert data["frames"] == 8 and data["stop_reason"] == "max_new_tokens" and data["seed"] == 42
    assert all(len(frame) == 16 for frame in data["codes"])


def test_say_writes_wav(tiny_dir, engine, tmp_path):
    out = tmp_path / "a.wav"
    r = run("say", "Hello.", "--model", str(tiny_dir), "--greedy", "--max-new-tokens", "6", "--out", str(out))
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == b""
    import soundfile as sf

    data, sr = sf.read(out, dtype="float32")
    assert sr == 24000
    expected = engine.synthesize("Hello.", "vivian", greedy=True, max_new_tokens=6).samples
    assert data.shape == (5 * 1920,) == expected.shape
    assert np.abs(data - expected).max() <= 1 / 32767 + 1e-6  # s16 quantisation only


def test_say_f32_to_stdout_from_stdin(tiny_dir, engine):
    r = run("say", "-", "--model", str(tiny_dir), "--seed", "3", "--max-new-tokens", "4", "--out", "-",
            "--sample-format", "f32", stdin=b"Piped text.")
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


@pytest.mark.parametrize(
    "args,stdin,fragment",
    [
        (["say", "", "--out", "x.wav"], None, "text is empty"),
        (["say", " \n\t ", "--out", "x.wav"], None, "text is empty"),
        (["codes", "hi", "--voice", "bob"], None, "vivian"),
        (["codes", "hi", "--language", "klingon"], None, "english"),
        (["codes", "-"], b"\xff\xfe broken", "not valid UTF-8"),
        (["codes", "x" * 100_000], None, "too long"),
        (["codes", "hi", "--max-new-tokens", "0"], None, "max_new_tokens"),
    ],
)
def test_bad_input(tiny_dir, tmp_path, args, stdin, fragment):
    r = subprocess.run([sys.executable, "-m", "hearth.cli", *args, "--model", str(tiny_dir)], input=stdin,
                       capture_output=True, cwd=tmp_path, timeout=300, check=False)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert fragment in err
    assert "Traceback" not in err
    assert r.stdout == b""


def test_long_text_within_limit_is_spoken(engine):
    """Long but legal texts are accepted (the guard bounds the audio, not the text)."""
    text = "This sentence is repeated. " * 100
    codes = engine.generate_codes(text, "aiden", "english", greedy=True, max_new_tokens=3)
    assert codes.codes.shape == (2, 16)


def test_missing_model_exit_code(tmp_path):
    r = run("say", "hi", "--model", str(tmp_path / "absent"))
    assert r.returncode == 2
    assert b"hf download" in r.stderr and b"Traceback" not in r.stderr
