"""Every language's golden cases (CASES of tests/test_normalize_<code>.py, written from that
language's own rules): each said as written there, and unchanged when normalized again."""

from __future__ import annotations

import importlib

import pytest

from hearth.text.normalize import LANGUAGES, normalize

GOLDEN = [(name, text, spoken) for name, (code, _) in LANGUAGES.items()
          for text, spoken in importlib.import_module(f"test_normalize_{code}").CASES]


@pytest.mark.parametrize(("language", "text", "spoken"), GOLDEN)
def test_each_case_is_said_as_its_language_says_it(language, text, spoken):
    assert normalize(text, language).text == spoken


@pytest.mark.parametrize(("language", "text", "spoken"), GOLDEN)
def test_normalizing_again_changes_nothing(language, text, spoken):
    assert normalize(spoken, language).text == spoken
