"""The token ids Qwen3-ASR and Qwen3-ForcedAligner are given, laid out as qwen-asr lays them out.

ASR (qwen-asr's chat template with a system turn holding the context, a user turn holding the
audio, and the generation prompt; a forced language appends "language X<asr_text>" so that the
model writes the transcript alone):

    <|im_start|>system\\n{context}<|im_end|>\\n<|im_start|>user\\n<|audio_start|><|audio_pad|> x N
    <|audio_end|><|im_end|>\\n<|im_start|>assistant\\n[language {Language}<asr_text>]

Aligner (no chat turns): the audio, then each unit followed by two `<timestamp>` tokens, whose
positions the aligner's head scores (a start time, then an end time):

    <|audio_start|><|audio_pad|> x N<|audio_end|>{unit 1}<timestamp><timestamp>{unit 2}...

N is the audio encoder's output length for the features (`AudioEncoderConfig.tokens_for`). The
whole string is tokenized at once, as qwen-asr's processor does, so text in the context that
spells a special token becomes that token there too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hearth.checkpoint.asr_loading import AsrTokens
from hearth.checkpoint.tokenizer import TextTokenizer
from hearth.errors import InputError

__all__ = ["Prompt", "aligner_prompt", "asr_prompt"]

AUDIO_START, AUDIO_PAD, AUDIO_END = "<|audio_start|>", "<|audio_pad|>", "<|audio_end|>"
TIMESTAMP = "<timestamp>"


@dataclass(frozen=True)
class Prompt:
    """A prompt's ids [n] int64; rows audio_at .. audio_at + audio_tokens are the audio placeholders."""

    ids: np.ndarray
    audio_at: int
    audio_tokens: int


def _prompt(tok: TextTokenizer, tokens: AsrTokens, text: str, audio_tokens: int, param: str) -> Prompt:
    ids = np.asarray(tok.encode(text), dtype=np.int64)
    where = np.flatnonzero(ids == tokens.audio_pad)
    if where.size != audio_tokens or (audio_tokens and where[-1] - where[0] != audio_tokens - 1):
        # Only text given by the caller can have put placeholders elsewhere.
        raise InputError(f"the {param} holds the audio placeholder {AUDIO_PAD}; remove it", param)
    return Prompt(ids, int(where[0]) if audio_tokens else 0, audio_tokens)


def asr_prompt(tok: TextTokenizer, tokens: AsrTokens, audio_tokens: int, context: str = "",
               language: str | None = None, prefix: str = "") -> Prompt:
    """The transcription prompt; `language` (a canonical name, see hearth.listen.languages) forces
    the transcript's language and leaves the model only the text to write. `prefix`: the start of
    the answer, forced (live transcription's earlier text), appended to the string before it is
    tokenized, as qwen-asr's streaming appends it."""
    text = (f"<|im_start|>system\n{context}<|im_end|>\n<|im_start|>user\n"
            f"{AUDIO_START}{AUDIO_PAD * audio_tokens}{AUDIO_END}<|im_end|>\n<|im_start|>assistant\n")
    if language:
        text += f"language {language}<asr_text>"
    return _prompt(tok, tokens, text + prefix, audio_tokens, "context")


def aligner_prompt(tok: TextTokenizer, tokens: AsrTokens, audio_tokens: int,
                   units: list[str]) -> tuple[Prompt, np.ndarray]:
    """The alignment prompt and the positions of its `<timestamp>` tokens (two per unit, in order;
    with no units, the two that qwen-asr's layout still ends with)."""
    text = f"{AUDIO_START}{AUDIO_PAD * audio_tokens}{AUDIO_END}" + (TIMESTAMP * 2).join(units) + TIMESTAMP * 2
    prompt = _prompt(tok, tokens, text, audio_tokens, "text")
    positions = np.flatnonzero(prompt.ids == tokens.timestamp)
    if positions.size != 2 * max(len(units), 1):
        raise InputError(f"the text holds the token {TIMESTAMP}; remove it", "text")
    return prompt, positions
