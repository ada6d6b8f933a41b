"""Every language's golden cases (CASES of tests/test_normalize_<code>.py, written from that
language's own rules): each said as written there, and unchanged when normalized again; the span
map of some (SPANS, written out by `normalize_cases.spans`: "achten Dezember [08.12.]"); and what
the language "auto" makes of texts in several languages."""

from __future__ import annotations

import importlib

import pytest
from normalize_cases import spans

from hearth.text.normalize import LANGUAGES, language_of, normalize

_FILES = {name: importlib.import_module(f"test_normalize_{code}") for name, (code, _) in LANGUAGES.items()}
GOLDEN = [(name, text, spoken) for name, cases in _FILES.items() for text, spoken in cases.CASES]
SPANS = [(name, text, said) for name, cases in _FILES.items() for text, said in getattr(cases, "SPANS", [])]

# What the language "auto" makes of a text: each sentence read in the language of its script.
AUTO = [
    ("気温は21.5℃です。", "気温は二十一点五度です。"),
    ("It costs ¥2,350. 値段は2350円です。",
     "It costs two thousand three hundred fifty yen. 値段は二千三百五十円です。"),
    ("오후 7시 30분에 만나요.", "오후 일곱 시 삼십 분에 만나요."),
    ("We meet at 7:30 pm. 오후 7시 30분에 만나요.", "We meet at seven thirty P M. 오후 일곱 시 삼십 분에 만나요."),
    ("温度是21.5℃。", "温度是二十一点五摄氏度。"),
    ("It is 2350 yuan. 一共2350元。", "It is two thousand three hundred fifty yuan. 一共两千三百五十元。"),
    ("I have 3 cats and 28,000 fans.", "I have three cats and twenty-eight thousand fans."),
    ("Сегодня 08.12.2026.", "Сегодня восьмое декабря две тысячи двадцать шестого года."),
]
# Kana and Han are Japanese, hangul Korean, Han alone Chinese.
SCRIPTS = [("気温は21.5℃です", "japanese"), ("기온은 21.5℃입니다", "korean"), ("温度是21.5℃", "chinese")]


@pytest.mark.parametrize(("language", "text", "spoken"), GOLDEN)
def test_each_case_is_said_as_its_language_says_it(language, text, spoken):
    assert normalize(text, language).text == spoken


@pytest.mark.parametrize(("language", "text", "spoken"), GOLDEN)
def test_normalizing_again_changes_nothing(language, text, spoken):
    assert normalize(spoken, language).text == spoken


@pytest.mark.parametrize(("language", "text", "said"), SPANS)
def test_each_spoken_word_maps_to_the_characters_it_came_from(language, text, said):
    assert spans(text, language) == said


@pytest.mark.parametrize(("text", "spoken"), AUTO)
def test_auto_reads_each_sentence_in_its_own_language(text, spoken):
    assert normalize(text, "auto").text == spoken


@pytest.mark.parametrize(("text", "language"), SCRIPTS)
def test_auto_finds_the_language_by_its_script(text, language):
    assert language_of(text) == language
