"""`hearth voice add|list|remove` and stored voices used by name, through the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import soundfile
from official import load_official, official_codes
from test_clone import REF_TEXT, ids, reference_audio

from hearth.tools.random_checkpoint import as_model_type, tiny_configs, write_checkpoint

TEXT = "Good morning. The bread is warm."


def hearth_cli(*args: str, cache) -> subprocess.CompletedProcess:
    env = {**os.environ, "HEARTH_CACHE": str(cache)}
    return subprocess.run([sys.executable, "-m", "hearth.cli", *args], capture_output=True, text=True, env=env,
                          timeout=300, check=False)


def test_add_say_list_remove(base_dir, tiny_dir, tmp_path, reference_tokenizer):
    cache = tmp_path / "cache"
    ref = tmp_path / "ref.wav"  # stereo, 22.05 kHz, 16-bit: read, mixed down and resampled as the official does
    mono = reference_audio(2.0 * 22050 / 24000, 3)
    soundfile.write(ref, np.stack([mono, 0.5 * mono], axis=1), 22050, subtype="PCM_16")

    r = hearth_cli("voice", "add", "Anna", "--audio", str(ref), "--text", REF_TEXT, "--model", str(base_dir),
                   "--no-prime", cache=cache)  # priming (OpenVINO): test_clone
    assert r.returncode == 0 and r.stdout == "", r.stderr
    assert (cache / "voices" / "anna.safetensors").is_file()
    listed = json.loads(hearth_cli("voice", "list", "--json", cache=cache).stdout)
    assert [(v["name"], v["mode"]) for v in listed["voices"]] == [("anna", "in_context")]
    shown = json.loads(hearth_cli("voices", "--model", str(base_dir), "--json", cache=cache).stdout)
    assert shown["voices"] == ["anna"] and shown["kind"] == "Base"
    mine = json.loads(hearth_cli("voice", "list", "--model", str(base_dir), "--json", cache=cache).stdout)
    assert [v["name"] for v in mine["voices"]] == ["anna"]  # made with this checkpoint
    r = hearth_cli("voice", "list", "--model", str(tiny_dir), cache=cache)  # another checkpoint
    assert r.returncode == 0 and r.stdout == "" and "no stored voices made with" in r.stderr

    r = hearth_cli("codes", TEXT, "--model", str(base_dir), "--voice", "anna", "--language", "english", "--greedy",
                   "--max-new-tokens", "10", "--backend", "torch", cache=cache)
    assert r.returncode == 0, r.stderr
    got = np.array(json.loads(r.stdout)["codes"])
    official = load_official(base_dir)
    items = official.create_voice_clone_prompt(ref_audio=str(ref), ref_text=REF_TEXT)
    prompt = official._prompt_items_to_voice_clone_prompt(items)
    ref_ids = reference_tokenizer.encode(f"<|im_start|>assistant\n{REF_TEXT}<|im_end|>\n")
    want = official_codes(official, ids(reference_tokenizer, TEXT), None, "english", voice_clone_prompt=prompt,
                          ref_ids=ref_ids, text_mode="interleaved", greedy=True, max_new_tokens=10)
    assert np.array_equal(got, want)

    out = tmp_path / "said.wav"
    r = hearth_cli("say", TEXT, "--model", str(base_dir), "--voice", "anna", "--max-new-tokens", "6", "--out",
                   str(out), "--backend", "torch", cache=cache)
    assert r.returncode == 0 and soundfile.info(out).samplerate == 24000, r.stderr

    r = hearth_cli("voice", "add", "anna", "--audio", str(ref), "--text", REF_TEXT, "--model", str(base_dir),
                   cache=cache)
    assert r.returncode == 2 and "exists" in r.stderr

    r = hearth_cli("voice", "remove", "anna", cache=cache)
    assert r.returncode == 0 and not (cache / "voices" / "anna.safetensors").exists()
    r = hearth_cli("codes", TEXT, "--model", str(base_dir), "--voice", "anna", "--max-new-tokens", "2", "--backend",
                   "torch", cache=cache)
    assert r.returncode == 2 and "unknown voice 'anna'" in r.stderr and "hearth voice add" in r.stderr


def test_a_profile_belongs_to_its_checkpoint(base_dir, tmp_path):
    cache = tmp_path / "cache"
    ref = tmp_path / "ref.wav"
    soundfile.write(ref, reference_audio(1.5, 4), 24000)
    assert hearth_cli("voice", "add", "ben", "--audio", str(ref), "--x-vector-only", "--model", str(base_dir),
                      cache=cache).returncode == 0
    config, codec = tiny_configs("0b6", hidden=64, layers=2)
    other = write_checkpoint(tmp_path / "other", as_model_type(config, "base", speaker_channels=32), codec, seed=44)
    r = hearth_cli("codes", TEXT, "--model", str(other), "--voice", "ben", "--max-new-tokens", "2", "--backend",
                   "torch", cache=cache)
    assert r.returncode == 2 and "made with another checkpoint" in r.stderr, r.stderr


@pytest.mark.parametrize("case,match", [  # (silent, short, long references: test_clone, through the same Cloner)
    ("unreadable", "cannot read the reference audio"),
    ("no-text", "transcript with --text"),
    ("custom-voice", "needs a Base checkpoint"),
])
def test_voice_add_refuses_bad_input(base_dir, tiny_dir, tmp_path, case, match):
    ref = tmp_path / "ref.wav"
    if case == "unreadable":
        ref.write_bytes(b"this is not audio")
    else:
        soundfile.write(ref, np.zeros(36000) if case == "silent" else reference_audio(1.5, 5), 24000)
    args = ["voice", "add", "x", "--audio", str(ref), "--model", str(tiny_dir if case == "custom-voice" else base_dir)]
    if case != "no-text":
        args += ["--text", REF_TEXT]
    r = hearth_cli(*args, cache=tmp_path / "cache")
    assert r.returncode == 2 and match in r.stderr, r.stderr
    assert not (tmp_path / "cache" / "voices" / "x.safetensors").exists()
