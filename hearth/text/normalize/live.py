"""The front end for text that arrives in pieces (an LLM's answer): each piece gives out the spoken
text that can no longer change, and the end of the text received so far is held back while it could
still grow into something a rule reads ("21" that may become "21.5 °C", "Dec" that may become
"Dec 8", "**bold" whose closing stars are still to come). Plain words are given out as soon as the
word after them has begun, so text without numbers, dates or addresses is not delayed.

The text in pieces gives the same spoken text as the same text whole (tests/test_normalize_live.py
holds it to that with random texts and random cuts). How: the text is cut only between two plain
words (letters only, not in capitals, not a word that leads into a date or a currency, not the
first word of a lexicon entry; in Chinese and Japanese, between two such characters), and no rule
reads across such a cut. Markup still open (a code fence, `**`, a link's brackets) holds everything
from its opening. In "auto", a sentence's language is known once its first letters are (for text
that starts with Han characters, once kana shows it is Japanese or the sentence ends); nothing of
it is given out before.
"""

from __future__ import annotations

import re

from hearth.text.normalize import NormalizeOptions, language, normalize_span
from hearth.text.normalize.spans import Normalized, Span

__all__ = ["LiveNormalizer"]

_CJK_CHAR = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
# A unit: a CJK character, or a run of anything else that is not white space.
_UNIT = re.compile(rf"[{_CJK_CHAR}]|[^\s{_CJK_CHAR}]+")
_PLAIN = re.compile(rf"^(?:[{_CJK_CHAR}]|[^\W\d_]+(?:['’][^\W\d_]+)*[,;!?]?)$")
_OPENERS = re.compile(r"```|~~~|\*\*|__|~~|`|\[|<|\(")


class LiveNormalizer:
    """`push(text)` -> the spoken text now certain; `end()` -> the rest. `normalized()` is the
    whole so far, with its span map over everything pushed."""

    def __init__(self, language_name: str = "auto", options: NormalizeOptions | None = None,
                 max_held: int = 400):
        self.language = language_name
        self.options = options or NormalizeOptions()
        self.max_held = max_held  # beyond this many characters held, the text is given out anyway
        self.raw = ""
        self._done = 0  # raw characters given out
        self._text: list[str] = []
        self._spans: list[Span] = []
        self._spoken = 0
        self._lead_ins = self._lead_in_words()

    def push(self, text: str) -> str:
        self.raw += text
        cut = self._safe_cut()
        return self._give_out(cut) if cut > self._done else ""

    def end(self) -> str:
        return self._give_out(len(self.raw)) if len(self.raw) > self._done else ""

    def normalized(self) -> Normalized:
        return Normalized(self.raw, "".join(self._text), tuple(self._spans))

    @property
    def held(self) -> str:
        """What is received and not given out yet."""
        return self.raw[self._done:]

    def _give_out(self, cut: int) -> str:
        said = normalize_span(self.raw, self._done, cut, self.language, self.options)
        for span in said.spans:
            self._spans.append(Span(span.start + self._spoken, span.end + self._spoken, span.source_start,
                                    span.source_end, span.kind))
        self._text.append(said.text)
        self._spoken += len(said.text)
        self._done = cut
        return said.text

    def _lead_in_words(self) -> frozenset[str]:
        """Words that may begin something a rule reads with the words after them."""
        words: set[str] = set()
        names = [self.language] if self.language != "auto" else ["english"]
        for name in names:
            words |= language(name).lead_ins()
        lexicon = self.options.lexicon
        if lexicon is not None:
            for entries in lexicon.entries.values():
                for key in entries:
                    first = key.split()[0] if key.split() else key
                    if " " in key.strip():
                        words |= {first, first.lower()}
        return frozenset(words)

    def _plain(self, unit: str) -> bool:
        if not _PLAIN.match(unit):
            return False
        word = unit.rstrip(",;!?")
        if len(word) > 1 and word.isupper():
            return False  # an initialism, a currency's code, or shouting: read with its neighbours
        return word not in self._lead_ins and word.lower() not in self._lead_ins

    def _safe_cut(self) -> int:
        """The furthest place in the text received where everything before is certain."""
        start = self._done
        limit = len(self.raw)
        opened = self._first_open(self.raw[start:])
        if opened is not None:
            limit = start + opened
            if self.raw.startswith(("```", "~~~"), limit) or self.raw[limit:].lstrip(" \t").startswith(("```", "~~~")):
                held_anyway = False  # an open code fence: what it holds is left out once closed, never said
            else:
                held_anyway = len(self.raw) - start >= self.max_held
        else:
            held_anyway = len(self.raw) - start >= self.max_held
        if self.language == "auto":
            limit = min(limit, self._decided_until(start, limit))
        units = list(_UNIT.finditer(self.raw, start, limit))
        cut = start
        for before, after in zip(units, units[1:], strict=False):
            # A plain word is certain once the next has begun with a letter: no rule reads a plain
            # word together with what follows it (lead-ins excepted), and whatever the next grows
            # into begins where it does.
            if self._plain(before.group()) and after.group()[0].isalpha():
                cut = after.start()
        return len(self.raw) if cut == start and held_anyway else cut

    @staticmethod
    def _first_open(tail: str) -> int | None:
        """Where the first construct still open in `tail` begins (None: all closed)."""
        fences = [m.start() for m in re.finditer(r"^[ \t]*(?:```|~~~)", tail, re.M)]
        if len(fences) % 2:
            return fences[-1]
        last_line = tail.rfind("\n") + 1
        line = tail[last_line:]
        for opener in ("**", "__", "~~", "`"):
            if line.count(opener) % 2:
                return last_line + line.rfind(opener)
        for opener, closer in (("[", ")"), ("<", ">")):
            at = line.rfind(opener)
            if at >= 0 and closer not in line[at:]:
                return last_line + at
        return None

    def _decided_until(self, start: int, limit: int) -> int:
        """In "auto": how far the text is in sentences whose language is known (a sentence's first
        letters decide it; Han characters wait for kana or the sentence's end)."""
        from hearth.text.normalize import first_letters_language, sentence_starts

        last = max([start, *(b for b in sentence_starts(self.raw[:limit]) if b <= limit)])
        return limit if first_letters_language(self.raw[last:limit], final=False) is not None else last
