"""Splitting text into sentences for speaking one after another.

Handles Latin punctuation (with abbreviations, decimals, ellipses and closing quotes kept intact),
the full-width punctuation of Chinese, Japanese and Korean (no space needed after it), line breaks
between paragraphs, and very long sentences (cut at the last clause boundary, else the last space,
before the cap). Control characters are replaced by spaces; sentences with nothing speakable (no
letter or digit) are dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

__all__ = ["split_sentences", "clean_text", "is_speakable", "MAX_SENTENCE_CHARS"]

MAX_SENTENCE_CHARS = 300  # about 20 s of speech; longer sentences are cut at a clause boundary

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


def _cap(sentence: str, limit: int) -> Iterator[str]:
    while len(sentence) > limit:
        window = sentence[:limit]
        cut = max(window.rfind(c) for c in _CLAUSE_BREAKS)
        if cut < limit // 3:
            cut = window.rfind(" ")
        if cut < limit // 3:
            cut = limit - 1  # no boundary at all (e.g. CJK without commas): cut hard
        yield sentence[: cut + 1].strip()
        sentence = sentence[cut + 1 :].strip()
    if sentence:
        yield sentence


def split_sentences(text: str, max_chars: int = MAX_SENTENCE_CHARS) -> Iterator[str]:
    """Speakable sentences of `text`, in order, each at most `max_chars` characters."""
    text = clean_text(text)
    for line in re.split(r"\n\s*\n|\n", text):
        paragraph = " ".join(line.split())  # tabs and runs of spaces
        paragraph = re.sub(r" ([.,!?;:])(?=\s|$)", r"\1", paragraph)  # "here ." after a removed control char
        for sentence in _raw_sentences(paragraph):
            for piece in _cap(sentence, max_chars):
                if is_speakable(piece):
                    yield piece
