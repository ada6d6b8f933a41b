"""What a language supplies to the normalizer: how it writes numbers (its decimal mark, its
thousands separators, its order of day, month and year) and how it says each kind of thing the
rules find (cardinals, ordinals, decimals, fractions, percentages, money, measures, dates, times,
years, ranges, digits, letters, symbols, abbreviations).

A language is a subclass of `Language` in `hearth/text/normalize/languages/` whose methods return
the words; the base class holds what is the same in most of them, and reads the language's tables
(its words, units and currencies, written the short way: `word_table`, `nouns`, `currency_nouns`).
The rules that find the things to say are in `rules.py`; a language adds its own with
`extra_rules` (Chinese dates, French "19h30", German ordinals "3.").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

__all__ = ["CURRENCIES", "LANGUAGES", "UNITS", "Language", "Noun", "Num", "Rule", "currency_nouns", "language_name",
           "nouns", "word_set", "word_table"]

# The languages, by the prompt's name: their module and class in hearth/text/normalize/languages/.
LANGUAGES = {
    "english": ("en", "English"), "chinese": ("zh", "Chinese"), "japanese": ("ja", "Japanese"),
    "korean": ("ko", "Korean"), "german": ("de", "German"), "french": ("fr", "French"),
    "russian": ("ru", "Russian"), "portuguese": ("pt", "Portuguese"), "spanish": ("es", "Spanish"),
    "italian": ("it", "Italian"),
}
_BY_CODE = {code: name for name, (code, _) in LANGUAGES.items()}


def language_name(given: str) -> str:
    """A language as the prompt names it ("english"), from that name in any case or from its code
    ("en", "en-US", "pt_BR"); anything else comes back lowercased, for the caller to refuse."""
    key = given.strip().lower()
    return _BY_CODE.get(key.replace("_", "-").split("-", 1)[0], key) if key not in LANGUAGES else key


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

# How a unit, a currency or its hundredth is said after a number: (singular, plural, gender), the
# gender "m", "f" or "n" where a number agrees with its noun ("ein Grad" / "eine Tonne"), else "".
Noun = tuple[str, str, str]
_PLURAL = re.compile(r"\(([^()|]*)(?:\|([^()|]*))?\)")


def _noun(written: str, gender: str) -> Noun:
    words, _, own = written.strip().partition(", ")
    singular = _PLURAL.sub(lambda m: m[1] if m[2] is not None else "", words)
    plural = _PLURAL.sub(lambda m: m[1] if m[2] is None else m[2], words)
    return singular, plural, own or gender


def _entries(table: str, sep: str = " ") -> list[tuple[str, str]]:
    """The (key, what follows it) of each entry of a table "key words; key words; ..."."""
    return [(key, rest) for key, _, rest in (entry.strip().partition(sep) for entry in table.split(";")) if key]


def word_set(text: str) -> frozenset[str]:
    """The words of `text` (a list of words written as one string, for tables of words)."""
    return frozenset(text.split())


def word_table(table: str, sep: str = " ") -> dict[str, str]:
    """What is said for each key of a table written "key words; key words" (". dot; @ at"), the
    key ending at `sep` (": " where keys have spaces: "z. B.: zum Beispiel")."""
    return dict(_entries(table, sep))


def nouns(table: str, gender: str = "") -> dict[str, Noun]:
    """A table of nouns by the symbol written before each ("km/h Kilometer pro Stunde; ..."),
    written once with the plural's part in brackets: "grado(s) Celsius" is "grado Celsius" and
    "grados Celsius", "chilometr(o|i)" "chilometro" and "chilometri", and a noun without brackets
    is its own plural ("Grad"). A gender other than `gender` follows a comma ("tonelada(s), f")."""
    return {key: _noun(written, gender) for key, written in _entries(table)}


def currency_nouns(table: str, gender: str = "") -> dict[str, tuple[Noun, Noun | None]]:
    """Currencies by ISO code, as `nouns` writes them, the hundredth after a slash where there is
    one ("EUR euro(s) / céntimo(s); JPY yen(es)")."""
    out: dict[str, tuple[Noun, Noun | None]] = {}
    for code, written in _entries(table):
        unit, _, cent = written.partition("/")
        out[code] = _noun(unit, gender), _noun(cent, gender) if cent else None
    return out


# An address's signs said as the rules say them elsewhere, where `Language.marks` does not name them.
_SIGNS = {"+": "plus", "&": "and", "%": "percent"}


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
    # "percent", "plus", "and", "over" (a fraction), "thousand", "million", "billion".
    words: ClassVar[dict[str, str]] = {}
    marks: ClassVar[dict[str, str]] = {}  # an address's marks said: "." -> "dot", "@" -> "at", "/" -> "slash"
    symbols: ClassVar[dict[str, str]] = {}  # a symbol on its own: "&" -> "and", "+" -> "plus"
    abbreviations: ClassVar[dict[str, str]] = {}  # as written (case and period included) -> words
    spelled_as_words: ClassVar[frozenset[str]] = frozenset()  # initialisms said as a word (NASA)
    space_between_words: ClassVar[bool] = True  # False for Chinese and Japanese
    year_cues: ClassVar[tuple[str, ...]] = ()  # words after which a four-digit number is a year ("in")
    month_words: ClassVar[tuple[str, ...]] = ()  # month names and their short forms, as written in dates
    units: ClassVar[dict[str, Noun]] = {}  # what it says after a number for a symbol of UNITS (and its own)
    currencies: ClassVar[dict[str, tuple[Noun, Noun | None]]] = {}  # by ISO code: the unit and its hundredth
    largest: ClassVar[int] = 10**15  # from here on a number is said digit by digit
    decimals_as_number: ClassVar[bool] = False  # "3,14": "quatorze" (True) or "one four" (False)

    # Numbers.
    def cardinal(self, n: int) -> str:
        """`n` in words: a negative number after the word for minus, from `largest` on its digits."""
        if n < 0:
            return self.join([self.words["minus"], self.cardinal(-n)])
        return self.digits(str(n)) if n >= self.largest else self.natural(n)

    def natural(self, n: int) -> str:
        """0 <= `n` < `largest` in words."""
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
        """A cardinal or a decimal: the whole part as a number, then the decimals (`decimals`)."""
        words = self.cardinal(int(num.whole))
        if num.fraction is not None:
            words = self.join([words, self.words["point"], self.decimals(num.fraction)])
        return self.join([self.words["minus"], words]) if num.negative else words

    def decimals(self, digits: str) -> str:
        """The digits after the decimal mark: one by one, or (`decimals_as_number`) up to three of
        them as a number, its leading zeros said ("0,05": "zéro virgule zéro cinq")."""
        if not self.decimals_as_number or len(digits) > 3:
            return self.digits(digits)
        rest = digits.lstrip("0")
        return self.join([self.digits(digits[:len(digits) - len(rest)]), self.cardinal(int(rest)) if rest else ""])

    def fraction(self, numerator: int, denominator: int) -> str:
        """3/4: by default "three over four"; languages say their own fractions."""
        return self.join([self.cardinal(numerator), self.words.get("over", "/"), self.cardinal(denominator)])

    def percent(self, num: Num) -> str:
        return self.join([self.number(num), self.words["percent"]])

    def counted(self, num: Num, noun: Noun) -> str:
        """A number and the noun it counts ("one dollar", "1.5 meters"); languages make the two agree."""
        return self.join([self.number(num), noun[0] if num.is_one else noun[1]])

    def money(self, num: Num, code: str) -> str:
        """An amount of a currency: "five dollars and twenty cents", "two euros"; an amount with
        more than two decimals (or of a currency without hundredths) is said as a decimal number of
        units."""
        names = self.currencies.get(code)
        if names is None:
            return self.join([self.number(num), self.letters(code)])
        unit, cent = names
        fraction = num.fraction or ""
        if len(fraction) > 2 or (fraction and cent is None):
            said = self.counted(Num(False, num.whole, num.fraction), unit)
        else:
            whole, hundredths = int(num.whole), int(fraction.ljust(2, "0")) if fraction else 0
            parts = [self.counted(Num(False, num.whole), unit)] if whole or not hundredths else []
            if hundredths and cent is not None:
                parts += [self.words["and"]] if parts else []
                parts.append(self.counted(Num(False, str(hundredths)), cent))
            said = self.join(parts)
        return self.join([self.words["minus"], said]) if num.negative else said

    def money_scaled(self, num: Num, exponent: int, code: str) -> str:
        """"$5k", "€2.5M": the amount with its scale word, then the currency's plural."""
        names = self.currencies.get(code)
        scale = self.words[{3: "thousand", 6: "million", 9: "billion"}[exponent]]
        amount = self.join([self.number(num), scale])
        return self.join([amount, names[0][1] if names else self.letters(code)])

    def measure(self, num: Num, unit: str) -> str:
        return self.counted(num, self.units[unit])

    def unit_words(self, unit: str, num: Num) -> str | None:
        """How `unit` (a symbol of UNITS) is said after `num`; None: not a unit in this language."""
        noun = self.units.get(unit)
        return None if noun is None else noun[0] if num.is_one else noun[1]

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
        return self.join(self.address_words(text))

    def address_words(self, text: str) -> list[str]:
        text = re.sub(r"^https?://", "", text, flags=re.I).rstrip("/")
        spelled = self.spelled_domain(text)
        out = []
        for m in re.finditer(r"[^\W\d_]+|\d+|\S", text):
            piece = m.group()
            if piece.isdigit():
                out.append(self.digits(piece))
            elif piece.lower() == "www" or m.start() == spelled:
                out.append(self.letters(piece))
            elif piece in self.marks:
                out.append(self.marks[piece])
            else:
                out.append(self.words.get(_SIGNS[piece], piece) if piece in _SIGNS else piece.lower())
        return out

    def spelled_domain(self, text: str) -> int:
        """Where the part of an address that is spelled starts (German, French and Italian spell
        the host's country domain: ".de" is "Punkt D E"), or -1: none is."""
        return -1

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
