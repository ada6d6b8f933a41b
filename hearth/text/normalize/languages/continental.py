"""What German, French and Italian share: the comma as decimal mark, day-month-year dates, the
24-hour clock, nouns with a gender that the number "one" agrees with ("ein Grad" / "eine Tonne",
"un degré" / "une tonne", "un grado" / "una tonnellata"), dates whose article or preposition is
said with them ("am 8.12." -> "am achten Dezember", "le 08/12" -> "le huit décembre", "dell'8/12"
-> "dell'otto dicembre"), and addresses with their country domain spelled (".de" -> "D E").

A language here gives its tables (units and currencies as `Noun`s, month names, the words before
a date) and its grammar (`counted`: a number with its noun; `dated`: a date after what precedes
it); this module turns them into the methods the shared rules call, `continental_rules` into the
rules the three languages share."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import ClassVar

from num2words import num2words

from hearth.text.normalize.language import Language, Noun, Num

__all__ = ["AFTER", "BEFORE", "DAY", "DIGIT", "Continental", "below_hundred", "full_year", "keeps_stop", "month_table",
           "roman", "valid_day", "words_before"]

BEFORE = r"(?<![\w.,/:@])"  # a number not inside a word, a number, a path or an address
# The first digit of such a number. A pattern that starts with it is searched much faster than one
# that starts with BEFORE (the regex engine skips to the digits instead of trying every position).
DIGIT = r"\d(?<![\w.,/:@]\d)"
DAY = rf"{DIGIT}\d?"  # a day or an hour: one or two digits
AFTER = r"(?![\w]|[.,]\d)"
_DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


@functools.cache
def below_hundred(code: str) -> tuple[str, ...]:
    """num2words' 0 to 99 in the language `code`, asked once (some 5 to 7 ms): German and French
    compose the rest from them as num2words composes it (their tests hold the two equal), without
    its 50 to 300 µs a number."""
    return tuple(num2words(n, lang=code) for n in range(100))


_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}


def roman(text: str) -> int | None:
    """The value of a Roman numeral in its usual form ("XIV", "XXIe"'s "XXI"), or None ("IIII",
    "VX", or a word that merely looks like one)."""
    value = 0
    for i, c in enumerate(text):
        v = _ROMAN[c]
        value += -v if i + 1 < len(text) and _ROMAN[text[i + 1]] > v else v
    if not 0 < value < 400:
        return None
    hundreds, rest = divmod(value, 100)
    tens, ones = divmod(rest, 10)
    canonical = ("C" * hundreds + ["", "X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"][tens]
                 + ["", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"][ones])
    return value if canonical == text else None


def words_before(text: str, at: int, count: int) -> list[str]:
    """The last `count` words before `at`, in lower case, the nearest last ("dell'" for "dell'8"),
    or none if the text at `at` follows a word without a space or an apostrophe between them.
    (Looking back at words is some ten times faster than a regex over the text before `at`.)"""
    tail = text[max(0, at - 12 * count):at]
    if not tail or not (tail[-1].isspace() or tail[-1] in "'’"):
        return []
    return [w.strip("([{\"«»„“").replace("’", "'").lower() for w in tail.split()[-count:]]


def keeps_stop(m: re.Match[str], starters: frozenset[str]) -> bool:
    """Whether the full stop that ends match `m` ("am 3.", "usw.") also ends the sentence: nothing
    follows but space, a new line follows, or the next word is one that starts sentences
    ("Dann", "Le", "Il")."""
    rest = m.string[m.end():]
    if not rest.strip() or rest.lstrip(" \t").startswith("\n"):
        return True
    word = re.match(r"\s+([^\W\d_]+)", rest)
    return word is not None and word.group(1) in starters


def month_table(table: str) -> tuple[tuple[str, ...], dict[str, int]]:
    """The months' names, January first, and their short forms by month, from a table of each
    month's name with its short forms ("Januar Jan; ...; März Mär Mrz; ...")."""
    months = [entry.split() for entry in table.split(";")]
    return tuple(m[0] for m in months), {short: i for i, (_, *shorts) in enumerate(months, 1) for short in shorts}


def valid_day(day: int, month: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= _DAYS[month]


def full_year(written: str) -> int:
    """A year as written: "26" is 2026, "85" 1985 (as the shared numeric dates read them)."""
    year = int(written)
    if len(written) == 2:
        year += 2000 if year < 70 else 1900
    return year


class Continental(Language):
    decimal_mark = ","
    group_marks = "."
    date_order = "DMY"
    hour_12 = False
    months: ClassVar[tuple[str, ...]] = ()  # their names, January first (`month_table`)
    month_abbreviations: ClassVar[dict[str, int]] = {}  # written without their full stop: "Dez" -> 12
    day_before_month: ClassVar[str] = rf"(?P<d>{DAY})\s+"  # how a day is written before a month's name
    # the words before a date that the date is said with ("am", "le", "dell'"), in lower case
    date_determiners: ClassVar[frozenset[str]] = frozenset()
    percent_noun: ClassVar[Noun] = ("", "", "m")
    degree: ClassVar[Noun] = ("", "", "m")  # "25°" without C or F
    scales: ClassVar[dict[int, Noun]] = {}  # 3, 6, 9 (and 12) -> thousand, million, billion as nouns
    sentence_starters: ClassVar[frozenset[str]] = frozenset()
    # whether a ruler's number is written with a full stop ("Ludwig XIV."), which then tells it from a
    # Roman numeral after a noun, said as a cardinal ("Teil II": "Teil zwei")
    regnal_stop: ClassVar[bool] = False

    # A date, said after the article or preposition written before it (None: none written), which
    # stays as it is written.
    def dated(self, det: str | None, year: int | None, month: int, day: int | None, named: bool) -> str:
        raise NotImplementedError

    def date(self, year: int | None, month: int | None, day: int | None) -> str:
        return self.dated(None, year, month or 1, day, named=False)

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        """A time, one of the 12-hour clock ("7:30 pm") said on the 24-hour clock (`clock`)."""
        return self.clock(hour % 12 + (12 if period == "pm" else 0) if period else hour, minute, second)

    def clock(self, hour: int, minute: int, second: int | None) -> str:
        raise NotImplementedError

    def and_seconds(self, second: int | None) -> list[str]:
        """How a time with seconds ends: "und zwölf Sekunden", "et une seconde" (none without)."""
        return [self.words["and"], self.measure(Num(False, str(second)), "s")] if second else []

    def natural(self, n: int) -> str:
        """The millions and larger `scales` that `n` holds ("zwei Millionen", "un milliard"), then
        the rest (`below_million`)."""
        if n < 10**6:
            return self.below_million(n)
        words = []
        for size, one, several in self._large_scales:
            count, n = divmod(n, size)
            if count:
                words.append(one if count == 1 else self.join([self.count_of_scale(count), several]))
        return " ".join([*words, self.below_million(n)] if n else words)

    @functools.cached_property
    def _large_scales(self) -> tuple[tuple[int, str, str], ...]:
        """(size, one, several) of the scales from a million up, the largest first: (10**6, "eine
        Million", "Millionen")."""
        large = sorted((e for e in self.scales if e >= 6), reverse=True)
        return tuple((10**e, self.counted(Num(False, "1"), self.scales[e]), self.scales[e][1]) for e in large)

    def below_million(self, n: int) -> str:
        """0 <= `n` < 10**6 in words."""
        raise NotImplementedError

    def count_of_scale(self, count: int) -> str:
        """How many millions or billions there are: the cardinal ("zwei", "vingt et un")."""
        return self.cardinal(count)

    @functools.cached_property
    def _digit_words(self) -> tuple[str, ...]:
        return tuple(self.cardinal(d) for d in range(10))

    def digit_names(self) -> Sequence[str]:
        return self._digit_words

    def percent(self, num: Num) -> str:
        return self.counted(num, self.percent_noun)

    def money_scaled(self, num: Num, exponent: int, code: str) -> str:
        """"$5k", "2,5 Mio. €": a whole amount said as one number ("fünftausend Dollar"), else the
        number with its scale word ("zwei Komma fünf Millionen Euro")."""
        names = self.currencies.get(code)
        if names is None:
            return self.join([self.scaled(num, exponent, None), self.letters(code)])
        return self.scaled(num, exponent, names[0])

    def scaled(self, num: Num, exponent: int, noun: Noun | None) -> str:
        digits = num.whole + (num.fraction or "")
        places = len(num.fraction or "")
        # "$2.5k" is "two thousand five hundred", but "2,5 Mio." "zwei Komma fünf Millionen"
        if places == 0 or (exponent == 3 and places <= exponent):
            whole = Num(num.negative, str(int(digits) * 10 ** (exponent - places)))
            return self.counted(whole, noun) if noun else self.number(whole)
        amount = self.counted(num, self.scales[exponent])
        return self.of(amount, noun) if noun else amount

    def of(self, amount: str, noun: Noun) -> str:
        """A scale word and then what it counts: "Millionen Euro", "millions d'euros"."""
        return self.join([amount, noun[1]])

    def phone(self, groups: Sequence[str], international: bool) -> str:
        """The country code as a number ("plus neunundvierzig", as it is announced), then each group
        as the language reads phone numbers (`phone_group`), the groups apart."""
        said = [self.phone_group(g) for g in groups]
        if international:
            said[0] = self.join([self.words["plus"], self.cardinal(int(groups[0]))])
        return ", ".join(said)

    def phone_group(self, digits: str) -> str:
        return self.digits(digits)

    def spelled_domain(self, text: str) -> int:
        """The host's country domain: ".de" is "Punkt D E", ".com" "Punkt com"."""
        host_end = len(text)
        for mark in "/?#":
            host_end = min(host_end, text.find(mark) if mark in text else host_end)
        country = re.search(r"\.([a-z]{2})$", text[:host_end], re.I)
        return country.start(1) if country else -1

    # What the rules ask.
    def month_of(self, written: str) -> int:
        name = written.rstrip(".").lower()
        for i, month in enumerate(self.months):
            if month.lower() == name:
                return i + 1
        return {k.lower(): v for k, v in self.month_abbreviations.items()}[name]

    def month_pattern(self) -> str:
        """The month's names and abbreviations, as a regex's alternatives (matched without case)."""
        names = [*self.months, *(f"{a}\\." for a in self.month_abbreviations)]
        return "|".join(sorted(names, key=len, reverse=True))

    def determiner(self, m: re.Match[str]) -> str | None:
        """The article or preposition written just before a date (`date_determiners`), or None:
        it stays as written, and the date is said as it asks ("am" -> "achten")."""
        before = words_before(m.string, m.start(), 1)
        return before[0] if before and before[0] in self.date_determiners else None

    def regnal(self, value: int, name: str) -> str:
        """How a ruler's or a pope's number is said after `name` ("quatorze", "quattordicesimo")."""
        return self.cardinal(value)

    def times(self, n: int) -> str:
        """"3x": how many times ("dreimal", "trois fois", "tre volte")."""
        raise NotImplementedError

    def per(self, noun: str) -> str:
        """"€/Monat": "pro Monat", "par mois", "al mese"."""
        return self.join([self.words["per"], noun])
