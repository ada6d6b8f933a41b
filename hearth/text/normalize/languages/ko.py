"""Korean: Sino-Korean numbers (이천삼백오십), grouped by 만, 억 and 조 with a space after each group
(이만 팔천, 천이백삼십사만 오천육백칠십팔), no 일 before 십, 백, 천 or a leading 만 (만, 천, 백) but 일 before
억 and 조 (일억); native numbers where Korean counts things (1-99: 세 명, 한 개, 스무 살, 두 시간) and
for the hour (일곱 시, 열아홉 시), Sino-Korean for minutes, seconds, dates, money and measures.

num2words 0.5.14 has Korean; it is not used: it writes "1번째" for an ordinal of 1 (첫 번째), says
100010000 "일억 만" (일억 일만), has no native numbers for counters and refuses decimals of money.

Choices where usage varies (the most common reading, tested):
- a counter written after the number is spaced, as the spelling standard writes it: 3명 -> 세 명,
  2350원 -> 이천삼백오십 원, 30분 -> 삼십 분; a month is one word (십이월, and 6월 유월, 10월 시월);
- 번 counts times (3번 -> 세 번) unless a label's noun follows (2번 출구 -> 이 번 출구); 대 counts
  machines (3대 -> 세 대) but a multiple of ten is an age group (30대 -> 삼십 대); 분 is minutes;
- ranges with 에서, a counter said with each number: 10~20 -> 십에서 이십, 3~5명 -> 세 명에서 다섯 명;
- temperatures below zero 영하 (-3.5℃ -> 영하 삼 점 오 도), other negatives 마이너스;
- zero 영, and 공 in phone numbers and in codes named by the word before them (010-1234-5678 ->
  공일공 일이삼사 오육칠팔, 인증번호는 123456 -> 인증번호는 일이삼사오육);
- Latin letters by their Korean names (USB -> 유에스비); an address: 골뱅이 for @, 닷 for the dot.
"""

from __future__ import annotations

import re

from hearth.text.normalize.language import Num, Rule, word_table
from hearth.text.normalize.languages.east_asian import EastAsian

__all__ = ["Korean"]

_SINO = "영일이삼사오육칠팔구"
_ONES = ["", "하나", "둘", "셋", "넷", "다섯", "여섯", "일곱", "여덟", "아홉"]
_TENS = ["", "열", "스물", "서른", "마흔", "쉰", "예순", "일흔", "여든", "아흔"]
_BEFORE_NOUN = {"하나": "한", "둘": "두", "셋": "세", "넷": "네", "스물": "스무"}
_MONTHS = ["일월", "이월", "삼월", "사월", "오월", "유월", "칠월", "팔월", "구월", "시월", "십일월", "십이월"]

# Counters said with native numbers, and those with Sino-Korean ones (each spaced from its number).
_NATIVE = ("번째", "사람", "시간", "마리", "군데", "가지", "켤레", "그루", "송이", "자루", "명", "개(?!월)", "살",
           "권", "잔", "병", "대", "번(?!지|호)", "장", "채", "곳", "달(?!러)", "벌", "끼", "배", "시(?!간)")
_SINO_COUNTERS = ("개월", "학년", "인분", "번지", "페이지", "년", "월", "일", "분", "초", "층", "호", "회", "주",
                  "세", "차", "위", "등", "쪽", "도", "점", "박", "평", "동(?!안)")
_NATIVE_WORDS = frozenset(c.split("(")[0] for c in _NATIVE)
_LABELS = ("출구", "버스", "문제", "게이트", "채널", "트랙", "좌석", "자리", "테이블", "승강장", "플랫폼", "홀", "타자",
           "선수", "항목")

_LETTERS = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", (
    "에이", "비", "씨", "디", "이", "에프", "지", "에이치", "아이", "제이", "케이", "엘", "엠", "엔", "오", "피", "큐",
    "알", "에스", "티", "유", "브이", "더블유", "엑스", "와이", "제트"), strict=True))


def _group(n: int) -> str:
    """1..9999 in Sino-Korean: 천, 백, 십 without 일."""
    out = []
    for value, name in ((1000, "천"), (100, "백"), (10, "십")):
        d = n // value % 10
        if d:
            out.append(("" if d == 1 else _SINO[d]) + name)
    return "".join(out) + (_SINO[n % 10] if n % 10 else "")


def native(n: int, before_noun: bool = False) -> str:
    """1..99 in native Korean; `before_noun`: the forms a counter takes (한, 두, 세, 네, 스무)."""
    tens, ones = _TENS[n // 10], _ONES[n % 10]
    if before_noun:
        tens, ones = (tens, _BEFORE_NOUN.get(ones, ones)) if ones else (_BEFORE_NOUN.get(tens, tens), ones)
    return tens + ones


class Korean(EastAsian):
    code = "ko"
    name = "korean"
    below_zero = "영하"
    degree = "도"
    zero = "영"
    phone_digits = "공일이삼사오육칠팔구"
    words = word_table("minus 마이너스; point 점; to 에서; percent 퍼센트; plus 플러스; and 그리고; ratio 대")
    marks = word_table(
        ". 닷; @ 골뱅이; / 슬래시; : 콜론; - 하이픈; _ 언더바; + 플러스; ? 물음표; = 이퀄; & 앤드; # 샵; ~ 물결; "
        "% 퍼센트")
    symbols = word_table("& 앤드; + 플러스; = 이퀄; × 곱하기; ÷ 나누기; ° 도")
    abbreviations = word_table(
        "TEL: 전화; Tel: 전화; FAX: 팩스; Fax: 팩스; PM2.5: 피엠 이 점 오; PM10: 피엠 십; (주): 주식회사; "
        "㈜: 주식회사; e.g.: 예를 들어; etc.: 등; vs.: 대; vs: 대; VS: 대", ": ")
    currency_names = word_table(
        "USD 달러; EUR 유로; GBP 파운드; JPY 엔; CNY 위안; KRW 원; RUB 루블; BRL 헤알; CHF 스위스 프랑; INR 루피; "
        "CAD 캐나다 달러; AUD 호주 달러; MXN 멕시코 페소; SEK 스웨덴 크로나; PLN 즐로티")
    # no K: 4K and 8K are screens' resolutions far more often than kelvins
    unit_names = word_table(
        "°C 도; °F 화씨 {} 도; km/h 시속 {} 킬로미터; mph 시속 {} 마일; m/s 초속 {} 미터; kWh 킬로와트시; "
        "MWh 메가와트시; Wh 와트시; kW 킬로와트; MW 메가와트; W 와트; V 볼트; mA 밀리암페어; A 암페어; Hz 헤르츠; "
        "kHz 킬로헤르츠; MHz 메가헤르츠; GHz 기가헤르츠; km 킬로미터; cm 센티미터; mm 밀리미터; m 미터; mi 마일; "
        "ft 피트; in 인치; kg 킬로그램; mg 밀리그램; g 그램; t 톤; lb 파운드; oz 온스; l 리터; L 리터; ml 밀리리터; "
        "mL 밀리리터; hPa 헥토파스칼; mbar 밀리바; bar 바; Pa 파스칼; dB 데시벨; lx 럭스; ppm 피피엠; "
        "µg/m³ 마이크로그램 퍼 세제곱미터; m² 제곱미터; m³ 세제곱미터; km² 제곱킬로미터; KB 킬로바이트; kB 킬로바이트; "
        "MB 메가바이트; GB 기가바이트; TB 테라바이트; ms 밀리초; s 초; min 분; h 시간; mAh 밀리암페어시")
    code_cues = "번호|코드|비밀번호|호실"

    def grouped(self, n: int) -> str:
        parts: list[str] = []
        for size, unit in ((10**12, "조"), (10**8, "억"), (10**4, "만")):
            group = n // size % 10000
            if group:
                parts.append(("" if group == 1 and unit == "만" and not parts else _group(group)) + unit)
        if n % 10000:
            parts.append(_group(n % 10000))
        return " ".join(parts)

    def ordinal(self, n: int) -> str:
        """셋째, 열한째; from 100 on 제 and the Sino-Korean number (제백)."""
        if not 1 <= n <= 99:
            return "제" + self.cardinal(n)
        if n in (1, 2):
            return ("첫", "둘")[n - 1] + "째"
        return native(n, before_noun=n > 10 and n % 10 in (1, 2) or n == 20) + "째"

    def with_counter(self, n: int, counter: str) -> str:
        """A number and its counter: native from 1 to 99 where the counter takes them."""
        if counter == "번째" and n == 1:
            return "첫 번째"
        if counter not in _NATIVE_WORDS or not 1 <= n <= 99:
            return f"{self.cardinal(n)} {counter}"
        return f"{native(n, before_noun=True)} {counter}"

    def digits(self, text: str) -> str:
        return "".join(_SINO[int(c)] for c in text if c.isdigit())

    def fraction(self, numerator: int, denominator: int) -> str:
        return f"{self.cardinal(denominator)}분의 {self.cardinal(numerator)}"

    def range(self, first: str, second: str) -> str:
        return f"{first}에서 {second}"

    def date(self, year: int | None, month: int | None, day: int | None) -> str:
        parts = [f"{self.year(year)} 년"] if year is not None else []
        parts += [_MONTHS[month - 1]] if month else []
        return " ".join(parts + ([f"{self.cardinal(day)} 일"] if day else []))

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        parts = [{"am": "오전", "pm": "오후"}.get(period or "", ""), self.with_counter(hour, "시") if hour else "영 시"]
        if minute or second:
            parts.append(f"{self.cardinal(minute)} 분")
        if second:
            parts.append(f"{self.cardinal(second)} 초")
        return " ".join(p for p in parts if p)

    def measure(self, num: Num, unit: str) -> str:
        if unit == "h" and num.is_integer and not num.negative and 1 <= int(num.whole) <= 99:
            return self.with_counter(int(num.whole), "시간")
        return super().measure(num, unit)

    def letters(self, text: str) -> str:
        return "".join(_LETTERS.get(c.upper(), "") if c.isalpha() else self.digits(c) if c.isdigit() else c
                       for c in text if not c.isspace())

    def extra_rules(self) -> list[Rule]:
        start = r"(?=\d)(?<![A-Za-z\d])(?<!\d[.,])"  # not inside a word or a number
        names = sorted((*_NATIVE, *_SINO_COUNTERS), key=lambda c: len(c.split("(")[0]), reverse=True)
        number = r"(?P<n>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<f>\d+))?(?![\d.,])"
        counted = re.compile(rf"{start}(?:(?P<a>\d+)\s?[-~]\s?)?{number}\s?(?P<c>{'|'.join(names)})")
        clock = re.compile(rf"{start}(?P<h>[01]?\d|2[0-4])시\s?(?P<m>[0-5]?\d)분(?:\s?(?P<s>[0-5]?\d)초)?")
        date = re.compile(rf"{start}(?P<y>\d{{4}})년\s?(?P<m>\d{{1,2}})월(?:\s?(?P<d>\d{{1,2}})일)?"
                          rf"|{start}(?P<y2>\d{{4}})\.\s(?P<m2>\d{{1,2}})\.\s(?P<d2>\d{{1,2}})(?!\d)")
        scaled = re.compile(rf"{start}(?P<n>\d+(?:\.\d+)?)(?P<u>[만억조천백])")
        service = re.compile(r"(?=1)(?<![\d+-])1[5-9]\d{2}-\d{4}(?![\d-])")  # 1588-1234: a company's number
        point = re.compile(rf"{start}(?P<w>\d+)(?:\.(?P<f>\d+))?%p(?![A-Za-z])")  # percentage points
        return [
            *super().extra_rules(),
            Rule("number", counted, self._counted, 34),
            Rule("time", clock, lambda m: self.time(int(m["h"]), int(m["m"]), int(m["s"]) if m["s"] else None,
                                                     None), 15),
            Rule("date", date, self._date, 10),
            Rule("number", scaled, self._scaled, 36),
            Rule("phone", service, lambda m: self.phone(m.group().split("-"), False), 12),
            Rule("measure", point, lambda m: self.percent(Num(False, m["w"], m["f"])) + "포인트", 30),
            Rule("ordinal", re.compile(rf"{start}(?P<n>\d+)째"), lambda m: self.ordinal(int(m["n"])), 25),
        ]

    def _counted(self, m: re.Match[str]) -> str | None:
        counter, n = m["c"], int(m["n"].replace(",", ""))
        if m["f"]:  # 4.5점, 1.5배: a decimal is Sino-Korean
            return None if counter == "월" or m["a"] else f"{self.number(Num(False, str(n), m['f']))} {counter}"
        if counter == "월":
            if not 1 <= n <= 12 or (m["a"] and not 1 <= int(m["a"]) <= 12):
                return None
            return self.range(_MONTHS[int(m["a"]) - 1], _MONTHS[n - 1]) if m["a"] else _MONTHS[n - 1]
        sino = (counter == "대" and n % 10 == 0  # 30대: people in their thirties
                or counter == "번" and re.match(rf"\s?(?:{'|'.join(_LABELS)})", m.string[m.end():]) is not None)
        say = (lambda k: f"{self.cardinal(k)} {counter}") if sino else (lambda k: self.with_counter(k, counter))
        return self.range(say(int(m["a"])), say(n)) if m["a"] else say(n)

    def _date(self, m: re.Match[str]) -> str | None:
        year, month, day = m["y"] or m["y2"], m["m"] or m["m2"], m["d"] or m["d2"]
        if not 1 <= int(month) <= 12 or (day and not 1 <= int(day) <= 31):
            return None
        return self.date(int(year), int(month), int(day) if day else None)

    def _scaled(self, m: re.Match[str]) -> str:
        """"1만", "3.5억": the number and its unit; 1 is not said before a leading 만, 천 or 백."""
        whole, _, fraction = m["n"].partition(".")
        unit = m["u"]
        if m["n"] == "1" and unit in "만천백" and not re.search(r"[억조]\s?$", m.string[:m.start()]):
            return unit
        return self.number(Num(False, whole, fraction or None)) + unit
