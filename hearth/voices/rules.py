"""Which voice speaks: the one rule the engine, the CLI and the three servers resolve a voice by.

A checkpoint's kind decides what a voice can be: a CustomVoice checkpoint speaks its built-in
voices (by name, any case, or by an alias: OpenAI's names by default, see hearth.voices.openai_names); a Base
checkpoint speaks cloned voices, a speaker embedding or a stored profile by name (or alias); a
VoiceDesign checkpoint has no voices (its instruction describes one). `VoiceRules.resolve` turns
what a caller gave into the canonical voice (a built-in voice's name, a stored profile's name, a
`ClonedVoice`, or None) or raises an InputError naming `voice` that says what to choose. Nothing
after it looks at a voice's spelling again; the engine loads a stored profile by the name it gives.
Pure: it reads the checkpoint's config, the aliases and the names of the stored profiles (a
callable, read only when an error lists them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from hearth.checkpoint.config import ModelConfig
from hearth.errors import InputError
from hearth.text.prompt import ClonedVoice, Speaker
from hearth.voices.openai_names import alias_list

__all__ = ["DEFAULT_VOICE", "VoiceRules"]

DEFAULT_VOICE = "vivian"  # a CustomVoice checkpoint's voice where a command line gives none


def _no_stored() -> list[str]:
    return []


@dataclass(frozen=True)
class VoiceRules:
    config: ModelConfig
    aliases: Mapping[str, str] = field(default_factory=dict)
    stored: Callable[[], list[str]] = _no_stored  # the stored profiles usable with this checkpoint (Base)

    @property
    def kind(self) -> str:
        return self.config.model_type

    def check_instruct(self, instruct: str | None) -> None:
        """The one VoiceDesign rule: such a checkpoint speaks the voice its instruction describes, so
        a request without one is refused (`instruct`: the HTTP body's `instructions`, the CLI's
        --instruct, the Wyoming server's --instruct, the WebSocket config's `instructions`)."""
        if self.kind == "voice_design" and not (instruct or "").strip():
            raise InputError(f"a {self.config.kind} checkpoint speaks the voice its instruction describes: give one "
                             "(instructions / --instruct), e.g. \"A warm, calm woman's voice, speaking slowly\"",
                             "instruct")

    def choices(self) -> list[str]:
        """The voices to name: built-in ones, or for a Base checkpoint the stored profiles."""
        return self.stored() if self.kind == "base" else list(self.config.voices)

    def resolve(self, voice: Speaker | object, *, design_voice: str = "refuse", default: str | None = None
                ) -> Speaker:
        """The canonical voice for `voice` (None or "" for `default`). design_voice: what a voice
        given to a VoiceDesign checkpoint does, "refuse" (an error: the caller chose it) or
        "ignore" (a server's clients send one whatever the model)."""
        kind = self.kind
        empty = voice is None or isinstance(voice, str) and not voice.strip()
        if kind == "voice_design":
            if empty or design_voice == "ignore":
                return None
            raise InputError(f"{self.config.kind} checkpoints have no voices to choose: describe the voice in the "
                             "instruction (instruct=..., --instruct) and leave the voice out", "voice")
        if isinstance(voice, ClonedVoice):
            return self._cloned(voice)
        if empty:
            voice = default
        if voice is None:
            if kind == "base":
                raise InputError(f"a {self.config.kind} checkpoint speaks cloned voices: choose a stored one (for this "
                                 f"checkpoint: {', '.join(self.stored()) or 'none yet'}), or add one first: hearth "
                                 "voice add NAME --audio REF.wav --text 'what the reference says'", "voice")
            raise InputError(f"choose a voice: one of {', '.join(self.choices())}", "voice")
        if not isinstance(voice, str):
            raise InputError(f"a voice is a name (a string), got {type(voice).__name__}", "voice")
        key = voice.strip().lower()
        if kind == "base":
            # A stored profile by name; an alias names one unless a profile has the alias's own name.
            target = self.aliases.get(key)
            return target.strip().lower() if target is not None and key not in self.stored() else key
        if key in self.config.talker.speaker_ids:
            return key
        target = self.aliases.get(key)
        if target is not None and target in self.config.talker.speaker_ids:
            return target
        raise InputError(f"unknown voice {voice!r}; choose one of: {', '.join(self.choices())}; or an alias: "
                         f"{alias_list(self.aliases) or 'none set'}", "voice")

    def _cloned(self, voice: ClonedVoice) -> ClonedVoice:
        if self.kind != "base":
            raise InputError(f"a cloned voice needs a Base checkpoint (this one is {self.config.kind}, with the "
                             f"voices {', '.join(self.choices())})", "voice")
        hidden = self.config.talker.stack.hidden_size
        if voice.vector.shape[0] != hidden:
            raise InputError(f"this speaker embedding has {voice.vector.shape[0]} values; this checkpoint's are "
                             f"{hidden} long: it was made with another model", "voice")
        return voice
