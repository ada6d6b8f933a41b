"""Chinese (Mandarin, simplified): numbers grouped by 万 and 亿 with 零 for a gap (一千零五,
一万零五百, 一亿零五), 十 without 一 only where a number starts (十五, 一百一十); 两 where Mandarin
counts: before 千, 万 and 亿 at a number's start (两千, 两万八千, 两亿) and for 2 before a measure word
or a unit (两个, 两人, 两公斤, 两点), 二 everywhere else (二十, 二百, 一千二百, 第二, 二月, 二点五).

Written here, not by a library: num2words 0.5.14 has no Chinese.

Choices where usage varies (the most common reading, tested):
- years digit by digit: 2026年 -> 二零二六年 (a round thousand, 1000年, is a duration: 一千年);
- the percent first: 15% -> 百分之十五; a range 10-20% -> 百分之十到百分之二十;
- temperatures below zero: -3.5℃ -> 零下三点五摄氏度; other negatives 负;
- money in the written register: 2350元 -> 两千三百五十元, ¥12.50 -> 十二点五元, $5 -> 五美元;
- phone numbers with 幺 for 1 (the reading of broadcasts, service lines and dispatch, which keeps
  1 from sounding like 7): 13812345678 -> 幺三八，幺二三四，五六七八; so are codes after the word
  that names them and room numbers (验证码：123456 -> 验证码：幺二三四五六, 201室 -> 二零幺室);
- clocks 24-hour as written: 19:30 -> 十九点三十分, 7:05 -> 七点零五分, 2:00 -> 两点;
- Latin letters said by their names, apart: USB -> U S B; an address's marks: 点, 斜杠, at.
"""

from __future__ import annotations

import re

from hearth.text.normalize.language import Num, Rule, word_table
from hearth.text.normalize.languages.east_asian import EastAsian

__all__ = ["Chinese"]

_DIGITS = "零一二三四五六七八九"

# Measure words after which 2 is 两 (两个, 两次, 两公斤); a label keeps 二 (二月, 二号, 二楼, 二年级).
_MEASURE_WORDS = (
    "个", "人", "位", "名", "次", "回", "遍", "件", "本", "只", "条", "张", "台", "辆", "架", "部", "块", "元",
    "角", "毛", "天", "周", "星期", "年(?!级)", "岁", "倍", "种", "样", "家", "间", "套", "份", "杯", "瓶", "碗",
    "斤", "吨", "米", "公里", "千米", "公斤", "千克", "克", "升", "毫升", "度", "双", "对", "把", "支", "根", "颗",
    "棵", "头", "场", "项", "首", "篇", "句", "节", "小时", "分钟", "秒钟", "点", "千", "万", "亿", "美元", "欧元",
    "英镑", "日元", "港元", "韩元", "分", "秒", "届", "座", "道", "包", "盒", "箱", "袋", "片", "组", "户", "口",
    "门",
)


def _group(n: int, first: bool) -> str:
    """1..9999: 零 once for a run of zeros between digits; 十 alone at the number's start."""
    out, gap, started = [], False, False
    for value, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d = n // value % 10
        if d == 0:
            gap = started
            continue
        if gap:
            out.append("零")
            gap = False
        out.append(name if value == 10 and d == 1 and first and not started else _DIGITS[d] + name)
        started = True
    return "".join(out)


def _grouped(n: int, first: bool = True) -> str:
    """By 亿 and 万 (a 亿 of 亿 is 万亿): a lower part too small for its place starts with 零."""
    for size, unit in ((10**8, "亿"), (10**4, "万")):
        if n >= size:
            high, low = divmod(n, size)
            words = _grouped(high, first) + unit
            if low:
                words += ("零" if low < size // 10 else "") + _grouped(low, False)
            return words
    return _group(n, first)


class Chinese(EastAsian):
    code = "zh"
    name = "chinese"
    space_between_words = False
    below_zero = "零下"
    degree = "度"
    zero = "零"
    percent_before = True
    phone_digits = "零幺二三四五六七八九"
    phone_joint = "，"
    words = word_table("minus 负; point 点; to 到; percent 百分之; plus 加; and 和; ratio 比")
    marks = word_table(
        ". 点; @ at; / 斜杠; : 冒号; - 杠; _ 下划线; + 加; ? 问号; = 等于; & 和; # 井号; ~ 波浪号; % 百分号")
    symbols = word_table("& 和; + 加; = 等于; × 乘; ÷ 除以; ° 度")
    abbreviations = word_table(
        "TEL: 电话; Tel: 电话; FAX: 传真; Fax: 传真; PM2.5: P M二点五; PM10: P M十; e.g.: 例如; i.e.: 即; etc.: 等等; "
        "vs.: 对; vs: 对; VS: 对", ": ")
    currency_names = word_table(
        "USD 美元; EUR 欧元; GBP 英镑; JPY 日元; CNY 元; KRW 韩元; RUB 卢布; BRL 雷亚尔; CHF 瑞士法郎; INR 卢比; "
        "CAD 加元; AUD 澳元; MXN 墨西哥比索; SEK 瑞典克朗; PLN 兹罗提")
    # no K: in Chinese text 4K is a screen's resolution far more often than kelvins
    unit_names = word_table(
        "°C 摄氏度; °F 华氏度; km/h 公里每小时; mph 英里每小时; m/s 米每秒; kWh 千瓦时; MWh 兆瓦时; Wh 瓦时; kW 千瓦; "
        "MW 兆瓦; W 瓦; V 伏; mA 毫安; A 安; Hz 赫兹; kHz 千赫; MHz 兆赫; GHz 吉赫; km 公里; cm 厘米; mm 毫米; m 米; "
        "mi 英里; ft 英尺; in 英寸; kg 公斤; mg 毫克; g 克; t 吨; lb 磅; oz 盎司; l 升; L 升; ml 毫升; mL 毫升; "
        "hPa 百帕; mbar 毫巴; bar 巴; Pa 帕; dB 分贝; lx 勒克斯; µg/m³ 微克每立方米; m² 平方米; m³ 立方米; "
        "km² 平方公里; KB 千字节; kB 千字节; MB 兆字节; GB 吉字节; TB 太字节; ms 毫秒; s 秒; min 分钟; h 小时; "
        "ppm P P M; mAh 毫安时")
    code_cues = "代码|编号|号码|验证码|单号|尾号|账号|卡号|房间号|房号|邮编|工号|学号|密码|车次"

    def grouped(self, n: int) -> str:
        words = _grouped(n)
        return "两" + words[1:] if words[:2] in ("二千", "二万", "二亿") else words

    def count(self, num: Num) -> str:
        return "两" if num.is_integer and not num.negative and int(num.whole) == 2 else self.number(num)

    def ordinal(self, n: int) -> str:
        return "第" + self.cardinal(n)

    def digit_names(self) -> str:
        return _DIGITS

    def fraction(self, numerator: int, denominator: int) -> str:
        return f"{self.cardinal(denominator)}分之{self.cardinal(numerator)}"

    def percent(self, num: Num) -> str:
        said = "百分之" + self.number(Num(False, num.whole, num.fraction))
        return "负" + said if num.negative else said

    def year(self, year: int) -> str:
        return self.digits(str(year))

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        said = ("两" if hour == 2 else self.cardinal(hour)) + "点"
        if minute or second:
            said += ("零" if minute < 10 else "") + self.cardinal(minute) + "分"
        if second:
            said += ("零" if second < 10 else "") + self.cardinal(second) + "秒"
        if period == "am":
            return ("凌晨" if hour == 12 else "上午") + said
        if period == "pm":
            return ("中午" if hour == 12 else "下午") + said
        return said

    def extra_rules(self) -> list[Rule]:
        year = re.compile(r"(?=\d)(?<![A-Za-z\d.,])\d{4}(?=\s?年)")
        counted = re.compile(r"(?=\d)(?<![A-Za-z\d第])(?<!\d[.,])(?:(?P<a>\d+)\s?[-~到至]\s?)?(?P<n>\d+)(?![\d.,])"
                             rf"(?=\s?(?:{'|'.join(_MEASURE_WORDS)}))")
        clock = re.compile(r"(?=\d)(?<![\d.,:])(?P<h>[01]?\d|2[0-4])点(?P<m>[0-5]?\d)分(?:(?P<s>[0-5]?\d)秒)?")
        mobile = re.compile(r"(?=1)(?<![\d+-])1[3-9]\d(?P<sep>[- ]?)\d{4}(?P=sep)\d{4}(?![\d-])")
        room = re.compile(r"(?=\d)(?<![A-Za-z\d.,-])\d{3,4}(?=室|房间|号房)")  # 201室: 二零幺室, digit by digit
        landline = re.compile(r"(?=[048])(?<![\d+-])0\d{2,3}-\d{7,8}(?![\d-])|(?<![\d+-])[48]00-\d{3}-\d{4}(?![\d-])")
        return [
            *super().extra_rules(),
            Rule("date", year, self._year, 33),
            Rule("number", counted, self._counted, 34),
            Rule("time", clock, lambda m: self.time(int(m["h"]), int(m["m"]), int(m["s"]) if m["s"] else None,
                                                     None), 15),
            Rule("phone", mobile, lambda m: self._phone(m.group()), 12),
            Rule("number", room, lambda m: "".join(self.phone_digits[int(c)] for c in m.group()), 33),
            Rule("phone", landline, lambda m: self.phone(re.findall(r"\d+", m.group()), False), 12),
        ]

    def _year(self, m: re.Match[str]) -> str | None:
        year = int(m.group())
        return None if year % 1000 == 0 and year != 2000 else self.year(year)

    def _counted(self, m: re.Match[str]) -> str | None:
        if len(m["n"]) == 4 and m.string[m.end():m.end() + 2].strip().startswith("年"):
            return None  # years, 2020-2024年: the range's rule says them digit by digit
        second = self.count(Num(False, m["n"]))
        return self.range(self.count(Num(False, m["a"])), second) if m["a"] else second

    def _phone(self, text: str) -> str:
        digits = re.sub(r"\D", "", text)
        return self.phone([digits[:3], digits[3:7], digits[7:]], False)
