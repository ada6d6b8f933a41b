"""OpenAI's voice names as aliases of a checkpoint's voices (hearth.voices.openai_names), in the engine and the CLI."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import hearth
from hearth.checkpoint.loading import open_checkpoint
from hearth.errors import InputError
from hearth.voices.openai_names import OPENAI_VOICES, parse_alias

# The voice names OpenAI's speech API documents (written out here, not taken from the code under test).
DOCUMENTED = {"alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse",
              "marin", "cedar"}


def test_every_openai_name_is_a_voice_of_a_custom_voice_checkpoint(engine):
    assert set(OPENAI_VOICES) == DOCUMENTED
    for name in DOCUMENTED:
        assert engine.check_voice(name) in engine.voices
        assert engine.check_voice(f" {name.upper()} ") == engine.check_voice(name)
    assert engine.check_voice("ryan") == "ryan"  # a voice's own name is untouched


def test_an_alias_speaks_exactly_its_voice(engine):
    target = engine.check_voice("echo")
    by_alias = engine.generate_codes("Same voice.", "echo", "english", seed=5, max_new_tokens=6).codes
    by_name = engine.generate_codes("Same voice.", target, "english", seed=5, max_new_tokens=6).codes
    assert np.array_equal(by_alias, by_name)


def test_given_aliases_override_the_defaults_and_are_checked(tiny_dir):
    ckpt = open_checkpoint(tiny_dir)
    engine = hearth.Engine(ckpt, hearth.BackendOptions(backend="torch"), voice_aliases=["Alloy=Eric", "robot=ryan"])
    assert engine.check_voice("alloy") == "eric" and engine.check_voice("ROBOT") == "ryan"
    assert engine.check_voice("nova") in engine.voices  # the other defaults stay
    with pytest.raises(InputError, match="choose one of: aiden"):
        hearth.Engine(ckpt, hearth.BackendOptions(backend="torch"), voice_aliases={"alloy": "bob"})
    with pytest.raises(InputError, match="alias: .*alloy \\(eric\\)"):
        engine.check_voice("nobody")
    with pytest.raises(InputError, match="NAME=VOICE"):
        parse_alias("alloy")


@pytest.mark.slow  # starts `hearth say`
def test_cli_takes_aliases_and_refuses_a_bad_one(tiny_dir, tmp_path):
    out = tmp_path / "alloy.wav"
    cmd = [sys.executable, "-m", "hearth.cli", "say", "Hi.", "--model", str(tiny_dir), "--backend", "torch",
           "--max-new-tokens", "3", "--out", str(out)]
    done = subprocess.run([*cmd, "--voice", "alloy", "--voice-alias", "alloy=ryan"], check=False,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 44
    bad = subprocess.run([*cmd, "--voice-alias", "alloy=bob"], check=False, capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode != 0 and "'bob' is not a voice of this checkpoint" in bad.stderr
    assert "Traceback" not in bad.stderr
