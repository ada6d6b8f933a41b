"""Text in pieces speaks as the same text whole: the live front end against `normalize`, on random
texts rich in what the rules read (numbers, money, measures, dates, times, addresses, markup) cut
at random places (hypothesis), and what it holds back and gives out."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hearth.text.normalize import NormalizeOptions, normalize
from hearth.text.normalize.lexicon import Lexicon
from hearth.text.normalize.live import LiveNormalizer

FRAGMENTS = [
    "the", "weather", "is", "nice", "today", "and", "Smith", "Louis", "Main", "St.", "Dr.", "e.g.", "USB", "NASA",
    "THE", "LOUD", "21.5", "°C", "21.5 °C", "7:30", "pm", "7:30 pm", "12/08", "2026-12-08", "Dec", "8,", "2026",
    "$1,234.56", "€5", "5", "€", "EUR", "20", "45 %", "%", "-3", "10-20", "–", "3rd", "1999", "in", "+49 30 1234567",
    "(555) 123-4567", "https://www.home-assistant.io/docs", "me@example.com", "example.org", "**bold**", "**",
    "`code`", "[a link](https://x.org)", "## Heading", "- item", "😀", "&amp;", "<b>", "</b>", "3/4", "kWh", "5 kWh",
    "km/h", "100", "1,000", ".", ",", "!", "?", "Hello.", "The", "It's", "温度是", "21.5℃", "今日は", "晴れ",
    "2026年12月8日", "오늘", "날씨", "привет", "мир", "z. B.", "Home", "Assistant", "Qwen",
]


def texts() -> st.SearchStrategy[str]:
    import importlib.util  # (until every language's rules are in: the fragments of those that are)

    fragments = [f for f in FRAGMENTS if importlib.util.find_spec("hearth.text.normalize.languages.zh")
                 or f.isascii() or "°" in f or "€" in f or "😀" in f]
    pieces = st.lists(st.sampled_from(fragments), min_size=1, max_size=25)
    seps = st.lists(st.sampled_from([" ", " ", " ", "\n", ". ", ", ", "\n\n", ""]), min_size=25, max_size=25)
    return st.builds(lambda w, s: "".join(x + y for x, y in zip(w, s, strict=False)), pieces, seps)


def pushed(text: str, cuts: list[int], live: LiveNormalizer) -> str:
    points = sorted({min(c, len(text)) for c in cuts})
    out, last = [], 0
    for c in [*points, len(text)]:
        out.append(live.push(text[last:c]))
        last = c
    out.append(live.end())
    return "".join(out)


@settings(max_examples=400, deadline=None)
@given(texts(), st.lists(st.integers(0, 400), max_size=30), st.sampled_from(["english", "auto"]))
def test_text_in_pieces_speaks_as_the_text_whole(text, cuts, language):
    live = LiveNormalizer(language)
    assert pushed(text, cuts, live) == normalize(text, language).text
    assert live.normalized().text == normalize(text, language).text


@settings(max_examples=150, deadline=None)
@given(texts(), st.lists(st.integers(0, 400), max_size=30))
def test_with_a_lexicon_of_several_words(text, cuts):
    lexicon = Lexicon.from_dict({"words": {"Home Assistant": "home assistant", "Qwen": "chwen"}}, ("english",))
    options = NormalizeOptions(lexicon=lexicon)
    assert pushed(text, cuts, LiveNormalizer("english", options)) == normalize(text, "english", options).text


def test_plain_words_are_given_out_as_the_next_word_begins():
    live = LiveNormalizer("english")
    assert live.push("Hello there my") == "Hello there "
    assert live.push(" friend, it is 21") == "my friend, it "
    assert live.held == "is 21"
    assert live.push(".5 °C today") == ""  # "21.5 °C" is certain once a plain word follows it
    assert live.push(" and") == "is twenty-one point five degrees Celsius today "
    assert live.end() == "and"


def test_open_markup_is_held_until_it_closes():
    live = LiveNormalizer("english")
    assert live.push("Say **very") == ""
    assert live.push(" loud** words now") == "Say very loud words "
    assert live.push("\n```\ncode 1 2 3\n") == ""
    assert live.push("```\nafter that done") == "now\nafter that "


def test_auto_waits_for_the_first_letters():
    live = LiveNormalizer("auto")
    assert live.push("21.5 ") == ""
    assert live.push("°C is warm today") == "twenty-one point five degrees Celsius is warm "
    live = LiveNormalizer("auto")
    assert live.push("今日") == ""  # Chinese or Japanese? kana will tell
    assert live.push("は晴れ") != ""
