"""What Chinese, Japanese and Korean share, and English does not: numeric dates year first
(2026/12/08, and 12/8 is the eighth of December), a currency's name after the amount in every
case ("$5" is 五美元, 五ドル, 오 달러), a unit's name after the number or around it (時速百キロメートル,
시속 백 킬로미터), a word of its own for a temperature below zero (零下, 氷点下, 영하), phone numbers
said digit by digit in the digits' phone names, and domestic numbers written 090-1234-5678 or
(010) 1234-5678; codes named by the word before them (验证码：123456) said like phone numbers;
clock ranges (9:00～18:00); a range's second end after a date's or a clock's word (5月1日-5月5日);
scores and ratios (2:1).

Amounts of money are said as decimals, trailing zeros dropped ("¥12.50": 十二点五元, 十二点五円,
십이 점 오 원): the reading news and announcements use; shops' 元角分 or 块毛 are not used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from typing import ClassVar

from hearth.text.normalize.language import Language, Num, Rule, word_set
from hearth.text.normalize.rules import say_plain
from hearth.text.normalize.spans import Spoken

__all__ = ["EastAsian", "plain_amount"]


def plain_amount(num: Num) -> Num:
    """`num` without the zeros that end its decimals (12.50 -> 12.5, 100.00 -> 100)."""
    fraction = (num.fraction or "").rstrip("0") or None
    return Num(num.negative, num.whole, fraction)


class EastAsian(Language):
    """The base of Chinese, Japanese and Korean. Subclasses set the words below and say numbers."""

    decimal_mark = "."
    group_marks = ","
    date_order = "YMD"
    below_zero: ClassVar[str] = ""  # said before a temperature below 0 °C instead of "minus"
    degree: ClassVar[str] = ""  # the word a temperature is written with (-3度, -3도)
    percent_before: ClassVar[bool] = False  # Chinese: 百分之十五, the percent before the number
    phone_digits: ClassVar[Sequence[str]] = ()  # 0-9 as a phone number says them
    phone_joint: ClassVar[str] = " "  # between a phone number's groups
    currency_names: ClassVar[dict[str, str]] = {}  # ISO code -> the currency's name
    unit_names: ClassVar[dict[str, str]] = {}  # a symbol of UNITS -> the word after the number, or a
    # template with {} where the number goes (時速{}キロメートル)
    largest = 10**16
    zero: ClassVar[str] = ""  # 0 said alone
    spelled_as_words = word_set("NASA NATO UNESCO UNICEF FIFA OPEC COVID IKEA LEGO")
    code_cues: ClassVar[str] = ""  # words after which digits are a code, said one by one (验证码是123456)

    def natural(self, n: int) -> str:
        return self.grouped(n) if n else self.zero

    def grouped(self, n: int) -> str:
        """1 <= `n` < 10**16 in words, grouped by 万 and the larger myriads (億, 兆; 亿)."""
        raise NotImplementedError

    def count(self, num: Num) -> str:
        """A number before a measure word or a unit (Chinese says 两 there, not 二)."""
        return self.number(num)

    def money(self, num: Num, code: str) -> str:
        name = self.currency_names.get(code)
        amount = self.count(plain_amount(num))
        return self.join([amount, name if name else self.letters(code)])

    def money_scaled(self, num: Num, exponent: int, code: str) -> str:
        """"$5k": five thousand dollars, said in the language's own grouping (2.5M: 二百五十万)."""
        value = Decimal(f"{num.whole}.{num.fraction or 0}").scaleb(exponent)
        whole, _, fraction = format(value, "f").partition(".")
        return self.money(Num(num.negative, whole, fraction or None), code)

    def unit_words(self, unit: str, num: Num) -> str | None:
        return self.unit_names.get(unit)

    def _amount(self, num: Num, unit: str) -> str:
        if num.negative and unit == "°C" and self.below_zero:
            return self.join([self.below_zero, self.count(Num(False, num.whole, num.fraction))])
        return self.count(num)

    def measure(self, num: Num, unit: str) -> str:
        word = self.unit_names[unit]
        amount = self._amount(num, unit)
        return word.format(amount) if "{}" in word else self.join([amount, word])

    def percent(self, num: Num) -> str:
        return self.join([self.number(num), self.words["percent"]])

    def measure_range(self, first: Num, second: Num, unit: str) -> str | None:
        """"10-20℃": 十到二十摄氏度, the unit said once; a range from below zero to above it says
        both with the unit (零下五摄氏度到三摄氏度), as "零下五到三" would mislead."""
        if unit == "%":
            first_said = self.percent(first) if self.percent_before else self.number(first)
            return self.range(first_said, self.percent(second))
        word = self.unit_names.get(unit)
        if word is None:
            return None
        if "{}" in word:  # 時速十から二十キロメートル
            return word.format(self.range(self._amount(first, unit), self._amount(second, unit)))
        if first.negative != second.negative:
            return self.range(self.measure(first, unit), self.measure(second, unit))
        return self.range(self._amount(first, unit), self.measure(second, unit))

    def date(self, year: int | None, month: int | None, day: int | None) -> str:
        said = f"{self.year(year)}年" if year is not None else ""
        said += f"{self.cardinal(month)}月" if month else ""
        return said + (f"{self.cardinal(day)}日" if day else "")

    def phone(self, groups: Sequence[str], international: bool) -> str:
        said = self.phone_joint.join("".join(self.phone_digits[int(c)] for c in g) for g in groups)
        return self.join([self.words["plus"], said]) if international else said

    def address(self, text: str) -> str:
        """As the shared reading, the pieces apart with spaces, as the address's Latin words would
        otherwise run together (me at example 点 com)."""
        return " ".join(self.address_words(text))

    def extra_rules(self) -> list[Rule]:
        # 090-1234-5678, 03-1234-5678, 0120-123-456, 010-1234-5678, 02-123-4567: a domestic number
        # begins with 0 (a range or a date does not).
        domestic = re.compile(r"(?=0)(?<![\d+-])0\d{1,4}(?P<sep>[- ])\d{1,4}(?P=sep)\d{3,4}(?![\d-])")
        clock = r"(?P<h{0}>[01]?\d|2[0-4]):(?P<m{0}>[0-5]\d)"
        hours = re.compile(rf"(?=\d)(?<![\d:.]){clock.format(1)}\s?[-~–]\s?{clock.format(2)}(?![\d:])")  # 9:00-18:00
        ratio = re.compile(r"(?=\d)(?<![\d:.,])(?P<a>\d+):(?P<b>\d+)(?![\d:])")  # 2:1, 16:9 (not a clock)
        # 5月1日-5月5日, 3時～5時, 3시~5시: a dash after a date's or a clock's word starts the range's
        # second end (a minus sign would be followed by a number alone: 今天-3℃).
        ends = "年月日号號天周時时点點分秒半년월일시분초"
        rest = rf"(?P<rest>\d+\s?[{ends}](?:\s?\d+\s?[{ends}])*)"
        through = re.compile(rf"(?=\s?[-–~〜～])(?<=[{ends}])\s?[-–~〜～]\s?{rest}")
        # (010) 1234-5678: an area code in brackets
        bracketed = re.compile(r"\((?P<a>0\d{1,3})\)\s?(?P<b>\d{3,4})[- ]?(?P<c>\d{4})(?![\d-])")
        # a code of 3 to 8 digits after the word that names it (a longer one is a phone number)
        code = re.compile(rf"(?:{self.code_cues})\D{{0,3}}?(?<![\d.,-])(?P<d>\d{{3,8}})(?![\d.,-])")
        cold = re.compile(rf"(?=[-−])(?<![A-Za-z\d.,])[-−](?P<w>\d+)(?:\.(?P<f>\d+))?\s?{self.degree}")  # -3度
        return [
            Rule("measure", cold, lambda m: self.join([self.below_zero, self.count(Num(False, m["w"], m["f"])),
                                                       self.degree]), 30),
            Rule("phone", domestic, lambda m: self.phone(re.findall(r"\d+", m.group()), False), 12),
            Rule("time", hours, lambda m: self.range(self.time(int(m["h1"]), int(m["m1"]), None, None),
                                                     self.time(int(m["h2"]), int(m["m2"]), None, None)), 14),
            Rule("number", ratio, self._ratio, 16),
            Rule("range", through, self._through, 35),
            Rule("phone", bracketed, lambda m: self.phone([m["a"], m["b"], m["c"]], False), 12),
            *([Rule("number", code, self._code, 20)] if self.code_cues else []),
        ]

    def _ratio(self, m: re.Match[str]) -> str:
        a, b = int(m["a"]), int(m["b"])
        if len(m["b"]) == 2 and a == 24 and b == 0:  # 24:00, the day's end: a clock
            return self.time(a, b, None, None)
        return self.join([self.cardinal(a), self.words["ratio"], self.cardinal(b)])

    def _code(self, m: re.Match[str]) -> str:
        """The words before the code as written, the code in the digits' phone names."""
        return m.string[m.start():m.start("d")] + "".join(self.phone_digits[int(c)] for c in m["d"])

    def _through(self, m: re.Match[str]) -> str:
        """The range's word, then its second end said as the rules say it (all of them: the
        request's parts turned off are not known here, and a range's end is read as a whole)."""
        second = Spoken(m.string)
        say_plain(second, m.start("rest"), m.end("rest"), self, lambda kind: True)
        return self.range("", second.text)
