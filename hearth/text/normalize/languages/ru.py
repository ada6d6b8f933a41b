"""Russian: the decimal comma, thousands grouped by a space (or a dot), the day before the month,
the 24-hour clock; numbers in the case and gender their grammar asks (ru_grammar: the numerals and
the nouns they count; ru_rules: the rules that read case from prepositions and nouns).

How it is said, as a speaker says it:
- Numbers agree with the noun: "один градус", "два градуса", "пять градусов", "одна тонна", "две
  минуты"; after a preposition in its case: "от десяти до двадцати градусов", "до пятисот рублей".
- Decimals up to three places as fractions, as schools, news and forecasts read them: "двадцать
  одна целая пять десятых градуса" (the unit in the genitive singular); longer ones "запятая" and
  the digits.
- Dates: the day an ordinal in the neuter, the month and the year in the genitive: "восьмое
  декабря две тысячи двадцать шестого года" ("до 08.12.2026": "до восьмого декабря ...").
  Whether a date is a subject ("сегодня восьмое") or a time ("восьмого декабря") is not told by a
  rule: the nominative is said unless a preposition asks for a case.
- Times: as the clock is read, "девятнадцать тридцать", "девятнадцать ноль пять"; on the hour
  "девятнадцать часов"; with seconds in full ("девятнадцать часов тридцать минут пятнадцать секунд").
- Years before "год": ordinals ("в две тысячи двадцать шестом году"); "г." after a year is "года".
- Ranges "от ... до ..."; years "с две тысячи двадцатого по две тысячи двадцать четвёртый год".
- Phone numbers in groups, each a number ("восемь, восемьсот, пятьсот пятьдесят пять, тридцать
  пять, тридцать пять"), as Russians dictate them.
- Letters by their Russian names ("эм-гэ-у", "ю-эс-би"); an address's "@" is "собака".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hearth.text.normalize.language import Language, Num, Rule, word_set, word_table
from hearth.text.normalize.languages import ru_dates, ru_rules
from hearth.text.normalize.languages import ru_grammar as g

__all__ = ["Russian"]

_DAY_PARTS = ((4, "ночи"), (12, "утра"), (17, "дня"), (24, "вечера"))
_DOMAINS = {"ru": "ру", "com": "ком", "org": "орг", "net": "нет", "рф": "эр-эф"}


class Russian(Language):
    code = "ru"
    name = "russian"
    decimal_mark = ","
    group_marks = " ."
    date_order = "DMY"
    words = word_table(
        "minus минус; point запятая; to до; percent процентов; and и; plus плюс; over дробь; thousand тысяч; "
        "million миллионов; billion миллиардов")
    marks = word_table(
        ". точка; @ собака; / слэш; : двоеточие; - дефис; _ нижнее подчёркивание; ? вопросительный знак; = равно; "
        "# решётка; ~ тильда")
    symbols = word_table(
        "& и; + плюс; = равно; @ собака; # решётка; ~ около; × на; ÷ разделить на; ° градусов; № номер")
    abbreviations = word_table(
        "т. е.: то есть; т.е.: то есть; т. д.: так далее; т. п.: тому подобное; т. к.: так как; т.к.: так как; "
        "т. н.: так называемый; т.н.: так называемый; в т. ч.: в том числе; в т.ч.: в том числе; "
        "до н. э.: до нашей эры; н. э.: нашей эры; ул.: улица; пр-т: проспект; д.: дом; кв.: квартира; стр.: страница; "
        "рис.: рисунок; см.: смотри; напр.: например; проф.: профессор; акад.: академик; им.: имени; г-н: господин; "
        "г-жа: госпожа; тел.: телефон; обл.: область; р-н: район; пос.: посёлок; зам.: заместитель; гл.: глава; "
        "руб.: рублей; коп.: копеек; тыс.: тысяч; млн: миллионов; млрд: миллиардов; мин.: минут; сек.: секунд; "
        "ок.: около; прим.: примечание; гг.: годы; вв.: века", ": ")
    spelled_as_words = word_set("NASA NATO UNESCO UNICEF FIFA UEFA IKEA LEGO COVID OK WIFI")

    def cardinal(self, n: int) -> str:
        return f"минус {g.cardinal(-n)}" if n < 0 else g.cardinal(n)

    def ordinal(self, n: int) -> str:
        return g.ordinal(n)

    def digit_names(self) -> Sequence[str]:
        return [g.cardinal(d) for d in range(10)]

    def number(self, num: Num) -> str:
        if num.fraction is not None:
            return g.decimal(num)
        return f"минус {g.cardinal(int(num.whole))}" if num.negative else g.cardinal(int(num.whole))

    def fraction(self, numerator: int, denominator: int) -> str:
        """The everyday words where there are some ("половина", "треть", "три четверти"), else the
        numerator feminine and the denominator an ordinal ("одна пятая", "пять восьмых")."""
        if (numerator, denominator) == (1, 2):
            return "половина"
        if denominator in (3, 4):
            names = {3: ("треть", "трети", "третей"), 4: ("четверть", "четверти", "четвертей")}[denominator]
            return g.counted(Num(False, str(numerator)), g.Forms(*names, gender="f"))
        name = g.agreeing(numerator, g.ordinal(denominator, "n", "f"), g.ordinal(denominator, "g", plural=True))
        return f"{g.cardinal(numerator, 'n', 'f')} {name}"

    def percent(self, num: Num) -> str:
        return g.counted(num, g.UNITS["%"])

    def money(self, num: Num, code: str) -> str:
        if code not in g.CURRENCIES:
            return self.join([self.number(num), self.letters(code)])
        return ru_rules.money(num, code)

    def money_scaled(self, num: Num, exponent: int, code: str) -> str:
        """"$5k": "пять тысяч долларов"; "€2,5M": "две целых пять десятых миллиона евро"."""
        scale = {3: "тыс", 6: "млн", 9: "млрд"}[exponent]
        unit = g.CURRENCIES[code][0].many if code in g.CURRENCIES else self.letters(code)
        return f"{g.counted(num, g.SCALES[scale])} {unit}"

    def unit_words(self, unit: str, num: Num) -> str | None:
        forms = g.UNITS.get(unit)
        return None if forms is None else g.noun_form(num, forms, "n")

    def measure(self, num: Num, unit: str) -> str:
        return g.counted(num, g.UNITS[unit])

    def range(self, first: str, second: str) -> str:
        return f"от {first} до {second}"

    def date(self, year: int | None, month: int | None, day: int | None) -> str:
        return ru_dates.date(year, month or 1, day)

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        """A written am/pm said as the part of the day: "семь тридцать вечера"."""
        if period:
            hour24 = hour % 12 + (12 if period == "pm" else 0)
            words = g.cardinal(hour) + ("" if not minute else f" {'ноль ' if minute < 10 else ''}"
                                        f"{g.cardinal(minute, 'n', 'f')}")
            return f"{words} {next(name for end, name in _DAY_PARTS if hour24 < end)}"
        return ru_dates.time(hour, minute, second)

    def phone(self, groups: Sequence[str], international: bool) -> str:
        said = ", ".join(_phone_group(g_) for g_ in groups)
        return f"плюс {said}" if international else said

    def address(self, text: str) -> str:
        """The words of an address as they are, the common domains as Russians say them ("точка ру")."""
        return " ".join(_DOMAINS.get(w, w) for w in super().address(text).split(" "))

    def letters(self, text: str) -> str:
        return ru_rules.spell(text)

    def extra_rules(self) -> list[Rule]:
        return ru_rules.rules(self)


def _phone_group(group: str) -> str:
    """A group said as a number ("сорок пять"), a leading zero digit by digit ("ноль пять"), a
    longer group in pairs after a first three when odd."""
    if len(group) > 3:
        head = 3 if len(group) % 2 else 2
        return ", ".join(_phone_group(c) for c in [group[:head], *re.findall(r"\d\d", group[head:])])
    if group.startswith("0") or len(group) == 1:
        return g.digits(group)
    return g.cardinal(int(group))
