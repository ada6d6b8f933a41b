"""Russian dates, times, years and ordinals: "08.12.2026" and "8 декабря 2026 г." ("восьмое декабря
две тысячи двадцать шестого года"), "19:30", "в 2026 году", "XX век", "Пётр I", "3-й", "90-е".

The case of a date: a preposition's ("до 08.12": "до восьмого декабря"); else the nominative where
the date is named (at the start of a sentence, after a colon or a dash, after "сегодня", "завтра":
"Сегодня восьмое декабря") and the genitive where it says when something happens, which is most
of running text ("Он родился 5 мая": "пятого мая", "Встреча 08.12": "восьмого декабря").
"""

from __future__ import annotations

import re

from hearth.text.normalize.language import Num, Rule
from hearth.text.normalize.languages import ru_grammar as g

__all__ = ["date", "rules", "time", "year_range"]

_NAMING = frozenset(("сегодня", "завтра", "вчера", "послезавтра", "позавчера", "это", "дата", "наступило", "наступит",
                     "был", "была", "было", "будет"))
_YEAR_NOUNS = {"год": "n", "года": "g", "году": "p", "годом": "i", "годе": "p"}
_CENTURY_NOUNS = {"век": "n", "века": "g", "веке": "p", "веку": "d", "веком": "i"}
_HOUR = g.Forms("час", "часа", "часов")
_MINUTE = g.Forms("минута", "минуты", "минут", "f", "", "минуту")
_SECOND = g.Forms("секунда", "секунды", "секунд", "f", "", "секунду")
_HOUR_OBLIQUE = {"d": ("часу", "часам"), "i": ("часом", "часами"), "p": ("часе", "часах")}
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}
ROMAN = r"(?=[IVXLC])C{0,3}(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})"


def date(year: int | None, month: int, day: int | None, case: str = "n") -> str:
    """"восьмое декабря две тысячи двадцать шестого года": the day an ordinal, neuter, in `case`;
    the month and the year in the genitive."""
    parts = [g.ordinal(day, case, "n")] if day else []
    parts.append(g.MONTHS[month - 1])
    if year is not None:
        parts += [g.ordinal(year, "g"), "года"]
    return " ".join(parts)


def time(hour: int, minute: int, second: int | None, case: str = "n") -> str:
    """"девятнадцать тридцать", "девятнадцать ноль пять" (minutes are feminine: "ноль одна"); on
    the hour "девятнадцать часов"; with seconds the hours, minutes and seconds named."""
    case = case if case in "ngdip" else "n"
    if second is not None:
        case = case if case in "ng" else "n"
        return " ".join(g.counted(Num(False, str(v)), forms, case)
                        for v, forms in ((hour, _HOUR), (minute, _MINUTE), (second, _SECOND)))
    if minute == 0:
        if case in _HOUR_OBLIQUE:
            noun = _HOUR_OBLIQUE[case][0 if hour % 10 == 1 and hour != 11 else 1]
            return f"{g.cardinal(hour, case)} {noun}"
        return g.counted(Num(False, str(hour)), _HOUR, case)
    minutes = g.cardinal(minute, case, "f")
    return f"{g.cardinal(hour, case)} {'ноль ' + minutes if minute < 10 else minutes}"


def year_range(first: int, second: int, text: str, start: int, end: int, abbreviated: bool) -> str:
    """"2020–2024": "с две тысячи двадцатого по две тысячи двадцать четвёртый год"; after a
    preposition or before "годы" written out, both ordinals in its case ("в 2020–2021 гг.": "в две
    тысячи двадцатом — две тысячи двадцать первом годах")."""
    written = g.NEXT_WORD.match(text, end)
    noun = written.group(1).lower() if written and written.group(1).lower().startswith("год") else ""
    case = {"годы": "n", "годов": "g", "годах": "p", "годам": "d", "годами": "i"}.get(noun, "")
    if not case and g.preposition(text, start) in g.PREPOSITIONS:
        case = g.case_before(text, start, "годах" if abbreviated else "")
        case = "p" if case == "a" else case
    if not case:
        return f"с {g.ordinal(first, 'g')} по {g.ordinal(second)} год"
    said = f"{g.ordinal(first, case)} — {g.ordinal(second, case)}"
    return said + (" " + {"n": "годы", "g": "годов", "d": "годам", "i": "годами", "p": "годах"}[case]
                   if abbreviated else "")


def _date_case(text: str, start: int) -> str:
    prep = g.preposition(text, start)
    if prep in g.PREPOSITIONS:
        case = g.case_before(text, start)
        return "n" if case == "a" else case
    before = text[max(0, start - 24):start].rstrip()
    if not before or before[-1] in ".!?:—–-(\n\"«" or prep in _NAMING or not prep:
        return "n"
    return "g"


def rules() -> list[Rule]:
    year_word = rf"(?:\s?(?:г{g.DOT}|года)(?![\w]))?"
    numeric = rf"(?P<d>\d{{1,2}})\.(?P<m>\d{{1,2}})\.(?P<y>\d{{4}}|\d{{2}}){year_word}(?![\w]|[.,]\d)"
    iso = rf"(?P<iy>\d{{4}})-(?P<im>\d{{2}})-(?P<id>\d{{2}}){year_word}(?![\w]|[.,]\d)"
    named = (rf"(?P<nd>\d{{1,2}})(?:-?(?:го|е|ое))?\s+(?P<mon>(?i:{'|'.join(g.MONTHS)}))"
             rf"(?:\s+(?P<ny>\d{{4}}){year_word})?(?![\w])")
    months = "|".join(g.MONTHS)
    clock = (rf"{g.BEFORE}(?P<h>[01]?\d|2[0-3]):(?P<min>[0-5]\d)(?::(?P<sec>[0-5]\d))?(?![\w:]|[.,]\d)")
    year = (rf"{g.BEFORE}(?P<y>\d{{1,4}})(?=\s+(?P<noun>год|года|году|годом|годе|век|века|веке|веку|веком)(?![\w]))"
            rf"|{g.BEFORE}(?P<y2>\d{{4}})\s?г{g.DOT}(?![\w])")
    return [
        Rule("date", re.compile(g.digit_led(rf"{g.BEFORE}(?:{numeric}|{iso}|{named})")), _date, 9),
        Rule("date", re.compile(g.digit_led(rf"{g.BEFORE}(?P<d>\d{{2}})\.(?P<m>[01]\d)(?![\w]|[.,]\d)")), _date, 39),
        # "с 1 по 10 мая": the first day of the two
        Rule("date", re.compile(rf"(?<=\b[сС] )(?P<d>\d{{1,2}})(?=\s+(?:по|до)\s+\d{{1,2}}\s+(?i:{months}))"),
             lambda m: g.ordinal(int(m.group("d")), "g", "n"), 9),
        Rule("time", re.compile(g.digit_led(clock)), _clock, 14),
        Rule("year", re.compile(g.digit_led(year)), _year, 26),  # "2026 г.": before grams (measure, 28)
        Rule("ordinal", re.compile(r"(?<![\w.,])(?P<n>\d{1,4})-(?P<suf>[а-яё]{1,3})(?![\w])"), _ordinal, 25),
        Rule("ordinal", re.compile(rf"(?<![\w-])(?P<r>{ROMAN})(?P<cn>\s?(?:в{g.DOT}|век[а-я]{{0,2}}))?(?![\w-])"),
             _roman, 24),
    ]


def _date(m: re.Match[str]) -> str | None:
    parts = {k: v for k, v in m.groupdict().items() if v}
    month = g.MONTHS.index(parts["mon"].lower()) + 1 if "mon" in parts else int(parts.get("m") or parts["im"])
    day = int(parts.get("d") or parts.get("id") or parts["nd"])
    written_year = parts.get("y") or parts.get("iy") or parts.get("ny")
    year = int(written_year) if written_year else None
    if year is not None and year < 100:
        year += 2000 if year < 70 else 1900
    if not 1 <= month <= 12 or not 1 <= day <= _DAYS[month - 1]:
        return None
    return date(year, month, day, _date_case(m.string, m.start()))


def _clock(m: re.Match[str]) -> str:
    sec = m.group("sec")
    return time(int(m.group("h")), int(m.group("min")), int(sec) if sec else None, g.case_before(m.string, m.start()))


def _year(m: re.Match[str]) -> str | None:
    """"в 2026 году", "в 21 веке": an ordinal in the case of the noun as written; "2026 г." said in full,
    "года" unless a preposition asks otherwise ("в 2026 г.": "в ... шестом году")."""
    if m.group("y2"):
        case = {"p": "p", "a": "p", "d": "d"}.get(g.case_before(m.string, m.start()), "g")
        return f"{g.ordinal(int(m.group('y2')), case)} {'года' if case == 'g' else 'году'}"
    n, noun = int(m.group("y")), m.group("noun")
    if noun in ("год", "года") and n < 1000 or (noun == "века" and n % 10 in (2, 3, 4) and n % 100 // 10 != 1):
        return None  # "2 года", "21 год", "3 века": a number of years, of centuries
    case = _YEAR_NOUNS.get(noun) or _CENTURY_NOUNS[noun]
    if noun == "году" and g.case_before(m.string, m.start()) == "d":
        case = "d"  # "к 2030 году"
    return g.ordinal(n, case)


def _roman_value(numeral: str) -> int:
    values = [_ROMAN[c] for c in numeral]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def _roman(m: re.Match[str]) -> str | None:
    """"XX век": "двадцатый век", "в XX веке", "XXI в."; "Пётр I": "Пётр Первый" (after a name)."""
    n = _roman_value(m.group("r"))
    noun = (m.group("cn") or "").strip()
    if noun in ("в", "в."):  # the noun said, in the case of the preposition: "в XX в.": "в двадцатом веке"
        case = {"a": "p", "p": "p", "g": "g"}.get(g.case_before(m.string, m.start()), "n")
        return f"{g.ordinal(n, case)} {dict(n='век', g='века', p='веке')[case]}"
    if noun:
        return f"{g.ordinal(n, _CENTURY_NOUNS.get(noun, 'n'))} {noun}"
    name = re.search(r"(?:^|\s)[А-ЯЁ][а-яё]+\s$", m.string[max(0, m.start() - 20):m.start()])
    return g.ordinal(n).capitalize() if name else None


_ENDINGS: dict[str, tuple[str, str, bool]] = {  # a written ending: case, gender, plural
    "й": ("n", "m", False), "ый": ("n", "m", False), "ий": ("n", "m", False), "ой": ("n", "m", False),
    "я": ("n", "f", False), "ая": ("n", "f", False), "ю": ("a", "f", False), "ую": ("a", "f", False),
    "е": ("n", "n", False), "ое": ("n", "n", False), "ее": ("n", "n", False), "ые": ("n", "m", True),
    "ие": ("n", "m", True), "го": ("g", "m", False), "ого": ("g", "m", False), "его": ("g", "m", False),
    "му": ("d", "m", False), "ому": ("d", "m", False), "ему": ("d", "m", False), "м": ("i", "m", False),
    "ым": ("i", "m", False), "им": ("i", "m", False), "х": ("g", "m", True), "ых": ("g", "m", True),
    "их": ("g", "m", True), "ми": ("i", "m", True), "ыми": ("i", "m", True),
}


def _ordinal(m: re.Match[str]) -> str | None:
    """"3-й этаж", "2-я", "3-е место", "90-е годы", "на 5-м этаже", "в 1990-х", "к 3-й"."""
    ending = _ENDINGS.get(m.group("suf"))
    n = int(m.group("n"))
    if ending is None or n == 0:
        return None
    case, gender, plural = ending
    following = g.NEXT_WORD.match(m.string, m.end())
    noun = following.group(1).lower() if following else ""
    prep = g.preposition(m.string, m.start())
    locative = prep in ("в", "во", "на", "о", "об", "при")
    if m.group("suf") in ("й", "ой") and prep in g.PREPOSITIONS:
        oblique = g.case_before(m.string, m.start(), noun)
        if oblique in ("g", "d", "i", "p") or (locative and noun.endswith(("е", "и"))):
            case, gender = oblique if oblique != "a" else "p", "f"  # "к 3-й", "на 3-й улице"
    elif m.group("suf") in ("м", "ым", "им") and locative:
        case = "p"  # "на 5-м этаже"
    elif case == "n" and gender == "n" and (noun.startswith(("год", "гг")) or (not noun and n % 10 == 0 and n >= 20)):
        plural = True  # "90-е годы", "1990-е"
    if m.group("suf") == "м" and noun.endswith(("ам", "ям")):
        case, plural = "d", True  # "к 90-м годам"
    return g.ordinal(n, case, gender, plural)
