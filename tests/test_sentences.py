"""Sentence splitting for the resident speaker."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hearth.text.sentences import MAX_SENTENCE_CHARS, SentenceSplitter, clean_text, is_speakable, split_sentences


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
    assert all(100 <= len(p) <= 125 for p in pieces[:-1]) and len(pieces) > 5  # at a space soon after the cap
    assert " ".join(pieces).split() == long.split()
    clauses = ", ".join(["a clause with several words"] * 20) + "."
    pieces = list(split_sentences(clauses, max_chars=120))
    assert len(pieces) > 3 and all(p.endswith((",", ".")) and len(p) <= 150 for p in pieces)
    assert list(split_sentences("x" * 95 + " and more words", max_chars=100)) == ["x" * 95 + " and more words"]
    cjk = "字" * 700 + "。"
    pieces = list(split_sentences(cjk, max_chars=300))
    assert [len(p) for p in pieces] == [375, 326] and "".join(pieces) == cjk


# Text built from the characters and words the splitter decides on, pieces cut anywhere.
_WORDS = ["Mr.", "Dr", "e.g.", "3.5", "3", ".", "..", "...", "!", "?", "?!", ";", ",", '"', "”", "」", "。", "！",
          "你好", "word", "Word", "a", "J.", "\n", "\n\n", "\t", " ", "  ", "\u0301", "\u0323", "\x07", "😀", "é",
          "x", " .", " ,", "—"]


def _text(words):
    """Words joined, the longer ones followed by a space (marks, spaces and controls as they are)."""
    bare = "\n\n\t \u0301\u0323\x07"
    return "".join(w if w in bare or w[0] == " " else w + (" " if len(w) > 2 else "") for w in words)


@settings(max_examples=400, deadline=None)
@given(
    words=st.lists(st.sampled_from(_WORDS), max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=30),
    max_chars=st.sampled_from([12, 25, MAX_SENTENCE_CHARS]),
)
def test_pushed_pieces_give_the_same_sentences(words, cuts, max_chars):
    """Whatever the pieces: the sentences of the whole text, and each begins with what `pending()`
    said of it before (which only grows)."""
    text = _text(words)
    bounds = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    splitter = SentenceSplitter(max_chars)
    out: list[str] = []
    promised = ""

    def take(sentences):
        nonlocal promised
        for sentence in sentences:
            assert sentence.startswith(promised)
            promised = ""
        out.extend(sentences)

    for a, b in itertools.pairwise(bounds):
        take(splitter.push(text[a:b]))
        now = splitter.pending()
        assert now.startswith(promised)
        promised = now
    take(splitter.finish())
    assert promised == ""
    assert out == list(split_sentences(text, max_chars))


def test_pending_text():
    splitter = SentenceSplitter(max_chars=20)
    assert splitter.pending() == ""
    splitter.push("Hello there, how")
    assert splitter.pending() == "Hello there, ho"  # the last character stays back
    splitter.push(" ")
    assert splitter.pending() == "Hello there, ho"  # the space is not in the sentence until a word follows
    splitter.push("a")
    assert splitter.pending() == "Hello there, how "  # now "how" is known to be complete
    assert splitter.push("re you? I") == ["Hello there, how are you?"]
    assert splitter.pending() == ""
    assert splitter.push(" am fine and I thank you for asking") == ["I am fine and I thank"]  # cut after 20
    assert splitter.pending() == "you for askin"
    splitter = SentenceSplitter(max_chars=20)
    assert splitter.push("Some more words here and") == []
    assert splitter.pending() == "Some more words here"  # a cut may come after 20: no further yet
    assert splitter.push(" more, and") == ["Some more words here and"]  # no clause break by 25: a space


def test_pending_text_holds_back_what_may_change():
    splitter = SentenceSplitter()
    splitter.push("Cafe\u0301 time, word")  # NFC: "Café"; a mark may still join the last letter
    assert splitter.pending() == "Café time, wor"
    splitter.push(" .")
    assert splitter.pending() == "Café time, word"  # "word ." may become "word." at the end
    splitter.push("5 more")
    assert splitter.pending() == "Café time, word .5 mor"


def test_sentences_come_as_soon_as_they_end():
    splitter = SentenceSplitter()
    assert splitter.push("It costs 3.") == []
    assert splitter.push("5 dollars. Then") == ["It costs 3.5 dollars."]
    assert splitter.push(" Mr.") == []
    assert splitter.push(" Smith left!") == []  # an end mark at the very end may still grow ("!?")
    assert splitter.push("\n") == ["Then Mr. Smith left!"]
    assert splitter.push("你好。") == []
    assert splitter.push("再") == ["你好。"]
    assert splitter.finish() == ["再"]
    assert splitter.finish() == []
