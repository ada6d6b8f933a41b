"""Russian's own rules: numbers in the case their preposition asks ("от 10 до 20 °C": "от десяти до
двадцати градусов Цельсия", "до 500 ₽": "до пятисот рублей"), agreeing with the noun written after
them ("1 минута": "одна минута", "2 недели": "две недели"), units as Russian writes them (км/ч, кг,
°С), ranges ("10–20": "от десяти до двадцати"), Cyrillic initialisms ("МГУ"), "№", "г. Москва",
Russian phone numbers; with ru_dates' dates, times, years and ordinals. They replace the shared
rules where both match the same text (a lower rank at the same place).

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
from hearth.text.normalize.languages import ru_dates
from hearth.text.normalize.languages import ru_grammar as g
from hearth.text.normalize.rules import number_pattern, parse_number

__all__ = ["money", "rules", "spell"]

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


def _symbols() -> tuple[dict[str, g.Forms], dict[str, str]]:
    """The units by every way they are written, and the currencies written after an amount."""
    units = {**g.UNITS, **{cyr: g.UNITS[sym] for cyr, sym in g.CYRILLIC_UNITS.items()}}
    money_after = {"₽": "RUB", "руб": "RUB", "р": "RUB", "долл": "USD"}
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
    currency = rf"(?P<cur>{_alternatives(money_after)})(?:(?<=[бпл]){g.DOT})?(?![\w])"
    scale = (rf"(?P<scale>тыс|млн|млрд|трлн)(?:{g.DOT})?(?:\s?(?P<scur>{_alternatives(money_after)})"
             rf"(?:(?<=[бпл]){g.DOT})?)?(?![\w])")

    def quantity(m: re.Match[str]) -> str | None:
        num = parse_number(m)
        case = g.case_before(m.string, m.start())
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
        Rule("measure", re.compile(g.digit_led(rf"{g.BEFORE}{number}\s?{unit}")), quantity, 28),
        Rule("currency", re.compile(g.digit_led(rf"{g.BEFORE}{number}\s?(?:{scale}|{currency})")), quantity, 18),
        Rule("number", re.compile(g.digit_led(rf"{g.BEFORE}{number}(?![\w]|[.,]\d)")), _number, 88),
        *_range_rules(number, number_pattern(lang, "a"), unit, currency, units, money_after),
        *ru_dates.rules(),
        *_other_rules(lang),
    ]


def _scaled(num: Num, scale: str, cur: str | None, money_after: dict[str, str], case: str) -> str:
    """"5 тыс. руб.": "пять тысяч рублей"; after a scale the currency is in the genitive plural."""
    said = g.counted(num, g.SCALES[scale], case)
    return f"{said} {g.CURRENCIES[money_after[cur]][0].many}" if cur else said


def _number(m: re.Match[str]) -> str:
    """A number, in the case of its preposition, agreeing with the noun after it."""
    num = parse_number(m)
    following = g.NEXT_WORD.match(m.string, m.end())
    noun = following.group(1) if following else ""
    case = g.case_before(m.string, m.start(), noun.lower())
    if num.fraction is not None:
        return g.decimal(num, case)
    n = int(num.whole)
    if case == "n" and n % 10 == 1 and n % 100 != 11 and noun.endswith(("у", "ю")) and len(noun) > 2:
        case = "a"  # "купил 1 книгу": a feminine object, the accusative
    said = g.cardinal(n, case, _gender_of(noun, n, case) if noun else "m")
    return f"минус {said}" if num.negative else said


def _range_rules(number: str, first: str, unit: str, currency: str, units: dict[str, g.Forms],
                 money_after: dict[str, str]) -> list[Rule]:
    first_unit = unit.replace("?P<unit>", "?P<unit1>")
    ranged = re.compile(g.digit_led(rf"{g.BEFORE}{first}(?:\s?{first_unit})?\s?[-–—]\s?{number}"
                                   rf"(?:\s?(?:{unit}|{currency}))?(?P<years>\s?гг?{g.DOT})?(?![\w]|[.,]\d)"))

    def say(m: re.Match[str]) -> str | None:
        a, b = parse_number(m, "a"), parse_number(m)
        written = m.group("unit")
        if m.group("unit1") not in (None, written) or b.negative:
            return None
        if not written and not m.group("cur") and _years(a, b):
            return ru_dates.year_range(int(a.whole), int(b.whole), m.string, m.start(), m.end(), bool(m.group("years")))
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


def _other_rules(lang: Language) -> list[Rule]:
    initialism = re.compile(r"(?<![\w-])(?P<w>[А-ЯЁ]{2,5})(?![\w-])")
    phone = re.compile(g.digit_led(r"(?<![\w+])8\s?\(?\d{3}\)?\s?\d{3}[-\s]?\d{2}[-\s]?\d{2}(?![\w])"
                                  r"|(?<![\w+-])\d{3}-\d{2}-\d{2}(?![\w-])"))
    closing = re.compile(rf"(?<![\w.])(?P<a>и т\. ?д|и т\. ?п|и др|и пр){g.DOT}(?![\w])")
    return [
        Rule("initialism", initialism, lambda m: None if _said_as_word(m.group("w")) else spell(m.group("w")), 80),
        Rule("phone", phone, lambda m: lang.phone(re.findall(r"\d+", m.group()), False), 11),
        Rule("abbreviation", re.compile(r"№(?=\s?\d)|(?<![\w.])г\.(?=\s?[А-ЯЁ])"), _sign, 70),
        Rule("abbreviation", closing, lambda m: _CLOSING[m.group("a").replace(" ", "")], 69),
        Rule("symbol", re.compile(r"(?<![\w+])\+(?=\d)"), lambda m: "плюс ", 84),
        Rule("number", re.compile(r"(?<![\w.,:])(?P<a>\d{1,2}):(?P<b>\d)(?![\d:])"), _score, 16),
    ]


# Ending a list, usually a sentence: its full stop is left to end it.
_CLOSING = {"ит.д": "и так далее", "ит.п": "и тому подобное", "идр": "и другие", "ипр": "и прочее"}


def _sign(m: re.Match[str]) -> str:
    """"№ 5": "номер пять" (a space put in where "№5" has none); "г. Москва": "город Москва",
    "в г. Москва": "в городе Москва"."""
    if m.group() == "г.":
        case = g.case_before(m.string, m.start(), "")
        return {"a": "городе", "p": "городе", "g": "города", "d": "городу", "i": "городом"}.get(case, "город")
    return "номер" + ("" if m.string[m.end():m.end() + 1].isspace() else " ")


def _score(m: re.Match[str]) -> str:
    """"со счётом 2:1": "два — один"; otherwise a ratio, "1:5": "один к пяти"."""
    a, b = int(m.group("a")), int(m.group("b"))
    if re.search(r"сч[её]т", m.string[max(0, m.start() - 25):m.start()], re.I):
        return f"{g.cardinal(a)} — {g.cardinal(b)}"
    return f"{g.cardinal(a)} к {g.cardinal(b, 'd')}"
