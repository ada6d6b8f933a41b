"""What will be spoken, and where each part of it came from: the span map.

A normalizer builds the spoken text piece by piece (`Spoken`), each piece tied to the range of the
original text it stands for. A piece copied as it is ("verbatim") maps character for character, so
a word inside it maps back to exactly its own characters; a piece a rule wrote ("21.5 °C" ->
"twenty-one point five degrees Celsius") maps as a whole to the characters it replaced. Text the
normalizer adds (a pause after a heading) maps to an empty range where it was added; text it drops
(markup) maps to nothing. Word timestamps and captions use the map to point at the original text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Normalized", "Span", "Spoken", "Word"]

VERBATIM = "verbatim"


@dataclass(frozen=True)
class Span:
    """[start, end) of the spoken text came from [source_start, source_end) of the original.
    `kind` is "verbatim" (the same characters, one to one) or what a rule read ("number", "date",
    "time", "currency", "measure", "url", ...; "added" for text put in where there was none)."""

    start: int
    end: int
    source_start: int
    source_end: int
    kind: str = VERBATIM

    def to_json(self) -> dict[str, object]:
        return {"start": self.start, "end": self.end, "source_start": self.source_start,
                "source_end": self.source_end, "kind": self.kind}


@dataclass(frozen=True)
class Word:
    """A spoken word and the characters of the original text it came from."""

    text: str
    start: int  # in the spoken text
    end: int
    source_start: int
    source_end: int


@dataclass(frozen=True)
class Normalized:
    """The spoken form of `source`, with the span map (spans cover `text` in order, without gaps)."""

    source: str
    text: str
    spans: tuple[Span, ...]

    def to_source(self, start: int, end: int) -> tuple[int, int]:
        """The range of the original text that the spoken range [start, end) came from."""
        lo, hi = None, None
        for span in self.spans:
            if span.end <= start and not (span.start == span.end == start):
                continue
            if span.start >= end and not (start == end == span.start):
                break
            if span.kind == VERBATIM:
                a = span.source_start + max(start, span.start) - span.start
                b = span.source_start + min(end, span.end) - span.start
            else:
                a, b = span.source_start, span.source_end
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)
        if lo is None or hi is None:
            return (len(self.source), len(self.source)) if start >= len(self.text) else (0, 0)
        return lo, hi

    def words(self) -> list[Word]:
        """The spoken words (runs of letters, digits, apostrophes and joining hyphens; each CJK
        character a word of its own), each with its range in the original text."""
        out = []
        for m in _WORD.finditer(self.text):
            a, b = self.to_source(m.start(), m.end())
            out.append(Word(m.group(), m.start(), m.end(), a, b))
        return out

    def to_json(self) -> dict[str, object]:
        return {"source": self.source, "text": self.text, "spans": [s.to_json() for s in self.spans],
                "words": [{"word": w.text, "start": w.start, "end": w.end, "source_start": w.source_start,
                           "source_end": w.source_end} for w in self.words()]}


# CJK ideographs, kana and hangul syllables each count as a word: they have no spaces between them.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}](?:[^\W{_CJK}]|['’][^\W{_CJK}]|-(?=[^\W\d_{_CJK}]))*")


class Spoken:
    """Builds a `Normalized`: pieces appended in order, each with the source range it stands for."""

    def __init__(self, source: str):
        self.source = source
        self._parts: list[str] = []
        self._spans: list[Span] = []
        self._length = 0

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def ends_with_space(self) -> bool:
        return not self._parts or self._parts[-1][-1:].isspace()

    def verbatim(self, start: int, end: int) -> None:
        """Copy source[start:end] as it is."""
        if end > start:
            self._add(self.source[start:end], start, end, VERBATIM)

    def said(self, text: str, start: int, end: int, kind: str) -> None:
        """`text` is how source[start:end] is spoken."""
        if text:
            self._add(text, start, end, kind)

    def added(self, text: str, at: int) -> None:
        """`text` put in at source position `at`, where the source has nothing (a pause, a space)."""
        if text:
            self._add(text, at, at, "added")

    def _add(self, text: str, start: int, end: int, kind: str) -> None:
        last = self._spans[-1] if self._spans else None
        if (kind == VERBATIM and last is not None and last.kind == VERBATIM and last.source_end == start
                and last.end == self._length):
            self._spans[-1] = Span(last.start, last.end + len(text), last.source_start, end, VERBATIM)
        else:
            self._spans.append(Span(self._length, self._length + len(text), start, end, kind))
        self._parts.append(text)
        self._length += len(text)

    def build(self) -> Normalized:
        return Normalized(self.source, self.text, tuple(self._spans))
