"""What each language's golden file uses (tests/test_normalize_<code>.py): the span map's words
with the characters they came from. Their cases are run by tests/test_normalize_golden.py."""

from __future__ import annotations

from hearth.text.normalize import normalize

__all__ = ["words"]


def words(text: str, language: str) -> list[tuple[str, str]]:
    """Each spoken word, and the characters of `text` it came from."""
    said = normalize(text, language)
    return [(w.text, text[w.source_start:w.source_end]) for w in said.words()]
