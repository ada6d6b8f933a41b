"""Where aligned units stand in a text: the aligner's units (words cleaned of punctuation; each CJK
character) found, in order, in the text they were cut from, and carried to the characters of an
original text through a span map (a `hearth.text.normalize.spans.Normalized`, or any object with
`text` and `to_source`)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Mapped", "Unmapped", "UnitPlacer"]


class Mapped(Protocol):
    """A text (`text`) with a map of its ranges onto an original (`to_source`)."""

    @property
    def text(self) -> str: ...

    def to_source(self, start: int, end: int) -> tuple[int, int]: ...


@dataclass(frozen=True)
class Unmapped:
    """A text that is its own original."""

    text: str

    def to_source(self, start: int, end: int) -> tuple[int, int]:
        return start, end


def _kept(ch: str) -> bool:
    """Characters the aligner's units keep (letters, digits, apostrophes)."""
    return ch == "'" or unicodedata.category(ch)[0] in "LN"


class UnitPlacer:
    """Places units in order, each after the one before: first across nothing but spaces and
    punctuation, else (a piece that was never said, such as a lone apostrophe) at its next
    occurrence. Several texts in turn (`part`: a request's SSML parts, a recording's pieces) each
    start from their beginning."""

    def __init__(self) -> None:
        self._part = -1
        self._cursor = 0

    def locate(self, part: int, said: Mapped, units: Sequence[str]) -> list[tuple[int, int]]:
        """Each unit's [start, end) in the original of `said`; a unit not found there stands where
        the last one ended."""
        if part != self._part:
            self._part, self._cursor = part, 0
        out = []
        for unit in units:
            found = self._find(said.text, unit)
            if found is None:
                at = said.to_source(self._cursor, self._cursor)[0]
                out.append((at, at))
                continue
            start, end = found
            self._cursor = end
            out.append(said.to_source(start, end))
        return out

    def _find(self, text: str, unit: str) -> tuple[int, int] | None:
        for strict in (True, False):
            pos, start = self._cursor, None
            for ch in unit:
                at = text.find(ch, pos)
                if at < 0 or (strict and any(_kept(c) for c in text[pos:at])):
                    break
                start = at if start is None else start
                pos = at + 1
            else:
                if start is not None:
                    return start, pos
        return None
