"""What Spanish and Portuguese share: the decimal comma and the day before the month; numbers that
agree with the noun they count ("un grado", "una tonelada"; "um grau", "uma tonelada"; the noun's
gender guessed where no table gives it) and take "de" after round millions ("un millón de euros",
"um milhão de reais"); up to three decimals read as a number; dates "ocho de diciembre de ...",
ranges "de diez a veinte", fractions by their ordinals ("tres cuartos"), letters by their names.
`Iberian` turns each language's tables and words into the methods the shared rules call.

The rules they share, as both write them: a number before the noun it counts ("veintiuna
personas", "duas horas"), degrees without a unit ("30°", and "21 ºC" with the ordinal indicator
typed for the degree sign), Roman numerals after a name or a century ("Felipe VI", "siglo XXI",
"Dom Pedro II", "século XIX": ordinals up to ten, cardinals above, as both grammars say: "Felipe
sexto", "Alfonso trece", "siglo veintiuno"), scores ("3-1", "2:1", "2x1": "tres a uno"; ranges go
up, a score written high to low is not one), sizes ("2x3 m": "dos por tres metros"), a plus sign
before a number ("+5 °C"), "etc." keeping the full stop that ends a sentence, and amounts written
the English way ("$1,234.56", where both marks are written).
"""

from __future__ import annotations

import re
from typing import ClassVar

from hearth.text.normalize.language import CURRENCIES, UNITS, Language, Noun, Num, Rule
from hearth.text.normalize.rules import number_pattern, parse_number

__all__ = ["ROMAN", "Iberian"]

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


class Iberian(Language):
    """The base of Spanish and Portuguese: subclasses give their tables and words and say numbers
    (`counting`), their ordinals, times and phone numbers. Beside the shared ones, `words` gives
    "versus" and "by" (a score's "3-1" and "2x1"), "etc", "half", "halves", "third", "thirds";
    `units` the degree ("°") said without a scale."""

    decimal_mark = ","
    group_marks = ". "
    date_order = "DMY"
    decimals_as_number = True
    largest = 10**18  # num2words says numbers up to here
    months: ClassVar[tuple[str, ...]] = ()
    first_day: ClassVar[str] = ""  # the first day of a month, where it is not the cardinal ("primeiro")
    scale_nouns: ClassVar[tuple[str, ...]] = ()  # after which a noun takes "de": "millón", "milhões"
    letter_names: ClassVar[dict[str, str]] = {}
    not_nouns: ClassVar[frozenset[str]] = frozenset()  # words after a number that are not what it counts
    noun_letters: ClassVar[str] = "a-z"  # what a noun after a number is written with, as a regex's class
    centuries: ClassVar[frozenset[str]] = frozenset()  # the words after which a Roman numeral is a century

    def counting(self, n: int, gender: str) -> str:
        """`n` alone (`gender` ""), or before a masculine ("m") or feminine ("f") noun."""
        raise NotImplementedError

    def is_feminine(self, noun: str) -> bool:
        """Whether a noun that no table gives is feminine, as guessed."""
        raise NotImplementedError

    def parts(self, denominator: int, one: bool) -> str:
        """The name of one part (or several) of `denominator` above ten: "onceavo", "onze avos"."""
        raise NotImplementedError

    def natural(self, n: int) -> str:
        return self.counting(n, "")

    def number(self, num: Num, gender: str = "") -> str:
        """A number alone (`gender` ""), or before a masculine ("m") or feminine ("f") noun."""
        if num.fraction is not None:
            return super().number(num)
        words = self.counting(int(num.whole), gender)
        return self.join([self.words["minus"], words]) if num.negative else words

    def counted(self, num: Num, noun: Noun) -> str:
        """`num` of a thing: "un grado", "veintiuna toneladas", "un millón de euros"; with decimals
        the plural ("dos coma cinco grados")."""
        one, several, gender = noun
        amount = Num(False, num.whole, num.fraction)
        if num.fraction is None:
            said = self.of(self.number(amount, gender), one if int(num.whole) == 1 else several)
        else:
            said = self.join([self.number(amount), several])
        return self.join([self.words["minus"], said]) if num.negative else said

    def of(self, words: str, noun: str) -> str:
        """A number before its noun: "dos euros", "un millón de euros"."""
        return f"{words} de {noun}" if words.rsplit(" ", 1)[-1] in self.scale_nouns else f"{words} {noun}"

    def fraction(self, numerator: int, denominator: int) -> str:
        one = numerator == 1
        if denominator in (2, 3):  # a half, a third
            name = self.words[{2: ("half", "halves"), 3: ("third", "thirds")}[denominator][0 if one else 1]]
        elif denominator <= 10 or denominator in (100, 1000):
            name = self.ordinal(denominator) + ("" if one else "s")
        else:
            name = self.parts(denominator, one)
        return f"{self.counting(numerator, 'm')} {name}"

    def degrees(self, num: Num, scale: str | None) -> str:
        """"30°", "30 °C": degrees, Celsius or Fahrenheit where the scale is written."""
        unit = {"C": "°C", "F": "°F"}.get(scale or "")
        return self.measure(num, unit or "°")

    def range(self, first: str, second: str) -> str:
        return f"de {first} a {second}"

    def date(self, year: int | None, month: int | None, day: int | None) -> str:
        parts = [f"{self.first_day if day == 1 and self.first_day else self.cardinal(day)} de"] if day else []
        parts.append(self.months[(month or 1) - 1])
        if year is not None:
            parts.append(f"de {self.year(year)}")
        return " ".join(parts)

    def letters(self, text: str) -> str:
        return " ".join(self.letter_names.get(c.lower(), c) if c.isalpha() else self.digits(c) if c.isdigit() else c
                        for c in text if not c.isspace())

    def say_counted(self, m: re.Match[str]) -> str | None:
        """A number that agrees with the noun after it (or after "mil": "doscientas mil personas"),
        with "de" after round millions ("un millón de")."""
        num, noun = parse_number(m), m.group("noun")
        if num.fraction is not None or noun in self.not_nouns:
            return None
        said = self.number(num, "f" if self.is_feminine(noun) else "m")
        return said + (" de" if said.rsplit(" ", 1)[-1] in self.scale_nouns else "")

    def extra_rules(self) -> list[Rule]:
        number = number_pattern(self)
        noun = rf"(?=\s(?:mil\s)?(?P<noun>[{self.noun_letters}]+)\b)"
        counted = re.compile(rf"(?<![\w.,/:@]){number}(?![\w]|[.,]\d){noun}")
        return [Rule("number", counted, self.say_counted, 89), *rules(self)]


def rules(lang: Iberian) -> list[Rule]:
    number = number_pattern(lang)
    degrees = re.compile(rf"(?=[-−0-9])(?<![\w.,/:@]){number}\s?(?:°|º(?=\s?[CF]))(?:\s?(?P<cf>[CF]))?(?![\w])")
    roman = re.compile(rf"(?<![\w-])(?P<r>{ROMAN})(?![\w-])")
    score = re.compile(r"(?=\d)(?<![\w.,:/+-])(?P<a>\d{1,2})(?:(?P<sep>[-–x×])(?P<b>\d{1,2})|:(?P<b2>\d))"
                       rf"(?![\w:/-]|[.,]\d|\s?(?:{_UNITS}|[%°º])(?![\w]))")

    def say_roman(m: re.Match[str]) -> str | None:
        before = m.string[max(0, m.start() - 24):m.start()]
        century = before.rstrip().rsplit(" ", 1)[-1].lower() in lang.centuries
        if not (century or _NAME_BEFORE.search(before)):
            return None  # an initialism ("XL", "CV"), spelled by the shared rule
        n = _roman(m.group("r"))
        return lang.ordinal(n) if n <= 10 else lang.cardinal(n)

    def say_score(m: re.Match[str]) -> str | None:
        a, b = int(m.group("a")), int(m.group("b") or m.group("b2"))
        sep = m.group("sep") or ":"
        key = "x" if sep in "x×" else ":" if sep == ":" else "-"
        if key == "-" and a < b:
            return None  # "5-9": a range
        return f"{lang.cardinal(a)} {lang.words['by' if key == 'x' else 'versus']} {lang.cardinal(b)}"

    def say_area(m: re.Match[str]) -> str | None:
        said = lang.unit_words(m.group("unit"), Num(False, m.group("b")))
        if said is None:
            return None
        return f"{lang.cardinal(int(m.group('a')))} por {lang.measure(Num(False, m.group('b')), m.group('unit'))}"

    def say_english_format(m: re.Match[str]) -> str:
        num = Num(bool(m.group("sign")), m.group("whole").replace(",", ""), m.group("frac"))
        if m.group("cur"):
            return lang.money(num, _SYMBOLS[m.group("cur")])
        unit = m.group("unit")
        return lang.measure(num, unit) if unit and lang.unit_words(unit, num) else lang.number(num)

    return [
        Rule("currency", _ENGLISH_FORMAT, say_english_format, 19),
        Rule("measure", degrees, lambda m: lang.degrees(parse_number(m), m.group("cf")), 29),
        Rule("measure", re.compile(rf"(?<![\w.,])(?P<a>\d{{1,4}})\s?[x×]\s?(?P<b>\d{{1,4}})\s?(?P<unit>{_UNITS})"
                                   r"(?![\w/²³])"), say_area, 28),
        Rule("ordinal", roman, say_roman, 24),
        Rule("number", score, say_score, 34),
        Rule("symbol", re.compile(r"(?<![\w+])\+(?=\d)"), lambda m: f"{lang.words['plus']} ", 84),
        Rule("abbreviation", re.compile(rf"(?<![\w.])etc{_DOT}(?![\w])"), lambda m: lang.words["etc"], 69),
    ]


def _roman(numeral: str) -> int:
    values = [_VALUES[c] for c in numeral]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))
