"""OpenAI's voice names as aliases of a checkpoint's own voices.

Clients written for OpenAI's speech API send its voice names: pipecat looks voices up in its own
table of them, LiveKit defaults to "ash", Open WebUI falls back to "alloy". A CustomVoice
checkpoint answers each with one of its nine speakers (`DEFAULT_ALIASES`, chosen by the voices'
character: OpenAI's brighter female voices to Vivian, Serena, Sohee and Ono Anna, the male ones to
Ryan, Aiden, Eric, Dylan and Uncle Fu). The user changes or adds any with `--voice-alias
alloy=ryan` (or `hearth.load(..., voice_aliases={"alloy": "ryan"})`).

A Base checkpoint has no built-in voices, so no alias is set by default: `--voice-alias
alloy=myvoice` points one at a stored voice. A VoiceDesign checkpoint ignores the voice (its
instruction describes it), so aliases mean nothing there. A checkpoint's own voice of the same
name always wins over an alias.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hearth.checkpoint.config import ModelConfig
from hearth.errors import InputError

OPENAI_VOICES = ("alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse",
                 "marin", "cedar")

DEFAULT_ALIASES: dict[str, str] = {
    "alloy": "vivian",
    "ash": "aiden",
    "ballad": "eric",
    "coral": "serena",
    "echo": "ryan",
    "fable": "dylan",
    "onyx": "uncle_fu",
    "nova": "vivian",
    "sage": "ono_anna",
    "shimmer": "sohee",
    "verse": "ryan",
    "marin": "serena",
    "cedar": "aiden",
}


def parse_alias(spec: str) -> tuple[str, str]:
    """"alloy=vivian" -> ("alloy", "vivian"); InputError says the form otherwise."""
    name, sep, target = spec.partition("=")
    name, target = name.strip().lower(), target.strip()
    if not sep or not name or not target:
        raise InputError(f"a voice alias is NAME=VOICE, for example alloy=vivian; got {spec!r}")
    return name, target


def voice_aliases(config: ModelConfig, given: Mapping[str, str] | Iterable[str] | None = None) -> dict[str, str]:
    """The aliases a checkpoint answers: the defaults for a CustomVoice one (those whose voice it
    has), then `given` ({name: voice}, or "name=voice" strings) over them. A given alias of a
    CustomVoice checkpoint must name one of its voices (InputError lists them)."""
    kind = config.model_type
    aliases = {k: v for k, v in DEFAULT_ALIASES.items() if v in config.talker.speaker_ids} \
        if kind == "custom_voice" else {}
    pairs = given.items() if isinstance(given, Mapping) else (parse_alias(s) for s in given or ())
    for raw_name, raw_target in pairs:
        name = raw_name.strip().lower()
        target = raw_target.strip().lower() if kind == "custom_voice" else raw_target.strip()
        if kind == "custom_voice" and target not in config.talker.speaker_ids:
            raise InputError(f"voice alias {name}={target}: {target!r} is not a voice of this checkpoint; "
                             f"choose one of: {', '.join(config.voices)}")
        aliases[name] = target
    return aliases


def alias_list(aliases: Mapping[str, str]) -> str:
    """"alloy (vivian), ash (aiden), ..." for messages and listings."""
    return ", ".join(f"{name} ({target})" for name, target in sorted(aliases.items()))
