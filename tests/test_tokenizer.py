"""Hearth's tokenizer equals the standard Qwen2 tokenizer of `transformers` (slow and fast)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hearth.checkpoint.tokenizer import TextTokenizer
from hearth.text.prompt import LiveText, build_prompt

TEXTS = [
    "你好，欢迎回家。今天的天气怎么样？",
    "I'm sure they'll say it's fine, but we'd rather've known. DON'T SHOUT, it's LOUD.",
    "CamelCaseWords like HTTPServer, iPhone and getXMLHttpRequest2 appear.",
    "東京は晴れです。カタカナとひらがな、漢字。",
    "안녕하세요! 오늘 날씨가 좋네요.",
    "Digits 1234567890, 3.14159, 1,000,000 and -42°C at 08:30.",
    "Emoji 😀👍🏽🇯🇵 👨‍👩‍👧 and symbols ©®™ ★",
    "Tabs\tand\n\nnewlines\r\n  and   spaces   ",
    "Ünïcödé cafe\u0301 combining (NFC) ﬁ ligature",
    "<|im_start|>special tokens<|im_end|> <tts_pad> kept whole",
    " leading space and trailing ",
    "Привет, мир! Καλημέρα κόσμε. مرحبا بالعالم",
]


@pytest.fixture(scope="module")
def hearth_tok(tiny_dir):
    return TextTokenizer.from_dir(tiny_dir)


@pytest.fixture(scope="module")
def fast_tok(tiny_dir):
    from transformers import Qwen2TokenizerFast

    return Qwen2TokenizerFast.from_pretrained(str(tiny_dir))


@pytest.mark.parametrize("text", TEXTS)
def test_equals_standard_qwen2(hearth_tok, reference_tokenizer, fast_tok, text):
    ours = hearth_tok.encode(text)
    assert ours == reference_tokenizer.encode(text)
    assert ours == fast_tok.encode(text)
    assert hearth_tok.decode(ours) == reference_tokenizer.decode(ours)


def test_known_ids(hearth_tok):
    # Ids of the real Qwen2 vocabulary (from the released tokenizer), not produced by this code.
    assert hearth_tok.encode("你好，欢迎回家。") == [108386, 3837, 100437, 104122, 1773]
    assert hearth_tok.encode("assistant") == [77091]
    assert hearth_tok.encode("\n") == [198]


def test_prompt_layout(hearth_tok):
    p = build_prompt(hearth_tok, "Hello", None)
    assert p.role == [151644, 77091, 198]
    assert p.text == hearth_tok.encode("Hello")
    assert p.instruct is None
    q = build_prompt(hearth_tok, "Hello", "Be calm.")
    assert q.instruct == [151644] + hearth_tok.encode("user\nBe calm.") + [151645, 198]


def test_leading_newline_merges_with_role(hearth_tok):
    # "assistant\n\nHi": the two newlines become one token, as in the official whole-string tokenization.
    p = build_prompt(hearth_tok, "\nHi", None)
    assert p.role == [151644, 77091, hearth_tok.encode("\n\n")[0]]


_PIECES = ["Hello", " world", ",", " how", " are", "you", "?", " ", "  ", "\n", "\n\n", "\t", "I'm", "'s", "'ll", " 3",
           "14", ".", "5", "你好", "，", "。", "é", "e", "\u0301", "😀", "👍🏽", "<|im_end|>", "<|im_", "end|>", "-",
           "CamelCase", "x", "1,000", " ...", "!?", "  spaced", "DON'T"]


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(_PIECES), max_size=25), cuts=st.lists(st.integers(0, 300), max_size=20))
def test_live_text_equals_the_whole_text(hearth_tok, pieces, cuts):
    """Text pushed in any pieces commits exactly the ids the whole text gets, role included."""
    text = "".join(pieces)
    bounds = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    live = LiveText(hearth_tok)
    got = []
    for a, b in itertools.pairwise(bounds):
        got += live.push(text[a:b])
    got += live.end()
    whole = build_prompt(hearth_tok, text, None)
    assert got == live.text == whole.text and live.role == whole.role


def test_live_text_commits_all_but_the_last_word(hearth_tok):
    live = LiveText(hearth_tok)
    assert live.push("Good") == []
    first = live.push(" morning, every")
    assert hearth_tok.decode(first) == "Good morning,"
    assert hearth_tok.decode(live.push("one.")) == ""
    assert hearth_tok.decode(live.end()) == " everyone."
