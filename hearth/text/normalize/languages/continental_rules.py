"""The rules German, French and Italian share beside the shared ones of `rules.py`: dates said with
the word before them ("am 8.12.", "le 08/12", "dell'8/12") and with the month's name, "25°",
rulers' numbers ("Louis XIV"), scores ("2:1"), "3x", "24/7", "€/Monat", clock ranges ("14:00 -
16:00"), numbers with leading zeros ("00184", said digit by digit) and letters with digits ("A4",
"CO2"), and an abbreviation's full stop kept where it ended the text."""

from __future__ import annotations

import re

from hearth.text.normalize.language import CURRENCIES, UNITS, Rule
from hearth.text.normalize.languages.continental import (
    AFTER,
    BEFORE,
    DAY,
    DIGIT,
    Continental,
    full_year,
    keeps_stop,
    roman,
    valid_day,
)
from hearth.text.normalize.rules import number_pattern, parse_number

__all__ = ["continental_rules", "numbered_rule"]

_NAME = re.compile(r"\b([A-ZÀ-Ý][a-zß-ÿ]+) \Z")  # a name before a ruler's number ("Louis XIV")
# A number after "Nr.", "S.", "pag." ..., or a range of them ("S. 5–9").
_NUMBERS = r"(?P<n>\d+)(?:\s?[-–]\s?(?P<n2>\d+))?(?![\w]|[.,]\d)"
_CURRENCY = "|".join(re.escape(s) for s in sorted({*CURRENCIES, *(s for w in CURRENCIES.values() for s in w
                                                                   if not s[0].isalpha())}, key=len, reverse=True))
_CURRENCY_BEFORE = re.compile(rf"(?:{_CURRENCY})\Z")  # searched up to where a match starts


def continental_rules(lang: Continental) -> list[Rule]:
    return [*_date_rules(lang), *_number_rules(lang), *_final_abbreviations(lang)]


def _date_rules(lang: Continental) -> list[Rule]:
    iso = re.compile(rf"(?P<y>{DIGIT}\d{{3}})-(?P<m>\d{{1,2}})-(?P<d>\d{{1,2}}){AFTER}")
    dmy = re.compile(rf"(?P<d>{DAY})(?P<sep>[./-])(?P<m>\d{{1,2}})(?P=sep)(?P<y>\d{{4}}|\d{{2}}){AFTER}")
    named = re.compile(rf"{lang.day_before_month}(?P<mon>(?i:{lang.month_pattern()}))(?:\s+(?P<y>\d{{4}}))?(?![\w])")
    # "du 08/12 au 10/12": the shared rule reads a short date, but not the word before it
    short = re.compile(rf"(?P<d>{DAY})/(?P<m>\d{{1,2}}){AFTER}")
    clocks = re.compile(rf"(?P<h1>{DAY}):(?P<m1>[0-5]\d)\s?[-–]\s?(?P<h>{DAY}):(?P<min>[0-5]\d)(?![\w:]|[.,]\d)")

    def numeric(m: re.Match[str]) -> str | None:
        day, month = int(m.group("d")), int(m.group("m"))
        if not valid_day(day, month):
            return None
        return lang.dated(lang.determiner(m), full_year(m.group("y")), month, day, named=False)

    def with_name(m: re.Match[str]) -> str | None:
        day, month = int(m.group("d")), lang.month_of(m.group("mon"))
        if not valid_day(day, month):
            return None
        return lang.dated(lang.determiner(m), int(m.group("y")) if m.group("y") else None, month, day, named=True)

    def short_date(m: re.Match[str]) -> str | None:
        day, month, det = int(m.group("d")), int(m.group("m")), lang.determiner(m)
        return lang.dated(det, None, month, day, named=False) if det and valid_day(day, month) else None

    def clock_range(m: re.Match[str]) -> str | None:
        if int(m.group("h1")) > 24 or int(m.group("h")) > 24:
            return None
        return lang.range(lang.time(int(m.group("h1")), int(m.group("m1")), None, None),
                          lang.time(int(m.group("h")), int(m.group("min")), None, None))

    return [Rule("date", iso, numeric, 9), Rule("date", dmy, numeric, 9), Rule("date", named, with_name, 9),
            Rule("date", short, short_date, 39), Rule("time", clocks, clock_range, 14)]


def _number_rules(lang: Continental) -> list[Rule]:
    number = number_pattern(lang)
    stop = r"(?P<stop>\.)?" if lang.regnal_stop else ""
    regnal = re.compile(rf"(?P<r>[IVXLC](?<=[^\W\d_] [IVXLC])[IVXLC]{{0,6}}){stop}(?![\w])")
    # a score ("2:1", "2-1"): a colon before one digit, or a dash before a smaller number (a range
    # goes up)
    score = re.compile(rf"(?P<a>{DAY})\s?(?P<sep>[:\-–])\s?(?P<b>\d{{1,2}})(?![\w:]|[.,]\d)")
    degrees = re.compile(rf"(?=[-−\d]){BEFORE}{number}\s?°(?!\s?[CFK]\b|\w)")
    own = "|".join(re.escape(u) for u in sorted(set(lang.units) - set(UNITS), key=len, reverse=True)) or "(?!)"
    own_units = re.compile(rf"(?=[-−\d]){BEFORE}{number}\s?(?P<unit>{own})(?![\w/²³'’])")  # "25 cl", "64 Go"
    plus = re.compile(r"\+(?<![\w+]\+)(?=\d)")  # "+0,8 %": a sign (a phone number's "+" is the longer find)
    times = re.compile(rf"(?P<n>{DIGIT}\d{{0,2}})\s?[x×](?=\s)")
    around = re.compile(r"24(?<![\w.,/:@]24)/7(?![\w/]|[.,]\d)")
    per = re.compile(r"(?<=[^\W\d_]|[€$£¥])\s?/\s?(?P<w>[^\W\d_]{1,12})(?![\w/])")
    zeros = re.compile(r"0(?<![\w.,/:@+]0)\d+(?![\w]|[.,:/]\d)")
    mixed = re.compile(r"\b(?P<a>[A-Z]{1,3})(?P<n>\d{1,3})(?P<b>[A-Z]{0,2})(?![\w]|[.,]\d)"
                       r"|(?<![\w.,/:@])(?P<n2>\d{1,2})(?P<a2>[A-Z]{1,2})\b")

    def say_per(m: re.Match[str]) -> str | None:
        if not _CURRENCY_BEFORE.search(m.string, max(0, m.start() - 4), m.start()):  # "€/Monat", not "und/oder"
            return None
        word = m.group("w")
        unit = lang.units.get(word)
        return " " + lang.per(unit[0] if unit else word)  # the slash stood between two words

    def say_mixed(m: re.Match[str]) -> str | None:
        if m.group("n2"):  # "5G", "4K"; "230V" is a measure ("4K" a resolution far more often than kelvins)
            if m.group("a2") in lang.units and m.group("a2") != "K":
                return None
            return lang.join([lang.cardinal(int(m.group("n2"))), lang.letters(m.group("a2"))])
        return lang.join([lang.letters(m.group("a")), lang.cardinal(int(m.group("n"))), lang.letters(m.group("b"))])

    return [Rule("measure", degrees, lambda m: lang.counted(parse_number(m), lang.degree), 31),
            Rule("number", regnal, lambda m: _regnal(lang, m), 45), Rule("range", score, lambda m: _score(lang, m), 34),
            Rule("number", times, lambda m: lang.times(int(m.group("n"))), 40),
            Rule("number", around, lambda m: lang.words["24/7"], 8), Rule("measure", per, say_per, 30),
            Rule("number", zeros, lambda m: lang.digits(m.group()), 88), Rule("initialism", mixed, say_mixed, 29),
            Rule("measure", own_units, lambda m: lang.measure(parse_number(m), m.group("unit")), 30),
            Rule("number", plus, lambda m: lang.words["plus"] + " ", 50)]


def numbered_rule(lang: Continental, names: dict[str, str], before: str, after: str) -> Rule:
    """"Nr. 5", "pag. 3-5": an abbreviation of `names` said in full, then the number or the range
    after it; `before` and `after` the abbreviation are how the language writes it."""

    def say(m: re.Match[str]) -> str:
        said = lang.cardinal(int(m.group("n")))
        said = lang.range(said, lang.cardinal(int(m.group("n2")))) if m.group("n2") else said
        return lang.join([names[m.group("abbr")], said])

    return Rule("abbreviation", re.compile(rf"{before}(?P<abbr>{'|'.join(names)}){after}{_NUMBERS}"), say, 65)


def _regnal(lang: Continental, m: re.Match[str]) -> str | None:
    """"Louis XIV", "Giovanni XXIII", "Ludwig XIV.": a name and a Roman numeral."""
    name = _NAME.search(m.string, max(0, m.start() - 30), m.start())
    value = roman(m.group("r"))
    written = m.group("r")
    # a letter alone is more often a letter ("Vitamina C", "Taglia L") than a number, but for "Carlo V"
    if value is None or value > 40 or written in ("I", "L", "C") or name is None \
            or name.group(1) in lang.sentence_starters:
        return None
    if lang.regnal_stop and not m.group("stop"):  # "Teil II": "Teil zwei" (but "Punkt X", a noun and a letter)
        return lang.cardinal(value) if len(written) > 1 else None
    stop = "." if m.groupdict().get("stop") and keeps_stop(m, lang.sentence_starters) else ""
    return lang.regnal(value, name.group(1)) + stop


def _score(lang: Continental, m: re.Match[str]) -> str | None:
    a, b = int(m.group("a")), int(m.group("b"))
    if (m.group("sep") == ":" and len(m.group("b")) > 1) or (m.group("sep") != ":" and b > a):
        return None
    return lang.join([lang.cardinal(a), lang.words["versus"], lang.cardinal(b)])


def _final_abbreviations(lang: Continental) -> list[Rule]:
    """An abbreviation that ends the text or its line keeps its full stop, which ended the
    sentence too ("..., usw." -> "..., und so weiter.")."""
    keys = [k for k in lang.abbreviations if k.endswith(".")]
    if not keys:
        return []
    alternatives = "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w.])(?:{alternatives})(?=[ \t]*(?:\n|$))")
    return [Rule("abbreviation", pattern, lambda m: lang.abbreviations[m.group()] + ".", 69)]

