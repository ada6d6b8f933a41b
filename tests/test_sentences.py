"""Sentence splitting for the resident speaker."""

from __future__ import annotations

import pytest

from hearth.sentences import clean_text, is_speakable, split_sentences


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Hello there. How are you? I'm fine!", ["Hello there.", "How are you?", "I'm fine!"]),
        ("Dr. Smith met Mrs. Jones at 3.30 p.m. today. Then they left.",
         ["Dr. Smith met Mrs. Jones at 3.30 p.m. today.", "Then they left."]),
        ("Pi is 3.14159, roughly. e.g. this stays whole.", ["Pi is 3.14159, roughly.", "e.g. this stays whole."]),
        ('He said, "Stop right there." Then he ran.', ['He said, "Stop right there."', "Then he ran."]),
        ("Wait... what?! Really?", ["Wait... what?!", "Really?"]),
        ("J. R. R. Tolkien wrote books. They are long.", ["J. R. R. Tolkien wrote books.", "They are long."]),
        ("你好。今天天气很好！我们去公园吧？", ["你好。", "今天天气很好！", "我们去公园吧？"]),
        ("「こんにちは。」と彼は言った。元気ですか？", ["「こんにちは。」", "と彼は言った。", "元気ですか？"]),
        ("안녕하세요. 만나서 반갑습니다! 잘 지내세요?", ["안녕하세요.", "만나서 반갑습니다!", "잘 지내세요?"]),
        ("Mixed text. 中文句子。English again!", ["Mixed text.", "中文句子。", "English again!"]),
        ("Line one\nLine two\n\nParagraph three", ["Line one", "Line two", "Paragraph three"]),
        ("Version 2.0.1 of file.txt is out. Go get it.", ["Version 2.0.1 of file.txt is out.", "Go get it."]),
        ("The U.S. economy grew. Good.", ["The U.S. economy grew.", "Good."]),
    ],
)
def test_split(text, expected):
    assert list(split_sentences(text)) == expected


def test_unspeakable_pieces_are_dropped():
    assert list(split_sentences("... !!! 😀🎉 ???")) == []
    assert list(split_sentences("Hi! 😀 🎉. Bye.")) == ["Hi!", "Bye."]
    assert not is_speakable("—…")
    assert is_speakable("42")


def test_control_characters():
    assert clean_text("a\x00b\x07c\u200bd\ne") == "a b c d\ne"
    assert list(split_sentences("Bell\x07 rings. Null\x00 byte.")) == ["Bell rings.", "Null byte."]


def test_long_sentences_are_capped_at_clause_boundaries():
    long = "word " * 200 + "end."
    pieces = list(split_sentences(long, max_chars=100))
    assert all(len(p) <= 100 for p in pieces)
    assert " ".join(pieces).split() == long.split()
    clauses = ", ".join(["a clause with several words"] * 20) + "."
    pieces = list(split_sentences(clauses, max_chars=120))
    assert all(p.endswith((",", ".")) for p in pieces)
    cjk = "字" * 700 + "。"
    pieces = list(split_sentences(cjk, max_chars=300))
    assert all(len(p) <= 300 for p in pieces) and "".join(pieces) == cjk
