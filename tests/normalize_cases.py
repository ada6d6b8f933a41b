"""What each language's golden file uses (tests/test_normalize_<code>.py): the span map's words
with the characters they came from. Their cases are run by tests/test_normalize_golden.py."""

from __future__ import annotations

import itertools

from hearth.text.normalize import normalize

__all__ = ["spans", "words"]


def words(text: str, language: str) -> list[tuple[str, str]]:
    """Each spoken word, and the characters of `text` it came from."""
    said = normalize(text, language)
    return [(w.text, text[w.source_start:w.source_end]) for w in said.words()]


def spans(text: str, language: str) -> str:
    """The span map written out: each run of spoken words that came from the same characters, then
    those characters in brackets ("achten Dezember [08.12.]"); a word said as written stands alone
    ("Stock")."""
    out = []
    for source, run in itertools.groupby(words(text, language), key=lambda pair: pair[1]):
        said = [word for word, _ in run]
        out.append(source if said == [source] else f"{' '.join(said)} [{source}]")
    return " ".join(out)
