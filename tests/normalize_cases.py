"""What each language's golden file shares (tests/test_normalize_<code>.py): its cases said as
written there, each unchanged when normalized again, and the span map's words with their source."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hearth.text.normalize import normalize

__all__ = ["golden", "words"]


def golden(language: str, cases: list[tuple[str, str]]) -> tuple[Callable[..., None], Callable[..., None]]:
    """The two tests of a language's golden cases, for its module to bind to test_* names."""

    @pytest.mark.parametrize(("text", "spoken"), cases)
    def test_golden(text: str, spoken: str) -> None:
        assert normalize(text, language).text == spoken

    @pytest.mark.parametrize(("text", "spoken"), cases)
    def test_normalizing_again_changes_nothing(text: str, spoken: str) -> None:
        assert normalize(spoken, language).text == spoken

    return test_golden, test_normalizing_again_changes_nothing


def words(text: str, language: str) -> list[tuple[str, str]]:
    """Each spoken word, and the characters of `text` it came from."""
    said = normalize(text, language)
    return [(w.text, text[w.source_start:w.source_end]) for w in said.words()]
