"""Splitting text into sentences for speaking one after another.

Handles Latin punctuation (with abbreviations, decimals, ellipses and closing quotes kept intact),
the full-width punctuation of Chinese, Japanese and Korean (no space needed after it), line breaks
between paragraphs, and very long sentences (cut at the first clause boundary after the cap, else
at a space soon after it: see `_cap`). Control characters are replaced by spaces; sentences with nothing speakable (no
letter or digit) are dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

__all__ = ["MAX_SENTENCE_CHARS", "SentenceSplitter", "clean_text", "is_speakable", "split_sentences"]

MAX_SENTENCE_CHARS = 300  # about 20 s of speech; longer sentences are cut at a clause boundary after it

# Words after which a period does not end a sentence (lower-cased, without the period).
_ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "etc", "e.g", "i.e", "cf", "al",
    "no", "vol", "fig", "approx", "dept", "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun",
    "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "a.m", "p.m", "ph.d", "gen", "col",
    "capt", "lt", "sgt", "rev", "hon", "est", "z.b", "bzw", "usw", "nr", "sra", "dña", "mme", "mlle",
}
_CLOSERS = "\"'”’»)]}）」』】〕〉》"
_CJK_ENDS = "。！？；…"  # full-width ends: no following space needed
_LATIN_ENDS = ".!?;"
_CLAUSE_BREAKS = ",，、:：;；—–"


def clean_text(text: str) -> str:
    """NFC, control characters (other than line breaks and tabs) replaced by spaces."""
    text = unicodedata.normalize("NFC", text)
    out = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
        elif unicodedata.category(ch) in ("Cc", "Cf") and ch not in "\u200d\u200c":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def is_speakable(sentence: str) -> bool:
    """True if there is at least one letter or digit to say."""
    return any(unicodedata.category(ch)[0] in ("L", "N") for ch in sentence)


def _ends_sentence(text: str, i: int) -> bool:
    """Whether the Latin end mark at text[i] ends a sentence."""
    ch = text[i]
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if ch == "." and nxt == ".":  # inside an ellipsis "..."
        return False
    if ch == "." and i > 0 and text[i - 1].isdigit() and nxt.isdigit():  # 3.14
        return False
    if nxt and not nxt.isspace() and nxt not in _CLOSERS:  # "e.g.x", "file.txt", "1.5"
        return False
    if ch == "." and i >= 2 and text[i - 2 : i] == "..":  # "Wait... what" continues the sentence
        rest = text[i + 1 :].lstrip()
        if rest[:1].islower():
            return False
    if ch == ".":
        word = re.search(r"([\w.]+)$", text[:i])
        if word:
            w = word.group(1).lower()
            if w in _ABBREVIATIONS or (len(w) == 1 and w.isalpha()):  # "J. R. R. Tolkien"
                return False
    return True


def _raw_sentences(paragraph: str) -> Iterator[str]:
    start, i, n = 0, 0, len(paragraph)
    while i < n:
        ch = paragraph[i]
        end = None
        if ch in _CJK_ENDS or ch in _LATIN_ENDS and _ends_sentence(paragraph, i):
            end = i + 1
        if end is not None:
            while end < n and (paragraph[end] in _LATIN_ENDS + _CJK_ENDS or paragraph[end] in _CLOSERS):
                end += 1  # keep "?!", "。」" and closing quotes with their sentence
            piece = paragraph[start:end].strip()
            if piece:
                yield piece
            start = i = end
            continue
        i += 1
    tail = paragraph[start:].strip()
    if tail:
        yield tail


def _cap(sentence: str, limit: int) -> tuple[list[str], str]:
    """A sentence cut into parts of about `limit` characters: (decided parts, the rest).

    A part ends at the first clause break at or after `limit` characters; without one before
    `limit + limit // 4`, at the last space before that, else there. So where a part ends depends
    only on the text up to that point: text that is still growing can be cut as it comes, and the
    first `limit` characters of a part are known as soon as they arrive. For a whole sentence the
    rest is its last part (possibly empty); for a growing one, the tail still to be decided."""
    hard = limit + limit // 4
    parts: list[str] = []
    while len(sentence) > limit:
        cut = next((i + 1 for i in range(limit, min(len(sentence), hard)) if sentence[i] in _CLAUSE_BREAKS), None)
        if cut is None:
            if len(sentence) <= hard:
                break  # a sentence that ends before `hard` stays whole; a growing one is undecided
            space = sentence.rfind(" ", limit, hard)
            cut = space if space >= 0 else hard
        parts.append(sentence[:cut].strip())
        sentence = sentence[cut:].lstrip()
    return parts, sentence


def _normalize(line: str) -> str:
    paragraph = " ".join(line.split())  # tabs and runs of spaces
    return re.sub(r" ([.,!?;:])(?=\s|$)", r"\1", paragraph)  # "here ." after a removed control char


def _line_sentences(line: str, max_chars: int) -> Iterator[str]:
    for sentence in _raw_sentences(_normalize(clean_text(line))):
        parts, rest = _cap(sentence, max_chars)
        for piece in [*parts, rest]:
            if is_speakable(piece):
                yield piece


def split_sentences(text: str, max_chars: int = MAX_SENTENCE_CHARS) -> Iterator[str]:
    """Speakable sentences of `text`, in order, each at most `max_chars` characters."""
    for line in re.split(r"\n\s*\n|\n", text):
        yield from _line_sentences(line, max_chars)


class SentenceSplitter:
    """`split_sentences` for text that arrives in pieces (an LLM's answer as it is written).

        splitter = SentenceSplitter()
        for piece in pieces:
            for sentence in splitter.push(piece):   # each sentence as soon as it is complete
                speak(sentence)
        for sentence in splitter.finish():          # the rest, at the end of the text
            speak(sentence)

    Whatever the pieces, the sentences are exactly `split_sentences` of the whole text. A sentence
    is returned once text after it shows that it has ended (a line break, or the start of the next
    sentence: "3." followed by "5" is not an end), and an over-long one in capped parts as they
    fill. `pending()` is the start of the sentence still being written, for a speaker that starts
    before a sentence ends. Work per push is linear in the current line's length, done only when the
    push can end a sentence.
    """

    def __init__(self, max_chars: int = MAX_SENTENCE_CHARS):
        self.max_chars = max_chars
        self._line = ""  # raw text after the last line break
        self._given = 0  # sentences of the current line already returned
        self._pending = False  # the line ends in an end mark or closer: the next push may end a sentence
        self._checked = 0  # length of the line at the last look

    def push(self, text: str) -> list[str]:
        """The sentences completed by `text` (often none)."""
        if not text:
            return []
        out: list[str] = []
        *complete, rest = (self._line + text).split("\n")
        for line in complete:
            out += list(_line_sentences(line, self.max_chars))[self._given :]
            self._given, self._pending, self._checked = 0, False, 0
        self._line = rest
        marks = _LATIN_ENDS + _CJK_ENDS + _CLOSERS + (_CLAUSE_BREAKS if len(rest) > self.max_chars else "")
        if self._pending or any(ch in marks for ch in text) or len(rest) - self._checked > self.max_chars // 4:
            out += self._ended()
        return out

    def finish(self) -> list[str]:
        """The rest of the text, at its end; the splitter is then ready for a new text."""
        out = list(_line_sentences(self._line, self.max_chars))[self._given :]
        self._line, self._given, self._pending, self._checked = "", 0, False, 0
        return out

    def pending(self) -> str:
        """The start of the next sentence, as far as later text cannot change it ("" before it has
        a letter or digit).

        What `push` and `finish` return next begins with it, whatever text comes, so a speaker can
        start on a sentence before it is complete. The last character stays back (a combining mark
        may still join it, a period may turn out to follow a space), with any marks after it; so
        does text past `max_chars` until the sentence's cut is decided. A space before what stays
        back is included when it is certain to be inside the sentence, so a word is known to be
        complete as soon as the next one begins."""
        decided, tail = self._survey()
        new = decided[self._given :]
        if new:
            return new[0]
        hold = 1
        while hold < len(tail) and unicodedata.combining(tail[-hold]):
            hold += 1  # marks at the end belong to the character before them
        cut = min(len(tail) - hold, self.max_chars)
        start = tail[:cut] if cut > 0 else ""
        if start.endswith(" ") and tail[cut] in ".,!?;:":
            start = start.rstrip()  # "word ." may still become "word." (the space is dropped before a mark)
        return start if is_speakable(start) else ""  # else the sentence may yet be dropped

    def _survey(self) -> tuple[list[str], str]:
        """The current line's speakable sentences that have ended, and the tail that may still grow."""
        paragraph = _normalize(clean_text(self._line))
        self._pending = bool(paragraph) and paragraph[-1] in _LATIN_ENDS + _CJK_ENDS + _CLOSERS
        raws = list(_raw_sentences(paragraph))
        if not raws:
            return [], ""
        # A sentence followed by another has ended; the last may still grow. Its parts are final
        # while the normalised text around them cannot change (all but its last 3 characters).
        ended: list[str] = []
        for raw in raws[:-1]:
            parts, rest = _cap(raw, self.max_chars)
            ended += [*parts, rest]
        last = raws[-1]
        parts, rest = _cap(last[:-3], self.max_chars)
        ended += parts
        tail = last[len(last) - len(rest) - 3 :].lstrip() if parts else last  # the undecided part
        return [piece for piece in ended if is_speakable(piece)], tail

    def _ended(self) -> list[str]:
        self._checked = len(self._line)
        ended, _ = self._survey()
        new = ended[self._given :]
        self._given = max(self._given, len(ended))
        return new
