"""What a language supplies to the normalizer: how it writes numbers (its decimal mark, its
thousands separators, its order of day, month and year) and how it says each kind of thing the
rules find (cardinals, ordinals, decimals, fractions, percentages, money, measures, dates, times,
years, ranges, digits, letters, symbols, abbreviations).

A language is a subclass of `Language` in `hearth/text/normalize/languages/` whose methods return
the words; the base class holds what is the same in most of them. The rules that find the things
to say are in `rules.py`; a language adds its own with `extra_rules` (Chinese dates, French
"19h30", German ordinals "3.").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

__all__ = ["CURRENCIES", "LANGUAGES", "UNITS", "Language", "Num", "Rule"]

# The languages, by the prompt's name: their module and class in hearth/text/normalize/languages/.
LANGUAGES = {
    "english": ("en", "English"), "chinese": ("zh", "Chinese"), "japanese": ("ja", "Japanese"),
    "korean": ("ko", "Korean"), "german": ("de", "German"), "french": ("fr", "French"),
    "russian": ("ru", "Russian"), "portuguese": ("pt", "Portuguese"), "spanish": ("es", "Spanish"),
    "italian": ("it", "Italian"),
}


@dataclass(frozen=True)
class Num:
    """A number as written: its sign, the digits before the decimal mark, the digits after it (None
    without a decimal mark)."""

    negative: bool
    whole: str
    fraction: str | None = None

    @property
    def is_integer(self) -> bool:
        return self.fraction is None

    @property
    def value(self) -> float:
        v = float(f"{self.whole}.{self.fraction}" if self.fraction else self.whole)
        return -v if self.negative else v

    @property
    def is_one(self) -> bool:
        """Exactly 1 (for the singular of a unit or currency: "1 kg", not "1.0 kg")."""
        return not self.negative and int(self.whole) == 1 and self.fraction is None


@dataclass(frozen=True)
class Rule:
    """A thing to say: where the pattern matches, `say(match)` gives the words (None: not this
    rule after all, the text stays as it is). `kind` names it in the span map; among matches
    starting at the same place the longest wins, then the lower `rank`."""

    kind: str
    pattern: re.Pattern[str]
    say: Callable[[re.Match[str]], str | None]
    rank: int = 50


# Currencies by ISO code: the symbols written before or after amounts. Each language names them.
CURRENCIES: dict[str, tuple[str, ...]] = {
    "USD": ("$", "US$"), "EUR": ("€",), "GBP": ("£",), "JPY": ("¥", "円"), "CNY": ("¥", "元", "CN¥", "RMB"),
    "KRW": ("₩", "원"), "RUB": ("₽", "руб.", "руб"), "BRL": ("R$",), "CHF": ("CHF", "Fr."), "INR": ("₹",),
    "CAD": ("C$", "CA$"), "AUD": ("A$", "AU$"), "MXN": ("MX$",), "SEK": ("kr",), "PLN": ("zł",),
}

# Units by their written symbol; each language says them (`Language.unit_words`).
UNITS: tuple[str, ...] = (
    "°C", "°F", "K", "km/h", "mph", "m/s", "kWh", "MWh", "Wh", "kW", "MW", "W", "V", "mA", "A", "Hz", "kHz",
    "MHz", "GHz", "km", "cm", "mm", "m", "mi", "ft", "in", "kg", "mg", "g", "t", "lb", "oz", "l", "ml", "L", "mL",
    "hPa", "mbar", "bar", "Pa", "dB", "lx", "ppm", "µg/m³", "m²", "m³", "km²", "KB", "MB", "GB", "TB", "kB",
    "ms", "s", "min", "h", "%", "mAh",
)


class Language:
    """The base of every language: locale data as class attributes, the words as methods.

    Subclasses set `code`, the locale data and `words`, and override what their grammar needs."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""  # the prompt's name of the language ("english")
    decimal_mark: ClassVar[str] = "."
    group_marks: ClassVar[str] = ","  # thousands separators the language writes (not the decimal mark)
    date_order: ClassVar[str] = "DMY"  # of numeric dates such as 08/12/2026: DMY, MDY or YMD
    hour_12: ClassVar[bool] = False  # whether its clocks say am / pm
    # Words the shared rules need: "minus", "point" (the decimal mark said), "to" (a range),
    # "percent", "at", "dot", "slash", "colon", "dash", "underscore", "plus", "and".
    words: ClassVar[dict[str, str]] = {}
    symbols: ClassVar[dict[str, str]] = {}  # a symbol on its own: "&" -> "and", "+" -> "plus"
    abbreviations: ClassVar[dict[str, str]] = {}  # as written (case and period included) -> words
    spelled_as_words: ClassVar[frozenset[str]] = frozenset()  # initialisms said as a word (NASA)
    space_between_words: ClassVar[bool] = True  # False for Chinese and Japanese
    year_cues: ClassVar[tuple[str, ...]] = ()  # words after which a four-digit number is a year ("in")
    month_words: ClassVar[tuple[str, ...]] = ()  # month names and their short forms, as written in dates

    # Numbers.
    def cardinal(self, n: int) -> str:
        raise NotImplementedError

    def ordinal(self, n: int) -> str:
        raise NotImplementedError

    def digit_names(self) -> Sequence[str]:
        return [self.cardinal(d) for d in range(10)]

    def digits(self, text: str) -> str:
        """Each digit said by itself (phone numbers, codes, decimals' digits)."""
        names = self.digit_names()
        return self.join([names[int(c)] for c in text if c.isdigit()])

    def number(self, num: Num) -> str:
        """A cardinal or a decimal: the whole part as a number, the digits after the mark one by one."""
        words = self.cardinal(int(num.whole))
        if num.fraction is not None:
            words = self.join([words, self.words["point"], self.digits(num.fraction)])
        return self.join([self.words["minus"], words]) if num.negative else words

    def fraction(self, numerator: int, denominator: int) -> str:
        """3/4: by default "three over four"; languages say their own fractions."""
        return self.join([self.cardinal(numerator), self.words.get("over", "/"), self.cardinal(denominator)])

    def percent(self, num: Num) -> str:
        return self.join([self.number(num), self.words["percent"]])

    def money(self, num: Num, code: str) -> str:
        """An amount of a currency: "five dollars and twenty cents", "two euros"; an amount with
        more than two decimals is said as a decimal number of units."""
        names = self.currency_words(code)
        if names is None:
            return self.join([self.number(num), self.letters(code)])
        unit, units, cent, cents = names
        fraction = num.fraction or ""
        if len(fraction) > 2 or (fraction and not cent):
            said = self.join([self.number(Num(False, num.whole, num.fraction)), units])
        else:
            whole, hundredths = int(num.whole), int(fraction.ljust(2, "0")) if fraction else 0
            parts = [self.cardinal(whole), unit if whole == 1 else units] if whole or not hundredths else []
            if hundredths:
                parts += [self.words["and"]] if parts else []
                parts += [self.cardinal(hundredths), cent if hundredths == 1 else cents]
            said = self.join(parts)
        return self.join([self.words["minus"], said]) if num.negative else said

    def money_scaled(self, num: Num, exponent: int, code: str) -> str:
        """"$5k", "€2.5M": the amount with its scale word, then the currency's plural."""
        names = self.currency_words(code)
        scale = self.words[{3: "thousand", 6: "million", 9: "billion"}[exponent]]
        amount = self.join([self.number(num), scale])
        return self.join([amount, names[1] if names else self.letters(code)])

    def currency_words(self, code: str) -> tuple[str, str, str, str] | None:
        """(one unit, several units, one cent, several cents) for an ISO code, or None."""
        return None

    def measure(self, num: Num, unit: str) -> str:
        said = self.unit_words(unit, num)
        return self.join([self.number(num), said]) if said else self.number(num)

    def unit_words(self, unit: str, num: Num) -> str | None:
        """How `unit` (a symbol of UNITS) is said after `num`; None: not a unit in this language."""
        return None

    def range(self, first: str, second: str) -> str:
        return self.join([first, self.words["to"], second])

    def measure_range(self, first: Num, second: Num, unit: str) -> str | None:
        """"10-20 °C": by default the first number, then the second with its unit ("ten to twenty
        degrees Celsius"); None: `unit` is not a unit in this language."""
        if unit == "%":
            return self.range(self.number(first), self.percent(second))
        if self.unit_words(unit, second) is None:
            return None
        return self.range(self.number(first), self.measure(second, unit))

    # Dates and times.
    def year(self, year: int) -> str:
        return self.cardinal(year)

    def date(self, year: int | None, month: int | None, day: int | None) -> str:
        raise NotImplementedError

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        """A clock time; `period` is "am" or "pm" where the text said so (12-hour clock)."""
        raise NotImplementedError

    def phone(self, groups: Sequence[str], international: bool) -> str:
        """A phone number: "+", then each group of digits said digit by digit, the groups apart."""
        said = ", ".join(self.digits(g) for g in groups)
        return self.join([self.words["plus"], said]) if international else said

    def address(self, text: str) -> str:
        """A web or e-mail address: its words as they are, its digits one by one, its marks named
        ("dot", "at", "slash"); the scheme (https://) and a last slash left out."""
        text = re.sub(r"^https?://", "", text, flags=re.I).rstrip("/")
        marks = {".": "dot", "@": "at", "/": "slash", ":": "colon", "-": "dash", "_": "underscore", "+": "plus",
                 "?": "question", "=": "equals", "&": "and", "#": "hash", "~": "tilde", "%": "percent"}
        out = []
        for piece in re.findall(r"[^\W\d_]+|\d+|\S", text):
            if piece.isdigit():
                out.append(self.digits(piece))
            elif piece.lower() == "www":
                out.append(self.letters("www"))
            elif piece in marks:
                out.append(self.words.get(marks[piece], piece))
            else:
                out.append(piece.lower())
        return self.join(out)

    # Letters and symbols.
    def letters(self, text: str) -> str:
        """Each letter said by itself (initialisms: "USB" -> "U S B")."""
        return " ".join(c.upper() if c.isalpha() else self.digits(c) if c.isdigit() else c for c in text
                        if not c.isspace())

    def join(self, parts: Sequence[str]) -> str:
        sep = " " if self.space_between_words else ""
        return sep.join(p for p in parts if p)

    def lead_ins(self) -> frozenset[str]:
        """Words that a rule may read together with the words after them (a month name before its
        day, the first word of an abbreviation written with a space): text arriving in pieces holds
        such a word until it knows what follows (`LiveNormalizer`)."""
        firsts = {key.split()[0] for key in self.abbreviations if " " in key}
        return frozenset({*self.month_words, *(m.rstrip(".") for m in self.month_words), *firsts})

    def extra_rules(self) -> list[Rule]:
        """Rules of this language alone, tried beside the shared ones."""
        return []
