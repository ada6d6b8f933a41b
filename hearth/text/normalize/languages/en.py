"""English: American conventions (month before day in numeric dates, 12-hour clocks with AM and
PM, no "and" inside numbers: "two thousand three hundred fifty"), years in pairs ("nineteen
ninety-nine", "twenty twenty-six", "two thousand nine"), decimals digit by digit ("point one
four"). Written here, not by a library: num2words writes commas into numbers ("two thousand,
three hundred and fifty", a pause the model then makes)."""

from __future__ import annotations

import re

from hearth.text.normalize.language import Language, Rule, currency_nouns, nouns, word_set, word_table

__all__ = ["English"]

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = [(10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand")]
_ORDINAL_ENDINGS = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
                    "nine": "ninth", "twelve": "twelfth"}
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_MONTH_ABBREVIATIONS = {m[:3]: i + 1 for i, m in enumerate(_MONTHS)} | {"Sept": 9}


def _street(m: re.Match[str]) -> str | None:
    """"St." after a name is a street ("Main St."), before one a saint ("St. Louis")."""
    return "Street" if re.search(r"\b[A-Z][a-z]+ $", m.string[:m.start()]) else None


class English(Language):
    code = "en"
    name = "english"
    decimal_mark = "."
    group_marks = ","
    date_order = "MDY"
    hour_12 = True
    words = word_table(
        "minus minus; point point; to to; percent percent; and and; plus plus; over over; thousand thousand; "
        "million million; billion billion")
    marks = word_table(
        ". dot; @ at; / slash; : colon; - dash; _ underscore; ? question mark; = equals; # hash; ~ tilde")
    symbols = word_table("& and; + plus; = equals; @ at; # number; ~ about; × times; ÷ divided by; ° degrees")
    abbreviations = word_table(
        "Dr.: Doctor; Mr.: Mister; Mrs.: Missus; Ms.: Miz; Prof.: Professor; Jr.: Junior; Sr.: Senior; Mt.: Mount; "
        "Ave.: Avenue; Blvd.: Boulevard; Rd.: Road; Apt.: apartment; e.g.: for example; i.e.: that is; "
        "etc.: et cetera; vs.: versus; approx.: approximately; min.: minutes; max.: maximum; dept.: department; "
        "est.: established; Inc.: Incorporated; Ltd.: Limited; Co.: Company; Corp.: Corporation; Fig.: Figure; "
        "No.: Number; a.m.: A M; p.m.: P M", ": ")
    spelled_as_words = word_set(
        "NASA NATO UNESCO UNICEF FIFA UEFA OPEC LASER RADAR SCUBA AIDS ASAP GIF JPEG PIN RAM ROM LAN WAN SIM CAPTCHA "
        "COVID IKEA LEGO NASDAQ ZIP WIFI SONAR OK AM PM I A ID")
    month_words = (*_MONTHS, *_MONTH_ABBREVIATIONS)
    units = nouns(
        "°C degree(s) Celsius; °F degree(s) Fahrenheit; K kelvin(s); km/h kilometer(s) per hour; mph mile(s) per hour; "
        "m/s meter(s) per second; kWh kilowatt hour(s); MWh megawatt hour(s); Wh watt hour(s); kW kilowatt(s); "
        "MW megawatt(s); W watt(s); V volt(s); mA milliamp(s); A amp(s); Hz hertz; kHz kilohertz; MHz megahertz; "
        "GHz gigahertz; km kilometer(s); cm centimeter(s); mm millimeter(s); m meter(s); mi mile(s); ft (foot|feet); "
        "kg kilogram(s); mg milligram(s); g gram(s); t tonne(s); lb pound(s); oz ounce(s); l liter(s); L liter(s); "
        "ml milliliter(s); mL milliliter(s); hPa hectopascal(s); mbar millibar(s); bar bar(s); Pa pascal(s); "
        "dB decibel(s); lx lux; ppm part(s) per million; µg/m³ microgram(s) per cubic meter; m² square meter(s); "
        "m³ cubic meter(s); km² square kilometer(s); kB kilobyte(s); KB kilobyte(s); MB megabyte(s); GB gigabyte(s); "
        "TB terabyte(s); ms millisecond(s); s second(s); min minute(s); h hour(s)")
    currencies = currency_nouns(
        "USD dollar(s) / cent(s); EUR euro(s) / cent(s); GBP pound(s) / (penny|pence); JPY yen; CNY yuan; KRW won; "
        "RUB ruble(s) / kopek(s); BRL (real|reais) / centavo(s); CHF Swiss franc(s) / centime(s); "
        "INR rupee(s) / pais(a|e); CAD Canadian dollar(s) / cent(s); AUD Australian dollar(s) / cent(s); "
        "MXN peso(s) / centavo(s); SEK kron(a|or) / öre; PLN zloty(s) / grosz(y)")
    year_cues = ("in", "since", "from", "until", "till", "by", "year", "circa", "around", "before", "after", "of",
                 "In", "Since", "From", "Until", "By", "Year", "Circa", "Around", "Before", "After")

    def natural(self, n: int) -> str:
        if n < 20:
            return _ONES[n]
        if n < 100:
            return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
        if n < 1000:
            rest = n % 100
            return f"{_ONES[n // 100]} hundred" + (f" {self.cardinal(rest)}" if rest else "")
        for size, word in _SCALES:
            if n >= size:
                rest = n % size
                return f"{self.cardinal(n // size)} {word}" + (f" {self.cardinal(rest)}" if rest else "")
        raise AssertionError(n)

    def ordinal(self, n: int) -> str:
        words = self.cardinal(n)
        head, sep, last = words.rpartition(" ") if "-" not in words.rsplit(" ", 1)[-1] else words.rpartition("-")
        if last in _ORDINAL_ENDINGS:
            last = _ORDINAL_ENDINGS[last]
        elif last.endswith("y"):
            last = last[:-1] + "ieth"
        else:
            last += "th"
        return head + sep + last

    def fraction(self, numerator: int, denominator: int) -> str:
        if denominator == 2:
            name = "half" if numerator == 1 else "halves"
        elif denominator == 4:
            name = "quarter" if numerator == 1 else "quarters"
        else:
            name = self.ordinal(denominator) + ("" if numerator == 1 else "s")
        return f"{self.cardinal(numerator)} {name}"

    def year(self, year: int) -> str:
        if 2000 <= year < 2010 or year % 1000 == 0:
            return self.cardinal(year)
        high, low = divmod(year, 100)
        if low == 0:
            return f"{self.cardinal(high)} hundred"
        return f"{self.cardinal(high)} {'oh ' + _ONES[low] if low < 10 else self.cardinal(low)}"

    def date(self, year: int | None, month: int | None, day: int | None) -> str:
        month_name = _MONTHS[month - 1] if month else ""
        said = month_name + (f" {self.ordinal(day)}" if day else "")
        if year is not None:
            said += ("," if day else "") + f" {self.year(year)}"
        return said.strip()

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        if period:
            words = self.cardinal(hour)
            if minute:
                words += f" {'oh ' + _ONES[minute] if minute < 10 else self.cardinal(minute)}"
            words += " A M" if period == "am" else " P M"
        elif minute == 0 and second is None:
            words = f"{self.cardinal(hour)} o'clock" if 1 <= hour <= 12 else (
                "midnight" if hour == 0 else f"{self.cardinal(hour)} hundred")
        else:
            words = ("zero" if hour == 0 else self.cardinal(hour))
            words += f" {'oh ' + _ONES[minute] if minute < 10 else self.cardinal(minute)}"
        if second:
            words += f" and {self.cardinal(second)} second" + ("" if second == 1 else "s")
        return words

    def letters(self, text: str) -> str:
        return " ".join(c.upper() for c in text if c.isalpha())

    def extra_rules(self) -> list[Rule]:
        months = "|".join([*_MONTHS, *(f"{m}\\.?" for m in _MONTH_ABBREVIATIONS)])
        month_day = re.compile(rf"\b(?P<mon>{months}) (?P<d>[0-3]?\d)(?:st|nd|rd|th)?(?:,? (?P<y>\d{{4}}))?(?![\w])")
        day_month = re.compile(rf"\b(?P<d>[0-3]?\d)(?:st|nd|rd|th)? (?:of )?(?P<mon>{months})(?:,? (?P<y>\d{{4}}))?\b")
        ordinal = re.compile(r"(?<![\w.,])(?P<n>\d+)(?P<suffix>st|nd|rd|th)\b")
        saint = re.compile(r"\bSt\.(?= [A-Z])")
        street = re.compile(r"\bSt\.")  # after a name ("Main St."): read with what stands before it
        return [
            Rule("date", month_day, lambda m: self._named_date(m, day_first=False), 10),
            Rule("date", day_month, lambda m: self._named_date(m, day_first=True), 10),
            Rule("ordinal", ordinal, self._ordinal, 25),
            Rule("abbreviation", saint, lambda m: "Saint", 70),
            Rule("abbreviation", street, _street, 69),
        ]

    def _named_date(self, m: re.Match[str], day_first: bool) -> str | None:
        name = m.group("mon").rstrip(".")
        month = _MONTHS.index(name) + 1 if name in _MONTHS else _MONTH_ABBREVIATIONS[name]
        day = int(m.group("d"))
        if not 1 <= day <= 31:
            return None
        year = int(m.group("y")) if m.group("y") else None
        if day_first:
            return f"the {self.ordinal(day)} of {_MONTHS[month - 1]}" + (f" {self.year(year)}" if year else "")
        return self.date(year, month, day)

    def _ordinal(self, m: re.Match[str]) -> str | None:
        n = int(m.group("n"))
        expected = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
        return self.ordinal(n) if m.group("suffix") == expected else None
