"""The prompt: token ids in the official chat layout, then the talker's input embeddings.

Two text modes, the official package's two: "whole" puts every text token in the prompt (its
`non_streaming_mode=True`, the default); "interleaved" puts the first text token in the prompt and
adds one more to each generated frame's input, text and codes side by side on the model's two
tracks (`non_streaming_mode=False`). "stream", the name the official package's documentation uses
for the second, is accepted as the same mode.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from hearth.checkpoint.config import ModelConfig
from hearth.checkpoint.tokenizer import TextTokenizer

__all__ = ["TEXT_MODES", "LiveText", "Prompt", "PromptEmbeds", "Speaker", "ClonedVoice", "TextMode",
           "build_prompt", "embed_prompt", "resolve_language", "text_mode"]

TextMode = Literal["whole", "interleaved"]
TEXT_MODES = ("whole", "interleaved")
_ALIASES = {"stream": "interleaved"}


def text_mode(name: str) -> TextMode:
    """The canonical name of a text mode; ValueError naming the choices for anything else."""
    mode = _ALIASES.get(name, name) if isinstance(name, str) else name
    if mode not in TEXT_MODES:
        raise ValueError(f"text mode must be 'whole' or 'interleaved' (also called 'stream'), got {name!r}")
    return mode  # type: ignore[return-value]


_ROLE = "<|im_start|>assistant\n"
_END = "<|im_end|>\n<|im_start|>assistant\n"  # five ids


@dataclass(frozen=True, eq=False)
class ClonedVoice:
    """A voice cloned from reference audio with a Base checkpoint, as the official voice clone
    builds it: the speaker embedding (an x-vector; it takes the speaker-id row of the prompt) and,
    in context mode, the reference's codes and transcript ids, which the prompt carries as an
    utterance already spoken (and the vocoder hears first, so the new audio continues it)."""

    vector: np.ndarray  # [hidden] float32
    codes: np.ndarray | None = None  # [frames, groups] int64; None: x-vector only
    text_ids: list[int] | None = None  # the transcript's ids (with codes)

    def __post_init__(self) -> None:
        if self.vector.ndim != 1 or not np.issubdtype(self.vector.dtype, np.floating):
            raise ValueError(f"a speaker embedding is one float vector, got shape {tuple(self.vector.shape)}")
        if (self.codes is None) != (self.text_ids is None):
            raise ValueError("reference codes and the transcript's ids come together (or neither: x-vector only)")
        if self.codes is not None and (self.codes.ndim != 2 or self.codes.shape[0] == 0):
            raise ValueError(f"reference codes are [frames >= 1, groups], got shape {tuple(self.codes.shape)}")
        if self.text_ids is not None and not self.text_ids:
            raise ValueError("the reference transcript is empty")

    @property
    def in_context(self) -> bool:
        return self.codes is not None


# Who speaks: a built-in voice's name, a cloned voice, or nobody (VoiceDesign: the instruction is the voice).
Speaker = str | ClonedVoice | None


@dataclass(frozen=True)
class Prompt:
    role: list[int]  # "<|im_start|>assistant\n"
    text: list[int]  # the text to speak
    instruct: list[int] | None  # "<|im_start|>user\n{instruct}<|im_end|>\n" (1.7B only)


def build_prompt(tokenizer: TextTokenizer, text: str, instruct: str | None) -> Prompt:
    """Tokenize as the official wrapper does: the whole chat-formatted string at once, then slice.

    Tokenizing the whole string matters: a text starting with a newline merges with the role's
    newline, and the official model then takes the first three ids as the role regardless.
    """
    ids = tokenizer.encode(f"{_ROLE}{text}{_END}")
    instruct_ids = None
    if instruct:
        instruct_ids = tokenizer.encode(f"<|im_start|>user\n{instruct}<|im_end|>\n")
    return Prompt(role=ids[:3], text=ids[3:-5], instruct=instruct_ids)


class LiveText:
    """The prompt's text ids for text that arrives in pieces: ids are committed as soon as no later
    text can change them, and all of them together are exactly `build_prompt`'s for the whole text.

        live = LiveText(tokenizer)
        live.push("Hello wor")   # -> []: "Hello" may still become "Hellos"
        live.push("ld, how")     # -> ids of "Hello", " world", ","
        live.end()               # -> ids of " how"; `live.role` and `live.text` are then complete

    Why a cut is safe: the tokenizer splits text into pieces with the Qwen2 regex and applies BPE
    within each piece. A space that follows a non-space always starts a new piece (no pattern runs
    from a non-space across a following space), NFC never composes across a space, and no special
    token holds a space. So at such a position the ids of the text before and after are independent,
    and everything before the last such space is final.
    """

    def __init__(self, tokenizer: TextTokenizer):
        self.tokenizer = tokenizer
        self._pending = _ROLE  # raw text not yet committed (the role's until the first commit)
        self._ids: list[int] = []  # committed ids, the role's three first
        self._given = 0  # text ids handed out
        self.ended = False
        # The argument above needs special tokens without spaces (true of Qwen2's); else commit at the end.
        self._cuts = not any(" " in t for t in tokenizer.added_tokens())

    @property
    def role(self) -> list[int]:
        return self._ids[:3]

    @property
    def text(self) -> list[int]:
        """Text ids committed so far."""
        return self._ids[3:]

    def push(self, text: str) -> list[int]:
        """Text ids newly committed by `text` (often none)."""
        if self.ended:
            raise ValueError("the text has ended")
        self._pending += text
        cut = self._last_cut() if self._cuts else 0
        if cut > 0:
            self._ids += self.tokenizer.encode(self._pending[:cut])
            self._pending = self._pending[cut:]
        return self._hand_out()

    def end(self) -> list[int]:
        """The remaining text ids: the text is complete."""
        if not self.ended:
            self.ended = True
            self._ids += self.tokenizer.encode(self._pending + _END)[:-5]
            self._pending = ""
        return self._hand_out()

    def _last_cut(self) -> int:
        pending = self._pending
        i = pending.rfind(" ")
        while i > 0:
            if not pending[i - 1].isspace():
                return i
            i = pending.rfind(" ", 0, i)
        return 0

    def _hand_out(self) -> list[int]:
        new = self._ids[3 + self._given :] if len(self._ids) > 3 else []
        self._given += len(new)
        return new


@dataclass
class PromptEmbeds:
    prefill: np.ndarray  # [1, L, hidden]
    trailing: np.ndarray  # [1, n, hidden]: added to the talker input of step k < n
    tts_pad: np.ndarray  # [1, 1, hidden]: added once trailing is exhausted
    text_tokens: int
    # The prefill's leading positions that depend only on the instruction, the voice and the
    # language (the role and the codec tags): the same for every sentence in that voice.
    prefix: int = 0
    marks: frozenset[str] = frozenset()  # stages where injected faults fire for it (`hearth.reliability.faults`)

    def prefill_ready(self) -> bool:
        return True

    def started(self) -> bool:
        return True

    def watch(self, callback: Callable[[], None]) -> None:
        """Nothing here ever changes (the text is whole)."""

    def final_tokens(self) -> int:
        return self.text_tokens

    def ready(self, step: int) -> bool:
        return True

    def row(self, step: int) -> np.ndarray:
        """What is added to the talker's input after frame `step`."""
        trailing = self.trailing
        return trailing[:, step : step + 1] if step < trailing.shape[1] else self.tts_pad


def resolve_language(config: ModelConfig, voice: Speaker, language: str) -> int | None:
    """The codec language id (None for auto), with the dialect rule applied (built-in voices only)."""
    t = config.talker
    lang = language.lower()
    language_id = None if lang == "auto" else t.language_ids[lang]
    dialect = t.speaker_dialects.get(voice) if isinstance(voice, str) else None  # a resolved name (voice_rules)
    if lang in ("chinese", "auto") and dialect is not None:
        language_id = t.language_ids[dialect]
    return language_id


class Embedder(Protocol):
    def embed_text(self, ids: list[int]) -> np.ndarray: ...

    def embed_trailing(self, ids: list[int]) -> np.ndarray:
        """The rows of the text that trails an interleaved prefill (see `LanguageModel`)."""
        ...

    @property
    def trailing_block(self) -> int | None: ...

    def embed_codec(self, ids: list[int]) -> np.ndarray: ...

    def embed_frames(self, codes: np.ndarray) -> np.ndarray:
        """codes [frames, groups] -> [1, frames, hidden]: each frame's embeddings (codebook 0's from
        the talker's table, the others from the code predictor's) summed, as the official model
        sums a frame it has generated."""
        ...


def _speaker_row(talker: Embedder, config: ModelConfig, voice: Speaker) -> np.ndarray | None:
    if voice is None:
        return None
    if isinstance(voice, ClonedVoice):
        return np.asarray(voice.vector, np.float32).reshape(1, 1, -1)
    return talker.embed_codec([config.talker.speaker_ids[voice]])  # a resolved name (hearth.voices.rules)


def embed_prompt(
    talker: Embedder, config: ModelConfig, prompt: Prompt, voice: Speaker, language: str, text_mode: str
) -> PromptEmbeds:
    """The talker's prefill ([instruct,] role, codec tags [+ speaker], text) and the text that trails it.

    Each projection is called with the same batch shapes as the official model, so every row is
    rounded identically.
    """
    t = config.talker
    language_id = resolve_language(config, voice, language)
    special = talker.embed_text([config.tts_bos_id, config.tts_eos_id, config.tts_pad_id])
    tts_bos, tts_eos, tts_pad = special[:, 0:1], special[:, 1:2], special[:, 2:3]
    if language_id is None:
        tags = [t.codec_nothink_id, t.codec_think_bos_id, t.codec_think_eos_id]
    else:
        tags = [t.codec_think_id, t.codec_think_bos_id, language_id, t.codec_think_eos_id]
    speaker = _speaker_row(talker, config, voice)
    rows = [talker.embed_codec(tags)] + ([] if speaker is None else [speaker])
    codec = np.concatenate(rows + [talker.embed_codec([t.codec_pad_id, t.codec_bos_id])], axis=1)
    n_codec = codec.shape[1]
    role = talker.embed_text(prompt.role)
    pads = np.broadcast_to(tts_pad, (1, n_codec - 2, tts_pad.shape[2]))
    tagged = np.concatenate((pads, tts_bos), axis=1) + codec[:, :-1]
    parts = [role, tagged]
    if prompt.instruct:
        parts.insert(0, talker.embed_text(prompt.instruct))
    text = prompt.text
    prefix = sum(part.shape[1] for part in parts)
    if isinstance(voice, ClonedVoice) and voice.in_context:
        assert voice.codes is not None and voice.text_ids is not None
        body, trailing = _in_context(talker, config, voice.codes, voice.text_ids, text, tts_eos, tts_pad, text_mode)
        return PromptEmbeds(np.concatenate(parts + [body], axis=1), trailing, tts_pad, len(text), prefix)
    if text_mode == "whole":
        pads = talker.embed_codec([t.codec_pad_id] * (len(text) + 1))
        body = np.concatenate((talker.embed_text(text), tts_eos), axis=1) + pads
        parts += [body, tts_pad + talker.embed_codec([t.codec_bos_id])]
        trailing = tts_pad
    elif text_mode == "interleaved":
        parts.append(talker.embed_text(text[:1]) + codec[:, -1:])
        rest = talker.embed_trailing(text[1:]) if len(text) > 1 else tts_eos[:, :0]
        trailing = np.concatenate((rest, tts_eos), axis=1)
    else:
        raise ValueError(f"text_mode must be 'whole' or 'interleaved', got {text_mode!r}")
    return PromptEmbeds(np.concatenate(parts, axis=1), trailing, tts_pad, len(text), prefix)


def _in_context(talker: Embedder, config: ModelConfig, codes: np.ndarray, ref_ids: list[int], text: list[int],
                tts_eos: np.ndarray, tts_pad: np.ndarray, text_mode: str) -> tuple[np.ndarray, np.ndarray]:
    """The in-context part of a cloned voice's prompt: the transcript and the text as one text
    track (ending in tts_eos), the reference's frames after codec_bos as the codec track. "whole"
    puts the text track first (over codec_pad) and then the codec track (over tts_pad); "interleaved"
    lays them side by side, the text track's overhang trailing."""
    t = config.talker
    text_track = np.concatenate((talker.embed_text(ref_ids + text), tts_eos), axis=1)
    codec_track = np.concatenate((talker.embed_codec([t.codec_bos_id]), talker.embed_frames(codes)), axis=1)
    n_text, n_codec = text_track.shape[1], codec_track.shape[1]
    if text_mode == "whole":
        pads = talker.embed_codec([t.codec_pad_id] * n_text)
        body = np.concatenate((text_track + pads, codec_track + tts_pad), axis=1)
        return body, tts_pad
    if text_mode != "interleaved":
        raise ValueError(f"text_mode must be 'whole' or 'interleaved', got {text_mode!r}")
    if n_text > n_codec:
        return text_track[:, :n_codec] + codec_track, text_track[:, n_codec:]
    padded = np.concatenate([text_track] + [tts_pad] * (n_codec - n_text), axis=1)
    return padded + codec_track, tts_pad
