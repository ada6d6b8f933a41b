"""The one voice rule (hearth.voices.rules): each checkpoint kind, aliases, defaults, and what a
server ignores; pure, on the configs of the released kinds (tiny shapes)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hearth.checkpoint.config import ModelConfig
from hearth.errors import InputError
from hearth.text.prompt import ClonedVoice
from hearth.tools.random_checkpoint import as_model_type, tiny_configs
from hearth.voices.openai_names import voice_aliases
from hearth.voices.rules import DEFAULT_VOICE, VoiceRules


def _config(kind: str) -> ModelConfig:
    config, _ = tiny_configs("0b6", hidden=64, layers=2)
    if kind != "custom_voice":
        config = as_model_type(config, kind, speaker_channels=32)
    return ModelConfig.from_json(config)


CUSTOM = _config("custom_voice")
RULES = VoiceRules(CUSTOM, voice_aliases(CUSTOM, ["robot=ryan"]))


@given(st.sampled_from(sorted(CUSTOM.talker.speaker_ids) + ["alloy", "echo", "robot"]), st.data())
def test_a_name_in_any_case_and_spacing_is_its_one_voice(name, data):
    spelled = "".join(c.upper() if data.draw(st.booleans()) else c for c in name)
    spelled = " " * data.draw(st.integers(0, 2)) + spelled + "\t" * data.draw(st.integers(0, 2))
    voice = RULES.resolve(spelled)
    assert voice in CUSTOM.talker.speaker_ids and RULES.resolve(voice) == voice  # canonical, and stays so
    assert voice == (RULES.aliases.get(name) or name)


def test_unknown_missing_and_wrong_voices_say_what_to_choose():
    with pytest.raises(InputError, match="unknown voice 'bob'; choose one of: .*ryan.*robot \\(ryan\\)") as e:
        RULES.resolve("bob")
    assert e.value.param == "voice"
    with pytest.raises(InputError, match="choose a voice: one of"):
        RULES.resolve("  ")
    assert RULES.resolve(None, default=DEFAULT_VOICE) == DEFAULT_VOICE
    with pytest.raises(InputError, match="a voice is a name"):
        RULES.resolve(3)
    with pytest.raises(InputError, match="cloned voice needs a Base checkpoint"):
        RULES.resolve(ClonedVoice(np.zeros(64, np.float32), None, None))


def test_base_voices_are_stored_profiles_by_name_or_alias():
    base = _config("base")
    rules = VoiceRules(base, {"narrator": "Anna"}, lambda: ["anna", "narrator-2"])
    assert rules.resolve(" Anna ") == "anna" and rules.resolve("NARRATOR") == "anna"
    assert rules.resolve("ghost") == "ghost"  # the store says whether it exists (and for which checkpoint)
    shadowed = VoiceRules(base, {"narrator": "anna"}, lambda: ["anna", "narrator"])
    assert shadowed.resolve("narrator") == "narrator"  # a profile of the alias's own name wins
    cloned = ClonedVoice(np.zeros(64, np.float32), None, None)
    assert rules.resolve(cloned) is cloned
    with pytest.raises(InputError, match="64 long"):
        rules.resolve(ClonedVoice(np.zeros(32, np.float32), None, None))
    with pytest.raises(InputError, match="speaks cloned voices.*anna, narrator-2.*hearth voice add"):
        rules.resolve(None)
    assert rules.choices() == ["anna", "narrator-2"]


def test_voice_design_has_no_voices_and_servers_ignore_the_one_sent():
    rules = VoiceRules(_config("voice_design"))
    assert rules.resolve(None) is None and rules.resolve("") is None
    with pytest.raises(InputError, match="no voices to choose"):
        rules.resolve("ryan")
    assert rules.resolve("alloy", design_voice="ignore") is None
