"""A submitted text made into the sentences a request speaks: normalized (`hearth.text.normalize`),
or, as SSML, read into parts whose sentences carry their part's voice, language and speed and the
silence before it, then cut into sentences (`hearth.text.sentences`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from hearth.errors import InputError
from hearth.options import SpeechOptions
from hearth.text.normalize import Normalized
from hearth.text.normalize.document import speakable
from hearth.text.sentences import clean_text, split_sentences

__all__ = ["SentencePlan", "plan_sentences"]


@dataclass
class SentencePlan:
    texts: list[str] = field(default_factory=list)
    options: list[tuple[SpeechOptions, float]] = field(default_factory=list)  # each sentence's, and its pause
    marks: list[tuple[str, int, int]] = field(default_factory=list)  # (name, sentence, offset in it)
    spoken: list[Normalized] = field(default_factory=list)  # each part, with its span map
    part_of: list[int] = field(default_factory=list)  # each sentence's part (an index into `spoken`)


def plan_sentences(engine: Any, text: str, opts: SpeechOptions, split: bool) -> SentencePlan:  # noqa: ANN401
    """The sentences of `text` with their options. `engine` checks a part's voice and language."""
    try:
        parts = speakable(text, opts.language, opts.normalize, opts.text_format)
    except ValueError as e:  # SSML that cannot be spoken: the message names where
        raise InputError(str(e), "text") from None
    plan = SentencePlan()
    pause = 0.0
    for part in parts:
        pause += part.pause_before_s
        said = opts
        if part.voice or part.language or part.speed is not None:
            said = dataclasses.replace(
                opts, voice=engine.check_voice(part.voice) if part.voice else opts.voice,
                language=engine.check_language(part.language) if part.language else opts.language,
                speed=part.speed if part.speed is not None else opts.speed)
        spoken = clean_text(part.text)
        plan.spoken.append(part.normalized)
        if not spoken.strip():
            continue
        first = len(plan.texts)
        sentences = list(split_sentences(spoken)) if split else [spoken.strip()]
        for i, sentence in enumerate(sentences):
            plan.texts.append(sentence)
            plan.options.append((said, pause if i == 0 else 0.0))
            plan.part_of.append(len(plan.spoken) - 1)
        pause = 0.0
        plan.marks += [_mark(name, at, spoken, sentences, first) for name, at in part.marks]
    return plan


def _mark(name: str, at: int, text: str, sentences: list[str], first: int) -> tuple[str, int, int]:
    """(name, sentence, offset in it) for a mark at `at` of a part's spoken text."""
    pos = 0
    for i, sentence in enumerate(sentences):
        start = text.find(sentence, pos)
        if start < 0:
            continue
        if at <= start + len(sentence):
            return name, first + i, max(0, at - start)
        pos = start + len(sentence)
    return name, first + max(0, len(sentences) - 1), len(sentences[-1]) if sentences else 0
