"""Rules Spanish and Portuguese share, as both write them: degrees without a unit ("30°", and "21 ºC"
with the ordinal indicator typed for the degree sign), Roman numerals after a name or a century
("Felipe VI", "siglo XXI", "Dom Pedro II", "século XIX": ordinals up to ten, cardinals above, as
both grammars say: "Felipe sexto", "Alfonso trece", "siglo veintiuno"), scores ("3-1", "2:1",
"2x1": "tres a uno"; ranges go up, a score written high to low is not one), sizes ("2x3 m": "dos
por tres metros"), a plus sign before a number ("+5 °C"), "etc." keeping the full stop that ends a
sentence, and amounts written the English way ("$1,234.56", where both marks are written).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from hearth.text.normalize.language import CURRENCIES, UNITS, Language, Num, Rule
from hearth.text.normalize.rules import number_pattern, parse_number

__all__ = ["ROMAN", "Words", "rules"]

ROMAN = r"(?=[IVXLC])C{0,3}(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})"
_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}
_NAME_BEFORE = re.compile(r"(?:^|\s)(?:[A-ZÁÉÍÓÚÑÇ][a-záéíóúñçãõâêôü]+)\s$")
_UNITS = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
# "$1,234.56" as the United States, Mexico and programs write it: a comma between thousands and a
# point before the decimals, both written (so it is no Spanish or Portuguese decimal comma).
_SYMBOLS = {s: code for code, written in reversed(CURRENCIES.items()) for s in written
            if not s.replace(".", "").isalpha()}
_ENGLISH_FORMAT = re.compile(
    rf"(?<![\w.,/:@])(?:(?P<cur>{'|'.join(re.escape(s) for s in sorted(_SYMBOLS, key=len, reverse=True))})\s?)?"
    r"(?P<sign>[-−])?(?P<whole>\d{1,3}(?:,\d{3})+)\.(?P<frac>\d+)(?![\w]|[.,]\d)"
    rf"(?(cur)|(?:\s?(?P<unit>{_UNITS})(?![\w/²³]))?)")  # a unit after a number, not after an amount
# The full stop of "etc.": taken where the sentence goes on, left to end it otherwise.
_DOT = r"(?:\.(?=\s*[,;:)]|\s+[a-záéíóúñçãõâêô\d])|(?=\.))"


@dataclass(frozen=True)
class Words:
    """What a language says for these rules."""

    degrees: Callable[[Num, str | None], str]  # a number of degrees, "C"/"F" or None
    ordinal: Callable[[int], str]
    cardinal: Callable[[int], str]
    plus: str  # "más"
    score: dict[str, str]  # a score's separator said: {"-": "a", ":": "a", "x": "por"}
    etc: str  # "etcétera"
    centuries: tuple[str, ...]  # the words after which a Roman numeral is a century: ("siglo", "siglos")


def rules(lang: Language, words: Words) -> list[Rule]:
    number = number_pattern(lang)
    degrees = re.compile(rf"(?=[-−0-9])(?<![\w.,/:@]){number}\s?(?:°|º(?=\s?[CF]))(?:\s?(?P<cf>[CF]))?(?![\w])")
    roman = re.compile(rf"(?<![\w-])(?P<r>{ROMAN})(?![\w-])")
    score = re.compile(r"(?=\d)(?<![\w.,:/+-])(?P<a>\d{1,2})(?:(?P<sep>[-–x×])(?P<b>\d{1,2})|:(?P<b2>\d))"
                       rf"(?![\w:/-]|[.,]\d|\s?(?:{_UNITS}|[%°º])(?![\w]))")

    def say_degrees(m: re.Match[str]) -> str:
        return words.degrees(parse_number(m), m.group("cf"))

    def say_roman(m: re.Match[str]) -> str | None:
        before = m.string[max(0, m.start() - 24):m.start()]
        century = before.rstrip().rsplit(" ", 1)[-1].lower() in words.centuries
        if not (century or _NAME_BEFORE.search(before)):
            return None  # an initialism ("XL", "CV"), spelled by the shared rule
        n = _roman(m.group("r"))
        return words.ordinal(n) if n <= 10 else words.cardinal(n)

    def say_score(m: re.Match[str]) -> str | None:
        a, b = int(m.group("a")), int(m.group("b") or m.group("b2"))
        sep = m.group("sep") or ":"
        key = "x" if sep in "x×" else ":" if sep == ":" else "-"
        if key == "-" and a < b:
            return None  # "5-9": a range
        return f"{words.cardinal(a)} {words.score[key]} {words.cardinal(b)}"

    def say_area(m: re.Match[str]) -> str | None:
        said = lang.unit_words(m.group("unit"), Num(False, m.group("b")))
        if said is None:
            return None
        return f"{words.cardinal(int(m.group('a')))} por {lang.measure(Num(False, m.group('b')), m.group('unit'))}"

    def say_english_format(m: re.Match[str]) -> str:
        num = Num(bool(m.group("sign")), m.group("whole").replace(",", ""), m.group("frac"))
        if m.group("cur"):
            return lang.money(num, _SYMBOLS[m.group("cur")])
        unit = m.group("unit")
        return lang.measure(num, unit) if unit and lang.unit_words(unit, num) else lang.number(num)

    return [
        Rule("currency", _ENGLISH_FORMAT, say_english_format, 19),
        Rule("measure", degrees, say_degrees, 29),
        Rule("measure", re.compile(rf"(?<![\w.,])(?P<a>\d{{1,4}})\s?[x×]\s?(?P<b>\d{{1,4}})\s?(?P<unit>{_UNITS})"
                                   r"(?![\w/²³])"), say_area, 28),
        Rule("ordinal", roman, say_roman, 24),
        Rule("number", score, say_score, 34),
        Rule("symbol", re.compile(r"(?<![\w+])\+(?=\d)"), lambda m: f"{words.plus} ", 84),
        Rule("abbreviation", re.compile(rf"(?<![\w.])etc{_DOT}(?![\w])"), lambda m: words.etc, 69),
    ]


def _roman(numeral: str) -> int:
    values = [_VALUES[c] for c in numeral]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))
