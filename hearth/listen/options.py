"""A transcription request's options (`Listener.transcribe`, `Listener.live`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ListenOptions"]


@dataclass(frozen=True)
class ListenOptions:
    """One request's options. `language` None lets the model tell; a name forces it (the model then
    writes the text alone). `context` is text the model may use (names, terms), put in the system
    turn. `timestamps` needs a Listener loaded with an aligner."""

    context: str = ""
    language: str | None = None
    max_new_tokens: int = 512  # per piece; qwen-asr's default
    timestamps: bool = False
