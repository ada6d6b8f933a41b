"""A request's text made speakable: plain text normalized whole, or an SSML document read into its
parts (each with its voice, language and rate, the silence before it and its marks) and each part
normalized. What the engine's `synthesize` and the scheduler speak."""

from __future__ import annotations

from dataclasses import dataclass

from hearth.text.normalize import Normalized, NormalizeOptions, Span, normalize, normalize_mapped
from hearth.text.normalize.ssml import parse_ssml
from hearth.text.normalize.width import fold_width

__all__ = ["SpokenPart", "normalizer_language", "speakable"]

# The checkpoint's dialects read text as Mandarin does.
_DIALECTS = {"beijing_dialect": "chinese", "sichuan_dialect": "chinese"}


def normalizer_language(language: str) -> str:
    """The normalizer's language for a checkpoint's language name ("auto" as it is)."""
    return _DIALECTS.get(language, language)


@dataclass(frozen=True)
class SpokenPart:
    """A stretch of a request spoken one way (the request's voice, language and speed where None)."""

    normalized: Normalized
    voice: str | None = None
    language: str | None = None
    speed: float | None = None
    pause_before_s: float = 0.0
    marks: tuple[tuple[str, int], ...] = ()  # (name, offset into normalized.text)

    @property
    def text(self) -> str:
        return self.normalized.text


def speakable(text: str, language: str, options: NormalizeOptions, text_format: str = "text") -> list[SpokenPart]:
    """`text` as parts to speak. Raises SsmlError (a ValueError) for SSML that cannot be spoken."""
    if text_format != "ssml":
        if not options.enabled:
            return [SpokenPart(Normalized(text, text, (Span(0, len(text), 0, len(text)),)))]
        return [SpokenPart(normalize(text, normalizer_language(language), options))]
    parts = []
    for part in parse_ssml(text):
        name = normalizer_language(part.language or language)
        if options.enabled:
            said = normalize_mapped(text, fold_width(part.text), 0, len(part.text), name, options, part.say_as)
        else:
            said = Normalized(text, part.text.text, tuple(
                Span(i, i + 1, part.text.starts[i], part.text.ends[i]) for i in range(len(part.text))))
        marks = tuple((mark, _spoken_offset(said, part.text.starts[at] if at < len(part.text) else None))
                      for mark, at in part.marks)
        parts.append(SpokenPart(said, part.voice, part.language, part.speed, part.pause_before_s, marks))
    return parts


def _spoken_offset(said: Normalized, source: int | None) -> int:
    """Where, in the spoken text, what stands at `source` of the document begins (a mark's place)."""
    if source is None:
        return len(said.text)
    for span in said.spans:
        if span.source_end > source or span.source_start >= source:
            return span.start
    return len(said.text)
