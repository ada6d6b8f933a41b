"""The SSML subset read into parts (hearth.text.normalize.ssml) and spoken (document.speakable):
each element's effect, the span map back to the document, and markup refused with its place."""

from __future__ import annotations

import pytest

from hearth.text.normalize import NormalizeOptions
from hearth.text.normalize.document import speakable
from hearth.text.normalize.ssml import SsmlError, parse_ssml


def spoken(document: str, language: str = "english") -> list:
    return speakable(document, language, NormalizeOptions(), "ssml")


def test_breaks_become_the_silence_before_the_next_part():
    parts = spoken('<speak>One. <break time="250ms"/>Two. <break strength="strong"/>Three.'
                   '<break time="2s"/></speak>')
    assert [(p.text.strip(), p.pause_before_s) for p in parts] == [("One.", 0.0), ("Two.", 0.25), ("Three.", 0.75),
                                                                   ("", 2.0)]


@pytest.mark.parametrize(("markup", "said"), [
    ('<say-as interpret-as="characters">USB</say-as>', "U S B"),
    ('<say-as interpret-as="spell-out">ab1</say-as>', "A B one"),
    ('<say-as interpret-as="cardinal">1234</say-as>', "one thousand two hundred thirty-four"),
    ('<say-as interpret-as="ordinal">3</say-as>', "third"),
    ('<say-as interpret-as="digits">1234</say-as>', "one two three four"),
    ('<say-as interpret-as="date" format="dmy">08/12/2026</say-as>', "December eighth, twenty twenty-six"),
    ('<say-as interpret-as="date" format="ymd">2026-12-08</say-as>', "December eighth, twenty twenty-six"),
    ('<say-as interpret-as="date" format="y">1999</say-as>', "nineteen ninety-nine"),
    ('<say-as interpret-as="time">7:30 pm</say-as>', "seven thirty P M"),
    ('<say-as interpret-as="telephone">+49 30 123</say-as>', "plus four nine, three zero, one two three"),
    ('<say-as interpret-as="currency">$5.20</say-as>', "five dollars and twenty cents"),
    ('<sub alias="World Wide Web">WWW</sub>', "World Wide Web"),
    ('<emphasis>really</emphasis>', "really"),
])
def test_say_as_and_sub_are_read_as_they_say(markup, said):
    (part,) = spoken(f"<speak>{markup}</speak>")
    assert part.text.strip() == said


def test_lang_voice_and_prosody_make_parts_with_their_own_options():
    parts = spoken('<speak xml:lang="en-US">Hi. <lang xml:lang="de-DE">Es ist 21,5 °C.</lang> '
                   '<voice name="aiden"><prosody rate="120%">Fast 5.</prosody></voice></speak>')
    described = [(p.text.strip(), p.language, p.voice, p.speed) for p in parts]
    assert described == [("Hi.", "english", None, None),
                         ("Es ist einundzwanzig Komma fünf Grad Celsius.", "german", None, None),
                         ("Fast five.", "english", "aiden", 1.2)]


def test_marks_keep_their_place_in_the_spoken_text():
    (part,) = spoken('<speak>It is <mark name="number"/>21 °C<mark name="end"/> now.</speak>')
    offsets = dict(part.marks)
    assert part.text[offsets["number"]:].startswith("twenty-one degrees")
    assert part.text[:offsets["end"]].endswith("Celsius")


def test_the_span_map_points_into_the_document():
    document = '<speak><p>Pay $5 &amp; go.</p></speak>'
    (part,) = spoken(document)
    words = {w.text: document[w.source_start:w.source_end] for w in part.normalized.words()}
    assert words["five"] == "$5" and words["dollars"] == "$5" and words["and"] == "&amp;" and words["go"] == "go"


@pytest.mark.parametrize(("document", "said"), [
    ("<speak>unclosed", "not well-formed: no element found at line 1, column 16"),
    ("<speak><blink/></speak>", "<blink> at line 1, column 8"),
    ("<p>not the root</p>", "one <speak> element"),
    ("Hello there.", "wrap it in <speak>...</speak>, or send it as plain text"),
    ('<speak>\n<break time="later"/></speak>', "break time 'later' at line 2, column 1"),
    ('<speak><say-as interpret-as="cipher">x</say-as></speak>', "say-as interpret-as='cipher'"),
    ('<speak><prosody pitch="high">x</prosody></speak>', "only rate is supported"),
    ('<speak><lang xml:lang="tlh">x</lang></speak>', "xml:lang 'tlh'"),
    ("<speak>   </speak>", "nothing to speak"),
])
def test_markup_hearth_cannot_speak_is_refused_with_its_place(document, said):
    with pytest.raises(SsmlError, match=said.replace("(", r"\(").replace("'", ".")):
        parse_ssml(document)
