"""What only German writes: the ordinal "3." ("im 3. Stock", "der 2. Weltkrieg"; a sentence's
last number before its full stop is no ordinal: "Es sind 42. Dann ..."), "1" before a noun ("eine
Stunde"), clock times with "Uhr" ("19:30 Uhr", "19.30 Uhr", "1 Uhr"), day and month without the
year ("am 8.12."), years after the words that announce them ("seit 1999", "im Jahr 1999"), "Mio."
and "Mrd." after amounts, national phone numbers ("030 1234567") and "Nr. 5"."""

from __future__ import annotations

import re

from hearth.text.normalize.language import CURRENCIES, UNITS, Num, Rule, word_set
from hearth.text.normalize.languages.continental import (
    BEFORE,
    DAY,
    DIGIT,
    Continental,
    keeps_stop,
    valid_day,
    words_before,
)
from hearth.text.normalize.languages.continental_rules import numbered_rule
from hearth.text.normalize.languages.de_grammar import DETERMINERS, STARTERS, determiner_ending, gender, inflect
from hearth.text.normalize.rules import number_pattern, parse_number

__all__ = ["german_rules"]

_NEXT_WORD = re.compile(r"[ \t\u00a0]+([^\W\d_][\w-]*)")
_PREPOSITIONS = word_set("in an auf aus bei mit nach seit von zu vor hinter über unter neben zwischen für durch "
                         "gegen ohne um während wegen")
_HOUR = rf"(?P<h>{DAY})"  # up to 24, as the rules check
_ORDINAL = re.compile(r"\d{1,4}\.,?")
_WEEKDAYS = {"Mo": "Montag", "Di": "Dienstag", "Mi": "Mittwoch", "Do": "Donnerstag", "Fr": "Freitag",
             "Sa": "Samstag", "So": "Sonntag"}
_YEAR_CUES = word_set("jahr jahre jahres jahrs seit von bis ab vor nach anno anfang ende mitte sommer winter herbst "
                      "frühjahr frühling zwischen")


def determiner(text: str, at: int) -> tuple[str | None, bool]:
    """The word before an ordinal at `at` that gives it its ending ("am", "der", "ein"), and
    whether a preposition precedes that word ("in der 2. Klasse": the dative). "am 2. und 3.": the
    second ordinal takes the first one's word."""
    words = words_before(text, at, 4)
    for back in (1, 3, 2):  # "am 3.", "am 2. und 3.", "am 2., 3."
        if len(words) < back or words[-back] not in DETERMINERS:
            continue
        between = words[len(words) - back + 1:]
        if back == 1 or (back == 3 and _ORDINAL.fullmatch(between[0]) and between[1] in ("und", "oder", "bis")) \
                or (back == 2 and _ORDINAL.fullmatch(between[0]) and between[0].endswith(",")):
            return words[-back], len(words) > back and words[-back - 1] in _PREPOSITIONS
    return None, False

_SCALE_WORDS = {"Tsd.": 3, "Mio.": 6, "Mrd.": 9}
_NUMBERED = {"Nr": "Nummer", "S": "Seite", "Abs": "Absatz", "Kap": "Kapitel", "Bd": "Band", "Art": "Artikel"}


def german_rules(lang: Continental) -> list[Rule]:
    return [*_ordinal_rules(lang), *_time_rules(lang), *_amount_rules(lang), *_word_rules(lang)]


def _word_rules(lang: Continental) -> list[Rule]:
    days = "|".join(_WEEKDAYS)
    weekdays = re.compile(rf"\b(?P<a>{days})\.?\s?[-–]\s?(?P<b>{days})\.?(?![\w])")  # "Mo.–Fr."
    weekday = re.compile(rf"\b(?P<a>{days})\.(?=,|\s+\d)")  # "Fr., 8.12." (not "Fr. Müller")
    street = re.compile(r"\b(?P<name>[A-ZÄÖÜ][a-zäöüß-]*)str\.(?=\s)")  # "Hauptstr. 12": "Hauptstraße"
    decade = re.compile(rf"(?P<n>{DIGIT}\d{{0,3}})(?P<s>er|ern|ers)(?![^\W\d_])")  # "80er", "1990er", "10er"

    def say_decade(m: re.Match[str]) -> str:
        n = int(m.group("n"))
        stem = lang.year(n) if 1100 <= n < 2000 else lang.cardinal(n)  # "neunzehnhundertneunziger"
        return stem + m.group("s")

    return [Rule("abbreviation", weekdays, lambda m: lang.join([_WEEKDAYS[m.group("a")], lang.words["to"],
                                                                _WEEKDAYS[m.group("b")]]), 68),
            Rule("abbreviation", weekday, lambda m: _WEEKDAYS[m.group("a")], 68),
            Rule("number", decade, say_decade, 40),
            Rule("abbreviation", street, lambda m: m.group("name") + "straße", 70)]


def _ordinal_rules(lang: Continental) -> list[Rule]:
    ordinal = re.compile(rf"(?P<n>{DIGIT}\d{{0,3}})\.(?!\d)")
    ordinals = re.compile(rf"(?P<n1>{DIGIT}\d{{0,3}})\.\s?[-–]\s?(?P<n>\d{{1,4}})\.(?!\d)")  # "3.–5. Mai"
    one = re.compile(r"1(?<![\w.,/:@]1)(?=[ \u00a0](?P<noun>[A-ZÄÖÜ][\w-]*))")
    short_date = re.compile(rf"(?P<d>{DAY})\.(?P<m>\d{{1,2}})\.(?!\d)")

    def say_ordinal(m: re.Match[str]) -> str | None:
        det, after_preposition = determiner(m.string, m.start())
        n = int(m.group("n"))
        following = _NEXT_WORD.match(m.string, m.end())
        noun = following.group(1) if following else None
        named = det is None and not m.groupdict().get("n1") and _after_noun(m)  # "3.–5." is no name
        if n == 0 or named or (det is None and (noun is None or noun in STARTERS)):
            return None
        noun_gender = gender(noun) if noun and noun[0].isupper() else None
        # "in der 2. Klasse": "der" after a preposition is the dative or genitive ("zweiten")
        ending = "en" if after_preposition and det == "der" else determiner_ending(det, noun_gender)
        said = inflect(lang.ordinal(n), ending) + ("." if keeps_stop(m, STARTERS) else "")
        if m.groupdict().get("n1"):  # "3.–5. Mai": "dritter bis fünfter Mai"
            said = lang.join([inflect(lang.ordinal(int(m.group("n1"))), ending), lang.words["to"], said])
        return said

    def say_one(m: re.Match[str]) -> str | None:
        noun = m.group("noun")
        if noun in STARTERS:
            return None
        return "eine" if gender(noun) == "f" else "ein"

    def say_short_date(m: re.Match[str]) -> str | None:
        day, month, det = int(m.group("d")), int(m.group("m")), lang.determiner(m)
        # "21.5." could be a sensor's decimal at a sentence's end: a date only with a word before it
        # that announces one ("am 21.5.") or a month of two digits ("21.05.")
        if not valid_day(day, month) or (det is None and len(m.group("m")) < 2):
            return None
        return lang.dated(det, None, month, day, named=False) + ("." if keeps_stop(m, STARTERS) else "")

    return [Rule("ordinal", ordinal, say_ordinal, 25), Rule("ordinal", ordinals, say_ordinal, 25),
            Rule("number", one, say_one, 50),
            Rule("date", short_date, say_short_date, 9)]


def _time_rules(lang: Continental) -> list[Rule]:
    clock = re.compile(rf"{_HOUR}[:.](?P<min>[0-5]\d)(?::(?P<sec>[0-5]\d))?\s?Uhr\b")
    hour = re.compile(rf"{_HOUR}\s?Uhr\b")
    span = re.compile(rf"(?P<h1>{DAY})(?:[:.](?P<m1>[0-5]\d))?\s?(?:[-–]|bis)\s?{_HOUR}(?:[:.](?P<min>[0-5]\d))?"
                      r"\s?Uhr\b")
    # "um 19.30": the full stop as the hours' mark, after a word that announces a time
    dotted = re.compile(rf"{_HOUR}\.(?P<min>[0-5]\d)(?![\w]|[.,]\d)")

    def said(m: re.Match[str]) -> str | None:
        if int(m.group("h")) > 24 or int(m.groupdict().get("h1") or 0) > 24:
            return None
        second = m.groupdict().get("sec")
        return lang.time(int(m.group("h")), int(m.groupdict().get("min") or 0), int(second) if second else None,
                         None)

    def say_span(m: re.Match[str]) -> str | None:
        last = said(m)
        if last is None:
            return None
        first = lang.time(int(m.group("h1")), int(m.group("m1") or 0), None, None)
        if int(m.group("m1") or 0) == 0 and int(m.group("min") or 0) == 0:  # "9 bis 17 Uhr": "Uhr" said once
            first = first.removesuffix(" Uhr")
        return lang.join([first, lang.words["to"], last])

    return [Rule("time", clock, said, 14), Rule("time", hour, said, 14), Rule("time", span, say_span, 14),
            Rule("time", dotted, lambda m: said(m) if words_before(m.string, m.start(), 1) in (["um"], ["gegen"])
                 else None, 14)]


def _amount_rules(lang: Continental) -> list[Rule]:
    number = number_pattern(lang)
    symbols = {s: code for code, written in CURRENCIES.items() for s in (*written, code)}
    currency = "|".join(re.escape(s) for s in sorted(symbols, key=len, reverse=True))
    scale = re.compile(rf"(?=[-−\d]){BEFORE}{number}\s?(?P<scale>Tsd\.|Mio\.|Mrd\.)(?:\s?(?P<cur>{currency})(?![\w]))?")
    # "10,- €", "5,–": a price in whole euros, its cents a dash
    whole = re.compile(rf"(?P<w>{DIGIT}[\d.]*),[-–]{{1,2}}(?:\s?(?P<cur>{currency})(?![\w]))?")
    units = "|".join(re.escape(u) for u in sorted([*UNITS, *symbols], key=len, reverse=True))
    year = re.compile(rf"(?P<y>{DIGIT}\d{{3}})(?![\w]|[.,]\d|\s?(?:{units})(?!\w))")
    cues = _YEAR_CUES | {m.lower() for m in lang.months} | {f"{a.lower()}." for a in lang.month_abbreviations}
    counted = re.compile(rf"\s?(?!(?:{lang.month_pattern()})\b)[A-ZÄÖÜ]")  # "1999 Menschen": a count
    # "030 1234567", "(030) 12345678", "089 / 123 456-0": an area code, then groups of digits
    phone = re.compile(r"(?=[(0])(?<![\w+(])(?:\(0\d{2,5}\)\s?|0\d{2,5}(?:\s?/\s?|[ -]))\d{2,8}(?:[ -]\d{1,8}){0,3}"
                       r"(?![\w]|[.,]\d)")

    def say_round(m: re.Match[str]) -> str:
        num = Num(False, m.group("w").replace(".", ""))
        code = symbols[m.group("cur")] if m.group("cur") else None
        return lang.money(num, code) if code else lang.number(num)

    def say_scale(m: re.Match[str]) -> str:
        code = symbols[m.group("cur")] if m.group("cur") else None
        noun = lang.currencies[code][0] if code in lang.currencies else None
        said = lang.scaled(parse_number(m), _SCALE_WORDS[m.group("scale")], noun)
        if code and noun is None:
            said = lang.join([said, lang.letters(code)])
        return said + ("." if not m.group("cur") and keeps_stop(m, STARTERS) else "")

    return [Rule("currency", scale, say_scale, 19), Rule("currency", whole, say_round, 19),
            Rule("year", year, lambda m: lang.year(int(m.group("y"))) if _is_year(m, cues, counted) else None, 60),
            Rule("phone", phone, lambda m: _phone(lang, m), 12), numbered_rule(lang, _NUMBERED, r"\b", r"\.\s?")]


def _after_noun(m: re.Match[str]) -> bool:
    """Whether a number follows a noun inside its sentence ("Kapitel 3. Fazit", "Platz 3."): a
    number that names, not an ordinal ("im 3. Stock")."""
    before = m.string[max(0, m.start() - 30):m.start()].split()
    return bool(before) and before[-1][:1].isupper() and before[-1][-1] not in ".!?:;,)\"“”"


def _is_year(m: re.Match[str], cues: frozenset[str] | set[str], counted: re.Pattern[str]) -> bool:
    """Whether a four-digit number is a year: one from 1100 to 2099 after a word that announces
    one ("seit 1999", "im Mai 1999"); or, from 1100 to 1999 (said in hundreds, as years are),
    one that counts no noun ("zwischen 1914 und 1918", "starb 1786." but "1999 Menschen")."""
    year = int(m.group("y"))
    if not 1100 <= year < 2100:
        return False
    before = words_before(m.string, m.start(), 1)
    if before and before[0] in cues:
        return True
    return year < 2000 and not counted.match(m.string, m.end())


def _phone(lang: Continental, m: re.Match[str]) -> str | None:
    groups = re.findall(r"\d+", m.group())
    return lang.phone(groups, False) if sum(map(len, groups)) >= 6 else None
