"""Text rewritten step by step (markup taken out, SSML read) that keeps, for each of its
characters, the range of the original text it came from: what lets the span map point at the
original after several rewrites."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Mapped", "Said"]


@dataclass(frozen=True)
class Said:
    """Text put in for a whole match (an entity's character, a pause after a heading)."""

    text: str
    empty: bool = False  # True: it stands for nothing of the original (mapped to where the match ends)


class Mapped:
    """A text and, per character, [start, end) in the original."""

    def __init__(self, text: str, starts: list[int] | None = None, ends: list[int] | None = None):
        self.text = text
        self.starts = list(range(len(text))) if starts is None else starts
        self.ends = [i + 1 for i in range(len(text))] if ends is None else ends

    def __len__(self) -> int:
        return len(self.text)

    def slice(self, start: int, end: int) -> Mapped:
        return Mapped(self.text[start:end], self.starts[start:end], self.ends[start:end])

    def origin(self, start: int, end: int) -> tuple[int, int]:
        """The original range of [start, end) (an empty range: where it stands)."""
        if start >= end:
            at = self.starts[start] if start < len(self.starts) else (self.ends[-1] if self.ends else 0)
            return at, at
        return min(self.starts[start:end]), max(self.ends[start:end])

    def is_verbatim(self, i: int) -> bool:
        return self.ends[i] - self.starts[i] == 1

    def sub(self, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], Sequence[int | str | Said]],
            flags_text: str | None = None) -> Mapped:
        """Each match replaced by what `replace(match)` lists: a group's number (its characters kept,
        with their origins), a string (its characters, each mapped to the whole match) or `Said`."""
        text, starts, ends = [], [], []
        pos = 0
        for m in pattern.finditer(self.text if flags_text is None else flags_text):
            if m.end() == m.start():
                continue
            text.append(self.text[pos:m.start()])
            starts += self.starts[pos:m.start()]
            ends += self.ends[pos:m.start()]
            for item in replace(m):
                if isinstance(item, int):
                    a, b = m.span(item)
                    if a < 0:
                        continue
                    text.append(self.text[a:b])
                    starts += self.starts[a:b]
                    ends += self.ends[a:b]
                else:
                    said = item if isinstance(item, Said) else Said(item)
                    lo, hi = self.origin(m.start(), m.end())
                    if said.empty:
                        lo = hi
                    text.append(said.text)
                    starts += [lo] * len(said.text)
                    ends += [hi] * len(said.text)
            pos = m.end()
        text.append(self.text[pos:])
        starts += self.starts[pos:]
        ends += self.ends[pos:]
        return Mapped("".join(text), starts, ends)
