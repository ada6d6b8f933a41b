"""The rules that find what a text means (numbers, money, measures, dates, times, phone numbers,
addresses, initialisms, symbols) and hand each to its language to say. Shared by every language,
shaped by its locale (decimal mark, thousands separators, date order) and extended by its
`extra_rules`. `say_plain` applies them to a stretch of plain text.

The patterns are deliberately conservative: what is not certainly a number of a kind stays as the
model would have read it. Ambiguities are settled as documented in docs/text.md (a short a/b is a
fraction when b <= 10 and a < b, else a date in the language's order; a four-digit number is a year
after a word that announces one).
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Callable

from hearth.text.normalize.language import CURRENCIES, UNITS, Language, Num, Rule
from hearth.text.normalize.spans import Spoken

__all__ = ["number_pattern", "parse_number", "rules_for", "say_plain"]

_DASHES = "-–—~"  # hyphen, en dash, em dash, tilde (Chinese, Japanese and Korean ranges: 10~20): ranges
_MINUS = "-−"  # hyphen-minus, the minus sign


def number_pattern(lang: Language, name: str = "") -> str:
    """A number as `lang` writes it: an optional sign, digits (grouped by thousands or not), and an
    optional decimal part. A language whose decimal mark is the comma also reads "21.5" as a decimal
    (sensors and programs write it so everywhere), but "1.234" as a thousand and more."""
    groups = re.escape(lang.group_marks.replace(" ", "")) + ("\\u00a0\\u202f " if " " in lang.group_marks else "")
    marks = re.escape(lang.decimal_mark)
    whole = rf"\d{{1,3}}(?:[{groups}]\d{{3}})+(?!\d)|\d+" if groups else r"\d+"
    if lang.decimal_mark == ",":
        fraction = rf"(?:{marks}(?P<{name}f>\d+)|\.(?P<{name}g>\d{{1,2}}|\d{{4,}})(?!\d))"
    else:
        fraction = rf"{marks}(?P<{name}f>\d+)"
    return rf"(?P<{name}s>[{_MINUS}](?=\d))?(?P<{name}w>{whole})(?:{fraction})?"


def parse_number(m: re.Match[str], name: str = "") -> Num:
    whole = re.sub(r"\D", "", m.group(f"{name}w"))
    groups = m.groupdict()
    fraction = groups.get(f"{name}f") or groups.get(f"{name}g")
    return Num(bool(m.group(f"{name}s")), whole, fraction)


# Han, kana and hangul: a number written against them is still a number of its own ("温度是21.5℃",
# "3개를"), so the boundaries below count only the letters and digits of the spaced scripts (`_LETTER`).
_CJK = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_LETTER = rf"[^\W{_CJK}]"
_HAS_CJK = re.compile(f"[{_CJK}]")
_BEFORE = rf"(?<!{_LETTER})(?<![.,/:@])"  # not inside a word, a number, a path or an address
_AFTER = rf"(?!{_LETTER}|[.,]\d)"
# A pattern that starts with a number starts with this: the first character tried before the
# boundary's lookbehinds, which keeps a search's scan through text without digits quick.
_AT_NUMBER = rf"(?=[{_MINUS}\d]){_BEFORE}"


def _money_rules(lang: Language, number: str) -> list[Rule]:
    symbols: dict[str, str] = {}
    for code, written in CURRENCIES.items():
        for symbol in written:
            symbols.setdefault(symbol, code)
    symbols.update(_local_currency(lang))
    by_length = sorted(symbols, key=len, reverse=True)
    sym = "|".join(re.escape(s) for s in by_length if not s[0].isalpha())
    # Written with letters ("руб.", "Fr."): a last full stop is taken only inside a sentence, where it
    # cannot also be the sentence's end ("300 руб." keeps its end; "5 руб., а" does not).
    words = sorted({s.rstrip(".") for s in symbols if s[0].isalpha()}, key=len, reverse=True)
    word_sym = "|".join(rf"{re.escape(w)}(?:\.(?=\s*[,;:)]|\s+[^\W\d_A-ZА-ЯЁ]))?" for w in words)
    codes = "|".join(CURRENCIES)
    scale = rf"(?:\s?(?P<scale>[kKMB]|bn|mn)(?!{_LETTER}))?"

    def say(m: re.Match[str]) -> str | None:
        code = _code(m, symbols)
        num = parse_number(m)
        if m.group("scale"):
            factor = {"k": 3, "K": 3, "M": 6, "mn": 6, "B": 9, "bn": 9}[m.group("scale")]
            return lang.money_scaled(num, factor, code)
        return lang.money(num, code)

    firsts = re.escape("".join(sorted({s[0] for s in symbols} | {c[0] for c in CURRENCIES})))
    leading = rf"{sym}|(?:{codes}){'|' + word_sym if word_sym else ''}"
    before = rf"(?=[{firsts}]){_BEFORE}(?P<cur>{leading})\s?{number}{scale}{_AFTER}"
    after = rf"{_AT_NUMBER}{number}\s?(?P<cur>{sym}|(?:{codes}|{word_sym})(?!{_LETTER}))"
    return [Rule("currency", re.compile(before), say, 20),
            Rule("currency", re.compile(after), lambda m: lang.money(parse_number(m), _code(m, symbols)), 20)]


def _code(m: re.Match[str], symbols: dict[str, str]) -> str:
    written = m.group("cur")
    return written if written in CURRENCIES else symbols.get(written) or symbols.get(written + ".") or symbols[
        written.rstrip(".")]


def _local_currency(lang: Language) -> dict[str, str]:
    """The symbols whose currency depends on the language: ¥ is the yen in Japanese, the yuan in
    Chinese; $ is the dollar of the United States unless a language says otherwise."""
    return {"¥": "CNY" if lang.code == "zh" else "JPY"}


def _measure_rules(lang: Language, number: str) -> list[Rule]:
    units = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))

    def measure(m: re.Match[str]) -> str | None:
        unit, num = m.group("unit"), parse_number(m)
        if unit == "%":
            return lang.percent(num)
        if lang.unit_words(unit, num) is None:
            return None
        return lang.measure(num, unit)

    # a unit is never followed by an apostrophe: "nel 2023 l'azienda", "à 5 m'a-t-il dit" are words
    single = rf"{_AT_NUMBER}{number}\s?(?P<unit>{units})(?!{_LETTER}|[/²³'’])"
    ranged = (rf"{_AT_NUMBER}{number_pattern(lang, 'a')}\s?(?P<unit1>{units})?\s?[{_DASHES}]\s?{number}\s?"
              rf"(?P<unit>{units})(?!{_LETTER}|[/²³'’])")

    def measure_range(m: re.Match[str]) -> str | None:
        unit = m.group("unit")
        if m.group("unit1") not in (None, unit):
            return None
        return lang.measure_range(parse_number(m, "a"), parse_number(m), unit)

    return [Rule("measure", re.compile(single), measure, 30), Rule("measure", re.compile(ranged), measure_range, 30)]


def _date(lang: Language, parts: dict[str, str]) -> str | None:
    try:
        year = int(parts["y"]) if parts.get("y") else None
        month, day = int(parts["m"]), int(parts["d"]) if parts.get("d") else None
    except (TypeError, ValueError):
        return None
    if year is not None and year < 100:
        year += 2000 if year < 70 else 1900
    if not 1 <= month <= 12 or (day is not None and not 1 <= day <= _DAYS[month]):
        return None
    return lang.date(year, month, day)


_DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def _date_rules(lang: Language) -> list[Rule]:
    iso = re.compile(rf"{_AT_NUMBER}(?P<y>\d{{4}})-(?P<m>\d{{1,2}})-(?P<d>\d{{1,2}}){_AFTER}")
    order = {"DMY": ("d", "m", "y"), "MDY": ("m", "d", "y"), "YMD": ("y", "m", "d")}[lang.date_order]
    sizes = {"d": r"\d{1,2}", "m": r"\d{1,2}", "y": r"\d{4}|\d{2}"}
    sep = r"(?P<sep>[./-])" if lang.date_order != "MDY" else r"(?P<sep>[/.-])"
    numeric = re.compile(_AT_NUMBER + rf"(?P<{order[0]}>{sizes[order[0]]}){sep}(?P<{order[1]}>{sizes[order[1]]})"
                         rf"(?P=sep)(?P<{order[2]}>{sizes[order[2]]}){_AFTER}")
    short_order = ("d", "m") if lang.date_order == "DMY" else ("m", "d")  # 12/8: December in Chinese too
    short = re.compile(rf"{_AT_NUMBER}(?P<a>\d{{1,2}})/(?P<b>\d{{1,2}}){_AFTER}")

    def say_short(m: re.Match[str]) -> str | None:
        a, b = int(m.group("a")), int(m.group("b"))
        if b <= 10 and a < b:  # 3/4: a fraction
            return lang.fraction(a, b)
        return _date(lang, {short_order[0]: m.group("a"), short_order[1]: m.group("b")}) or lang.fraction(a, b)

    return [Rule("date", iso, lambda m: _date(lang, m.groupdict()), 10),
            Rule("date", numeric, lambda m: _date(lang, m.groupdict()), 10),
            Rule("date", short, say_short, 40)]


def _time_rules(lang: Language) -> list[Rule]:
    # "pm", "p.m.", "PM": the last full stop of "p.m." is taken only inside a sentence (before a
    # comma or a lower-case word), where it cannot also be the sentence's end.
    period = rf"(?:\s?(?P<p>[AaPp])\.?\s?[Mm](?!{_LETTER})(?:\.(?=,|\s+[a-z]))?)"
    clock = re.compile(rf"{_AT_NUMBER}(?P<h>[01]?\d|2[0-3]):(?P<min>[0-5]\d)(?::(?P<sec>[0-5]\d))?{period}?"
                       rf"(?!{_LETTER}|:|[.,]\d)")
    hours = re.compile(rf"{_AT_NUMBER}(?P<h>1[0-2]|0?[1-9]){period}")

    def say(m: re.Match[str]) -> str | None:
        hour = int(m.group("h"))
        p = m.groupdict().get("p")
        if p and not 1 <= hour <= 12:
            return None
        minute = int(m.groupdict().get("min") or 0)
        second = int(m.group("sec")) if m.groupdict().get("sec") else None
        return lang.time(hour, minute, second, None if not p else ("am" if p in "Aa" else "pm"))

    return [Rule("time", clock, say, 15), Rule("time", hours, say, 15)]


_TLD = r"(?:com|org|net|edu|gov|io|ai|dev|app|info|de|fr|it|es|pt|ru|jp|cn|kr|uk|us|eu|ch|at|nl|br|co)"


def _address_rules(lang: Language) -> list[Rule]:
    # An address ends where Han, kana or hangul or their punctuation start ("见example.com。").
    out = rf"\s<>\"'()\[\]{_CJK}\u3000-\u303f\uff00-\uffef"
    url = re.compile(rf"(?=[a-z0-9-])(?<!{_LETTER})(?:(?:https?://|www\.)[^{out}]+[^{out}.,;:!?]"
                     rf"|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.{_TLD}(?!{_LETTER})(?:/[^{out}.,;:!?]+)*)", re.I)
    local = rf"(?:{_LETTER}|[.+-])"
    email = re.compile(rf"(?={local})(?<!{_LETTER}){local}+@(?:{_LETTER}|-)+(?:\.(?:{_LETTER}|-)+)+(?!{_LETTER})")
    return [Rule("url", url, lambda m: lang.address(m.group()), 5),
            Rule("email", email, lambda m: lang.address(m.group()), 5)]


def _phone_rules(lang: Language) -> list[Rule]:
    intl = re.compile(rf"(?<!{_LETTER})(?<!\+)\+\d{{1,3}}(?:[ .-]?\(?\d{{1,4}}\)?){{2,5}}(?!{_LETTER})")
    nanp = re.compile(rf"(?<!{_LETTER})(?<!\()(?:\(\d{{3}}\) ?|\d{{3}}[-.])\d{{3}}[-.]\d{{4}}(?!{_LETTER})")

    def say(m: re.Match[str]) -> str:
        text = m.group()
        groups = re.findall(r"\d+", text)
        return lang.phone(groups, text.startswith("+"))

    return [Rule("phone", intl, say, 12), Rule("phone", nanp, say, 12)]


def _number_rules(lang: Language, number: str) -> list[Rule]:
    cue = "|".join(sorted(lang.year_cues, key=len, reverse=True))

    def say(m: re.Match[str]) -> str | None:
        num = parse_number(m)
        if (cue and num.is_integer and not num.negative and len(m.group("w")) == 4 and 1000 <= int(num.whole) < 2100
                and m.groupdict().get("cue")):
            return lang.year(int(num.whole))
        return lang.number(num)

    plain = re.compile(rf"{_AT_NUMBER}{number}{_AFTER}")
    rules = [Rule("number", plain, say, 90)]
    if cue:
        year = re.compile(rf"(?i:\b(?P<cue>{cue})\s+)(?P<y>1\d{{3}}|20\d{{2}})(?![\w]|[.,]\d)")
        rules.append(Rule("year", year, lambda m: _with_cue(lang, m), 60))
    ranged = re.compile(rf"{_AT_NUMBER}{number_pattern(lang, 'a')}\s?[{_DASHES}]\s?{number}{_AFTER}")

    def say_range(m: re.Match[str]) -> str | None:
        first, second = parse_number(m, "a"), parse_number(m)
        if first.negative or second.negative:
            return None
        years = all(n.is_integer and len(n.whole) == 4 and 1000 <= int(n.whole) < 2100 for n in (first, second))
        said = [lang.year(int(n.whole)) if years else lang.number(n) for n in (first, second)]
        return lang.range(*said)

    rules.append(Rule("range", ranged, say_range, 35))
    return rules


def _with_cue(lang: Language, m: re.Match[str]) -> str:
    """"in 1999": the cue word kept as written, the year said as a year."""
    return lang.join([m.group("cue"), lang.year(int(m.group("y")))])


def _word_rules(lang: Language) -> list[Rule]:
    rules = []
    if lang.abbreviations:
        keys = sorted(lang.abbreviations, key=len, reverse=True)
        words = "|".join(re.escape(k) for k in keys)
        firsts = re.escape("".join(sorted({k[0] for k in keys})))
        pattern = re.compile(rf"(?=[{firsts}])(?<!{_LETTER})(?<!\.)(?:{words})(?!{_LETTER})")
        rules.append(Rule("abbreviation", pattern, lambda m: lang.abbreviations[m.group()], 70))
    initialism = re.compile(rf"(?=[A-Z])(?<!{_LETTER})(?<![.-])(?P<w>[A-Z]{{2,5}})(?P<pl>s)?(?!{_LETTER}|-)")

    def spell(m: re.Match[str]) -> str | None:
        word = m.group("w")
        if word in lang.spelled_as_words or _shouting(m):
            return None
        said = lang.letters(word)
        return said + ("'s" if m.group("pl") and lang.code == "en" else "") if m.group("pl") else said

    rules.append(Rule("initialism", initialism, spell, 80))
    if lang.symbols:
        symbols = "|".join(re.escape(s) for s in sorted(lang.symbols, key=len, reverse=True))
        rules.append(Rule("symbol", re.compile(rf"(?<!\S)(?:{symbols})(?!\S)"), lambda m: lang.symbols[m.group()], 85))
    return rules


def _shouting(m: re.Match[str]) -> bool:
    """An all-capitals word among other all-capitals words is shouting, not an initialism (never
    beside Han, kana or hangul, which have no capitals: "USB、AI、GPU" are initialisms)."""
    text = m.string
    around = text[max(0, m.start() - 40): m.end() + 40]
    if _HAS_CJK.search(around):
        return False
    words = re.findall(r"[^\W\d_]{2,}", around)
    return len(words) >= 3 and sum(w.isupper() for w in words) >= 0.7 * len(words)


@functools.cache
def rules_for(lang: Language) -> tuple[Rule, ...]:
    number = number_pattern(lang)
    return tuple([*_address_rules(lang), *_phone_rules(lang), *_date_rules(lang), *_time_rules(lang),
                  *_money_rules(lang, number), *_measure_rules(lang, number), *_number_rules(lang, number),
                  *_word_rules(lang), *lang.extra_rules()])


def say_plain(spoken: Spoken, start: int, end: int, lang: Language, allow: Callable[[str], bool],
              extra: list[Rule] | None = None) -> None:
    """Append source[start:end] to `spoken` with every rule's find said in `lang`: the earliest
    match first; among matches at one place the longest, then the lower rank. `allow(kind)` says
    whether a kind of rule is on (a request can turn parts of the normalizer off); `extra` rules
    (a lexicon's) are tried with the language's."""
    text = spoken.source
    rules = [r for r in [*(extra or []), *rules_for(lang)] if allow(r.kind)]
    # Each rule's next find in a heap by (start, -length, rank, rule): the first one is the one to
    # say. A find that a said match passed over is looked for again from the match's end; the
    # others wait (a language with fifty rules would otherwise look at all fifty after every match).
    heap: list[tuple[int, int, int, int, re.Match[str], str]] = []

    def push_next(i: int, pos: int) -> None:
        """Rule i's first match from `pos` that it says something for, onto the heap."""
        m = rules[i].pattern.search(text, pos, end)
        while m is not None:
            said = rules[i].say(m) if m.end() > m.start() else None
            if said is not None:
                heapq.heappush(heap, (m.start(), m.start() - m.end(), rules[i].rank, i, m, said))
                return
            m = rules[i].pattern.search(text, m.start() + 1, end)

    for i in range(len(rules)):
        push_next(i, start)
    pos = start
    while heap:
        at, _, _, i, m, said = heapq.heappop(heap)
        if at >= pos:
            spoken.verbatim(pos, at)
            spoken.said(said, at, m.end(), rules[i].kind)
            pos = m.end()
        push_next(i, pos)
    spoken.verbatim(pos, end)
