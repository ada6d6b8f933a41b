"""Russian's own rules: numbers in the case their preposition asks ("от 10 до 20 °C": "от десяти до
двадцати градусов Цельсия", "до 500 ₽": "до пятисот рублей"), agreeing with the noun written after
them ("1 минута": "одна минута", "2 недели": "две недели"), units as Russian writes them (км/ч, кг,
°С), ranges ("10–20": "от десяти до двадцати"), dates with the ordinal day and the genitive month
and year ("8 декабря 2026 г."), times, years before "год" ("в 2026 году": "в две тысячи двадцать
шестом году"), ordinals with their endings ("3-й", "2-я", "90-е"), Cyrillic initialisms ("МГУ"),
"№", Russian phone numbers. They replace the shared rules where both match the same text.

The case is read from the preposition before a number and, where the noun is written, from its
ending ("с 5 детьми": instrumental; "в 3 странах": prepositional). A unit or currency written as a
symbol is said in the nominative, genitive and accusative; after other prepositions ("при 20 °C")
it stays in the nominative: its dative, instrumental and prepositional forms are not in the tables.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hearth.text.normalize.language import CURRENCIES as ISO_CURRENCIES
from hearth.text.normalize.language import Language, Num, Rule
from hearth.text.normalize.languages import ru_grammar as g
from hearth.text.normalize.rules import number_pattern, parse_number

__all__ = ["case_before", "date", "money", "preposition", "rules", "spell", "time"]

_GENITIVE = frozenset(("от", "до", "с", "со", "после", "около", "из", "без", "для", "кроме", "более", "менее",
                       "свыше", "больше", "меньше", "порядка", "ниже", "выше", "среди", "вместо", "возле", "у",
                       "против", "накануне", "ради", "из-за", "из-под", "вокруг", "после"))
_ACCUSATIVE = frozenset(("на", "за", "через", "про", "в", "во", "спустя", "по"))
_WORD_BEFORE = re.compile(r"(?:^|[^\w-])([а-яё]+(?:-[а-яё]+)?)\s+$", re.I)
_NEXT_WORD = re.compile(r"\s+([а-яё]+)", re.I)
_BEFORE = r"(?<![\w.,/:@])"
_CYRILLIC_LETTERS = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюя", [
    "а", "бэ", "вэ", "гэ", "дэ", "е", "ё", "жэ", "зэ", "и", "и краткое", "ка", "эль", "эм", "эн", "о", "пэ", "эр",
    "эс", "тэ", "у", "эф", "ха", "цэ", "че", "ша", "ща", "твёрдый знак", "ы", "мягкий знак", "э", "ю", "я"],
    strict=True))
_LATIN_LETTERS = dict(zip("abcdefghijklmnopqrstuvwxyz", [
    "эй", "би", "си", "ди", "и", "эф", "джи", "эйч", "ай", "джей", "кей", "эл", "эм", "эн", "оу", "пи", "кью", "ар",
    "эс", "ти", "ю", "ви", "дабл ю", "экс", "уай", "зед"], strict=True))
_VOWELS = set("аеёиоуыэюя")
# Said as a word although the rule below would spell them, or spelled although it would not.
_AS_WORDS = frozenset(("ООН", "МХАТ", "СМИ", "НИИ", "МИД", "ГУМ", "ТАСС", "ЕГЭ", "ОГЭ", "ВУЗ", "ЗАГС", "ГОСТ", "ОМОН",
                       "НАТО", "ЦУМ", "СНИЛС", "ВАК", "ОПЕК", "ЮНЕСКО"))
_SPELLED = frozenset(("ОАО", "ООО", "ЗАО", "ПАО", "АО", "ИП", "ЕС", "ЭВМ", "УК", "ОБЖ"))
# Feminine nouns in -ь that numbers count (the ending alone does not tell: "день" is masculine).
_FEMININE_SOFT = frozenset(("дверь", "площадь", "жизнь", "запись", "мысль", "тетрадь", "кровать", "лошадь", "степень",
                            "соль", "роль", "цель", "модель", "сеть", "дробь", "осень", "тень", "боль", "цепь",
                            "ступень", "морковь", "любовь", "очередь"))
_SPOKEN = {"США": "сэ-шэ-а"}  # spelled as custom has it, not by the letters' names
_YEAR_NOUNS = {"год": "n", "года": "g", "году": "p", "годом": "i", "годе": "p"}
_HOUR = g.Forms("час", "часа", "часов")
_MINUTE = g.Forms("минута", "минуты", "минут", "f", "", "минуту")
_SECOND = g.Forms("секунда", "секунды", "секунд", "f", "", "секунду")
_HOUR_OBLIQUE = {"d": ("часу", "часам"), "i": ("часом", "часами"), "p": ("часе", "часах")}


def preposition(text: str, start: int) -> str:
    """The word right before `start`, lower case ("" at the start of the text)."""
    m = _WORD_BEFORE.search(text[max(0, start - 16):start])
    return m.group(1).lower() if m else ""


def case_before(text: str, start: int, noun: str = "") -> str:
    """The case a number at `start` is said in: by the preposition before it, refined by the ending
    of the noun after it where one is written ("с 5 детьми")."""
    prep = preposition(text, start)
    if not prep:
        return "n"
    if noun.endswith(("ами", "ями", "ьми")):
        return "i"
    if prep in ("в", "во", "на", "о", "об", "при") and noun.endswith(("ах", "ях")):
        return "p"
    if prep in ("к", "ко", "по") and noun.endswith(("ам", "ям")):
        return "d"
    if prep in _GENITIVE:
        return "g"
    if prep in _ACCUSATIVE:
        return "a"
    return {"к": "d", "ко": "d", "о": "p", "об": "p", "при": "p", "между": "i", "перед": "i", "над": "i",
            "под": "i"}.get(prep, "n")


def _gender_of(noun: str, n: int, case: str) -> str:
    """The gender a written noun shows after `n` in `case`, where its ending tells (only a number
    ending in one or two has a gender): "1 минута", "2 минуты", "1 окно"."""
    last = n % 10 if n % 100 not in (11, 12) else 0
    word = noun.lower()
    if last == 1 and case in "na" and word.endswith("ь"):
        soft_feminine = word.endswith(("сть", "чь", "шь", "щь", "жь")) and word != "гость"
        return "f" if word in _FEMININE_SOFT or soft_feminine else "m"
    if last == 1 and case == "n":
        return "f" if word.endswith(("а", "я")) else "n" if word.endswith(("о", "е", "ё")) else "m"
    if (last == 1 and case in "ga") or (last == 2 and case in "na"):
        if case == "a" and last == 1:
            return "f" if word.endswith(("у", "ю")) else "m"
        return "f" if word.endswith(("ы", "и")) and len(word) > 3 else "m"
    if last == 1 and case == "d":
        return "f" if word.endswith(("е", "и")) else "m"
    if last == 1 and case == "i":
        return "f" if word.endswith(("ой", "ей", "ью")) else "m"
    return "m"


def spell(text: str) -> str:
    """Letters by their Russian names, joined as Russian writes a spelled word ("эм-гэ-у"); the
    web's www as Russians say it, "вэ-вэ-вэ"."""
    if text.lower() == "www":
        return "вэ-вэ-вэ"
    if text in _SPOKEN:
        return _SPOKEN[text]
    names = [_CYRILLIC_LETTERS.get(c, _LATIN_LETTERS.get(c, c)) for c in text.lower() if c.isalpha()]
    return "-".join(n.replace(" ", "-") for n in names)


def _said_as_word(word: str) -> bool:
    """A Cyrillic initialism read as a word: consonants and vowels alternate from its start, as in
    ВУЗ, МИД, ОМОН (МГУ, США, ФСБ, АЭС, ДТП are spelled)."""
    if word in _AS_WORDS or word in _SPELLED:
        return word in _AS_WORDS
    kinds = ["v" if c in _VOWELS else "c" for c in word.lower()]
    return len(word) >= 3 and "v" in kinds and kinds[:2] != ["c", "c"] and "vv" not in "".join(kinds)


def money(num: Num, code: str, case: str = "n") -> str:
    """"тысяча двести тридцать четыре рубля пятьдесят шесть копеек" (no "и" between: as prices
    and bank statements are read)."""
    unit, cent = g.CURRENCIES[code]
    fraction = num.fraction or ""
    if len(fraction) > 2 or (fraction and cent is None):
        return g.counted(num, unit, case)
    whole, hundredths = int(num.whole), int(fraction.ljust(2, "0")) if fraction else 0
    parts = [g.counted(Num(False, num.whole), unit, case)] if whole or not hundredths else []
    if hundredths and cent is not None:
        parts.append(g.counted(Num(False, str(hundredths)), cent, case))
    said = " ".join(parts)
    return f"минус {said}" if num.negative else said


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


def _symbols() -> tuple[dict[str, g.Forms], dict[str, str]]:
    """The units by every way they are written, and the currencies written after an amount."""
    units = {**g.UNITS, **{cyr: g.UNITS[sym] for cyr, sym in g.CYRILLIC_UNITS.items()}}
    money_after = {"₽": "RUB", "руб.": "RUB", "руб": "RUB", "р.": "RUB", "долл.": "USD"}
    for code, written in ISO_CURRENCIES.items():
        if code in g.CURRENCIES:
            money_after.update({s: code for s in written if s not in money_after and not s[0].isalpha()})
            money_after[code] = code
    return units, money_after


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def rules(lang: Language) -> list[Rule]:
    number = number_pattern(lang)
    units, money_after = _symbols()
    unit = rf"(?P<unit>{_alternatives(units)})(?![\w/²³])"
    currency = rf"(?P<cur>{_alternatives(money_after)})(?![\w])"
    scale = rf"(?P<scale>тыс\.|млн\.?|млрд\.?|трлн\.?)(?:\s?(?P<scur>{_alternatives(money_after)}))?(?![\w])"

    def quantity(m: re.Match[str]) -> str | None:
        num = parse_number(m)
        case = case_before(m.string, m.start())
        case = case if case in "nga" else "n"
        if m.groupdict().get("scale"):
            return _scaled(num, m.group("scale"), m.group("scur"), money_after, case)
        if m.groupdict().get("cur"):
            return money(num, money_after[m.group("cur")], case)
        written = m.group("unit")
        if written in ("с", "т") and re.match(r"\s+[а-яё]|\.\s?[а-яё]\.", m.string[m.end():m.end() + 5]):
            return None  # "5 с половиной", "5 т. е.": a preposition, an abbreviation
        return g.counted(num, units[written], case)

    return [
        Rule("measure", re.compile(_digit_led(rf"{_BEFORE}{number}\s?{unit}")), quantity, 28),
        Rule("currency", re.compile(_digit_led(rf"{_BEFORE}{number}\s?(?:{scale}|{currency})")), quantity, 18),
        Rule("number", re.compile(_digit_led(rf"{_BEFORE}{number}(?![\w]|[.,]\d)")), _number, 88),
        *_range_rules(number, number_pattern(lang, "a"), unit, currency, units, money_after),
        *_date_rules(),
        *_other_rules(lang),
    ]


def _scaled(num: Num, scale: str, cur: str | None, money_after: dict[str, str], case: str) -> str:
    """"5 тыс. руб.": "пять тысяч рублей"; after a scale the currency is in the genitive plural."""
    said = g.counted(num, g.SCALES[scale.rstrip(".") if scale != "тыс." else scale], case)
    return f"{said} {g.CURRENCIES[money_after[cur]][0].many}" if cur else said


def _number(m: re.Match[str]) -> str:
    """A number, in the case of its preposition, agreeing with the noun after it."""
    num = parse_number(m)
    following = _NEXT_WORD.match(m.string, m.end())
    noun = following.group(1) if following else ""
    case = case_before(m.string, m.start(), noun.lower())
    if num.fraction is not None:
        return g.decimal(num, case)
    n = int(num.whole)
    said = g.cardinal(n, case, _gender_of(noun, n, case) if noun else "m")
    return f"минус {said}" if num.negative else said


def _range_rules(number: str, first: str, unit: str, currency: str, units: dict[str, g.Forms],
                 money_after: dict[str, str]) -> list[Rule]:
    first_unit = unit.replace("?P<unit>", "?P<unit1>")
    ranged = re.compile(_digit_led(rf"{_BEFORE}{first}(?:\s?{first_unit})?\s?[-–—]\s?{number}"
                                   rf"(?:\s?(?:{unit}|{currency}))?(?P<years>\s?гг?\.)?(?![\w]|[.,]\d)"))

    def say(m: re.Match[str]) -> str | None:
        a, b = parse_number(m, "a"), parse_number(m)
        written = m.group("unit")
        if m.group("unit1") not in (None, written) or b.negative:
            return None
        if not written and not m.group("cur") and _years(a, b):
            return f"с {g.ordinal(int(a.whole), 'g')} по {g.ordinal(int(b.whole))} год"
        lo = g.decimal(a, "g") if a.fraction is not None else (
            ("минус " if a.negative else "") + g.cardinal(int(a.whole), "g", units[written].gender if written else "m"))
        if written:
            hi = g.counted(b, units[written], "g")
        elif m.group("cur"):
            hi = money(b, money_after[m.group("cur")], "g")
        else:
            hi = g.decimal(b, "g") if b.fraction is not None else g.cardinal(int(b.whole), "g")
        return f"от {lo} до {hi}" + (" годов" if m.group("years") else "")

    return [Rule("range", ranged, say, 27)]


def _years(a: Num, b: Num) -> bool:
    return all(n.is_integer and not n.negative and len(n.whole) == 4 and 1000 <= int(n.whole) < 2100 for n in (a, b))


def _date_rules() -> list[Rule]:
    year_word = r"(?:\s?(?:г\.|года)(?![\w]))?"
    numeric = rf"(?P<d>\d{{1,2}})\.(?P<m>\d{{1,2}})\.(?P<y>\d{{4}}|\d{{2}}){year_word}(?![\w]|[.,]\d)"
    iso = rf"(?P<iy>\d{{4}})-(?P<im>\d{{2}})-(?P<id>\d{{2}}){year_word}(?![\w]|[.,]\d)"
    named = (rf"(?P<nd>\d{{1,2}})(?:-?(?:го|е|ое))?\s+(?P<mon>(?i:{'|'.join(g.MONTHS)}))"
             rf"(?:\s+(?P<ny>\d{{4}}){year_word})?(?![\w])")
    dates = re.compile(_digit_led(rf"{_BEFORE}(?:{numeric}|{iso}|{named})"))
    short = re.compile(_digit_led(rf"{_BEFORE}(?P<d>\d{{2}})\.(?P<m>[01]\d)(?![\w]|[.,]\d)"))

    def say(m: re.Match[str]) -> str | None:
        parts = {k: v for k, v in m.groupdict().items() if v}
        month = g.MONTHS.index(parts["mon"].lower()) + 1 if "mon" in parts else int(parts.get("m") or parts["im"])
        day = int(parts.get("d") or parts.get("id") or parts["nd"])
        written_year = parts.get("y") or parts.get("iy") or parts.get("ny")
        year = int(written_year) if written_year else None
        if year is not None and year < 100:
            year += 2000 if year < 70 else 1900
        if not 1 <= month <= 12 or not 1 <= day <= (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]:
            return None
        case = case_before(m.string, m.start())
        return date(year, month, day, "n" if case == "a" else case)

    return [Rule("date", dates, say, 9), Rule("date", short, say, 39)]


def _digit_led(pattern: str) -> str:
    """`pattern`, which starts with a number, tried only where a digit or a minus is: the engine
    then skips the other characters without trying each alternative (half the search time)."""
    return rf"(?=[-−0-9])(?:{pattern})"


def _other_rules(lang: Language) -> list[Rule]:
    clock = re.compile(_digit_led(rf"{_BEFORE}(?P<h>[01]?\d|2[0-3]):(?P<min>[0-5]\d)(?::(?P<sec>[0-5]\d))?"
                                  r"(?![\w:]|[.,]\d)"))
    year = re.compile(_digit_led(rf"{_BEFORE}(?P<y>\d{{1,4}})(?=\s+(?P<noun>год|года|году|годом|годе)(?![\w]))"
                                 rf"|{_BEFORE}(?P<y2>\d{{4}})\s?г\.(?![\w])"))
    ordinal = re.compile(r"(?<![\w.,])(?P<n>\d{1,4})-(?P<suf>[а-яё]{1,3})(?![\w])")
    initialism = re.compile(r"(?<![\w-])(?P<w>[А-ЯЁ]{2,5})(?![\w-])")
    phone = re.compile(r"(?<![\w+])8\s?\(?\d{3}\)?\s?\d{3}[-\s]?\d{2}[-\s]?\d{2}(?![\w])"
                       r"|(?<![\w+-])\d{3}-\d{2}-\d{2}(?![\w-])")

    def clock_said(m: re.Match[str]) -> str:
        sec = m.group("sec")
        return time(int(m.group("h")), int(m.group("min")), int(sec) if sec else None,
                    case_before(m.string, m.start()))

    return [
        Rule("time", clock, clock_said, 14),
        Rule("year", year, _year, 58),
        Rule("ordinal", ordinal, _ordinal, 25),
        Rule("initialism", initialism, lambda m: None if _said_as_word(m.group("w")) else spell(m.group("w")), 80),
        Rule("phone", phone, lambda m: lang.phone(re.findall(r"\d+", m.group()), False), 11),
        Rule("abbreviation", re.compile(r"№(?=\s?\d)|(?<![\w.])г\.(?=\s?[А-ЯЁ])"), _sign, 70),
    ]


def _sign(m: re.Match[str]) -> str:
    """"№ 5": "номер пять" (a space put in where "№5" has none); "г. Москва": "город Москва"."""
    if m.group() == "г.":
        return "город"
    return "номер" + ("" if m.string[m.end():m.end() + 1].isspace() else " ")


def _year(m: re.Match[str]) -> str | None:
    """"в 2026 году": the year an ordinal in the case of "год" as written; "2026 г." said in full,
    "года" unless a preposition asks otherwise ("в 2026 г.": "в ... шестом году")."""
    if m.group("y2"):
        case = case_before(m.string, m.start())
        case = {"p": "p", "a": "p", "d": "d"}.get(case, "g")
        noun = {"p": "году", "d": "году", "g": "года"}[case]
        return f"{g.ordinal(int(m.group('y2')), case)} {noun}"
    n, noun = int(m.group("y")), m.group("noun")
    if noun in ("год", "года") and n < 1000:
        return None  # "2 года", "21 год": a number of years
    case = _YEAR_NOUNS[noun]
    if noun == "году" and case_before(m.string, m.start()) == "d":
        case = "d"  # "к 2030 году"
    return g.ordinal(n, case)


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
    following = _NEXT_WORD.match(m.string, m.end())
    noun = following.group(1).lower() if following else ""
    prep = preposition(m.string, m.start())
    locative = prep in ("в", "во", "на", "о", "об", "при")
    if m.group("suf") in ("й", "ой") and prep:
        oblique = case_before(m.string, m.start(), noun)
        if oblique in ("g", "d", "i", "p") or (locative and noun.endswith(("е", "и"))):
            case, gender = oblique if oblique != "a" else "p", "f"  # "к 3-й", "на 3-й улице"
    elif m.group("suf") in ("м", "ым", "им") and locative:
        case = "p"  # "на 5-м этаже"
    elif case == "n" and gender == "n" and (noun.startswith(("год", "гг")) or (not noun and n % 10 == 0 and n >= 20)):
        plural = True  # "90-е годы", "1990-е"
    if m.group("suf") == "м" and noun.endswith(("ам", "ям")):
        case, plural = "d", True  # "к 90-м годам"
    return g.ordinal(n, case, gender, plural)

