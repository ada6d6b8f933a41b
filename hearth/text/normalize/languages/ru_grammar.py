"""Russian numerals and the nouns they count: cardinals and ordinals in the six cases and three
genders, decimals as fractions ("двадцать одна целая пять десятых"), and the form a number asks
of its noun (1 градус, 2 градуса, 5 градусов; 1,5 градуса; от 21 градуса), with the tables of the
units, currencies and months the Russian rules say.

num2words (0.5.14) gives the cardinals and ordinals in every case and gender; fixed here: it puts
the gender on the first group of a number ("одна миллион", "одна миллион одна тысяча": only the
last group agrees with the noun), says "одна тысяча" as a cheque does (speech says "тысяча"), and
declines the accusative as for living things ("двадцать двух" градусов: "двадцать два"), and says
"от ноля" where speech says "от нуля".
Decimals are written here: num2words' own reading of 21.5 is right but ignores the case and reads
long decimals as fractions of a hundred thousand; here up to three decimals are a fraction (as
schools, news and forecasts say them), longer ones "запятая" and the digits.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from num2words import CONVERTER_CLASSES

from hearth.text.normalize.language import Num

__all__ = ["BEFORE", "CURRENCIES", "CYRILLIC_UNITS", "DOT", "MONTHS", "NEXT_WORD", "PREPOSITIONS", "SCALES", "UNITS",
           "Forms", "agreeing", "cardinal", "case_before", "counted", "decimal", "digit_led", "digits", "noun_form",
           "ordinal", "preposition"]

_RU = CONVERTER_CLASSES["ru"]
CASES = "ngdaip"  # nominative, genitive, dative, accusative, instrumental, prepositional
_DIGITS = ["ноль", "один", "два", "три", "четыре", "пять", "шесть", "семь", "восемь", "девять"]


@dataclass(frozen=True)
class Forms:
    """A noun as a number asks for it: `one` (1, 21), `few` (2-4, 22), `many` (5-20, 25, and after
    every number in the genitive but those ending in one), its `gender`, the genitive singular where
    it differs from `few` (adjectives: "квадратных метра" but "квадратного метра"), and the
    accusative singular where it differs from `one` (feminine: "минуту")."""

    one: str
    few: str
    many: str
    gender: str = "m"
    genitive: str = ""
    accusative: str = ""


def _f(one: str, few: str, many: str, tail: str = "", gender: str = "m", genitive: str = "") -> Forms:
    """Forms with a tail said after each ("градус" + " Цельсия"); a feminine's accusative by its
    first word (миля -> милю, минута -> минуту)."""
    accusative = ""
    if gender == "f":
        head, _, rest = one.partition(" ")
        head = head[:-1] + {"а": "у", "я": "ю"}[head[-1]] if head[-1] in "ая" else head
        accusative = f"{head} {rest}".strip()
    return Forms(one + tail, few + tail, many + tail, gender, genitive + tail if genitive else "",
                 accusative + tail if accusative else "")


_CELSIUS = _f("градус", "градуса", "градусов", " Цельсия")
UNITS: dict[str, Forms] = {
    "°C": _CELSIUS, "°F": _f("градус", "градуса", "градусов", " Фаренгейта"),
    "K": _f("кельвин", "кельвина", "кельвинов"), "km/h": _f("километр", "километра", "километров", " в час"),
    "mph": _f("миля", "мили", "миль", " в час", "f"), "m/s": _f("метр", "метра", "метров", " в секунду"),
    "kWh": _f("киловатт-час", "киловатт-часа", "киловатт-часов"),
    "MWh": _f("мегаватт-час", "мегаватт-часа", "мегаватт-часов"), "Wh": _f("ватт-час", "ватт-часа", "ватт-часов"),
    "kW": _f("киловатт", "киловатта", "киловатт"), "MW": _f("мегаватт", "мегаватта", "мегаватт"),
    "W": _f("ватт", "ватта", "ватт"), "V": _f("вольт", "вольта", "вольт"),
    "mA": _f("миллиампер", "миллиампера", "миллиампер"), "A": _f("ампер", "ампера", "ампер"),
    "Hz": _f("герц", "герца", "герц"), "kHz": _f("килогерц", "килогерца", "килогерц"),
    "MHz": _f("мегагерц", "мегагерца", "мегагерц"), "GHz": _f("гигагерц", "гигагерца", "гигагерц"),
    "km": _f("километр", "километра", "километров"), "cm": _f("сантиметр", "сантиметра", "сантиметров"),
    "mm": _f("миллиметр", "миллиметра", "миллиметров"), "m": _f("метр", "метра", "метров"),
    "mi": _f("миля", "мили", "миль", "", "f"), "ft": _f("фут", "фута", "футов"), "in": _f("дюйм", "дюйма", "дюймов"),
    "kg": _f("килограмм", "килограмма", "килограммов"), "mg": _f("миллиграмм", "миллиграмма", "миллиграммов"),
    "g": _f("грамм", "грамма", "граммов"), "t": _f("тонна", "тонны", "тонн", "", "f"),
    "lb": _f("фунт", "фунта", "фунтов"), "oz": _f("унция", "унции", "унций", "", "f"),
    "l": _f("литр", "литра", "литров"), "L": _f("литр", "литра", "литров"),
    "ml": _f("миллилитр", "миллилитра", "миллилитров"), "mL": _f("миллилитр", "миллилитра", "миллилитров"),
    "hPa": _f("гектопаскаль", "гектопаскаля", "гектопаскалей"), "mbar": _f("миллибар", "миллибара", "миллибар"),
    "bar": _f("бар", "бара", "бар"), "Pa": _f("паскаль", "паскаля", "паскалей"),
    "dB": _f("децибел", "децибела", "децибел"), "lx": _f("люкс", "люкса", "люкс"),
    "ppm": Forms("миллионная доля", "миллионные доли", "миллионных долей", "f", "миллионной доли", "миллионную долю"),
    "µg/m³": _f("микрограмм", "микрограмма", "микрограммов", " на кубический метр"),
    "m²": _f("квадратный метр", "квадратных метра", "квадратных метров", "", "m", "квадратного метра"),
    "m³": _f("кубический метр", "кубических метра", "кубических метров", "", "m", "кубического метра"),
    "km²": _f("квадратный километр", "квадратных километра", "квадратных километров", "", "m",
              "квадратного километра"),
    "kB": _f("килобайт", "килобайта", "килобайт"), "KB": _f("килобайт", "килобайта", "килобайт"),
    "MB": _f("мегабайт", "мегабайта", "мегабайт"), "GB": _f("гигабайт", "гигабайта", "гигабайт"),
    "TB": _f("терабайт", "терабайта", "терабайт"), "ms": _f("миллисекунда", "миллисекунды", "миллисекунд", "", "f"),
    "s": _f("секунда", "секунды", "секунд", "", "f"), "min": _f("минута", "минуты", "минут", "", "f"),
    "h": _f("час", "часа", "часов"), "%": _f("процент", "процента", "процентов"),
    "mmHg": _f("миллиметр", "миллиметра", "миллиметров", " ртутного столба"),  # Russian's alone (мм рт. ст.)
}
# The units as Russian writes them, by the symbol of UNITS each is.
CYRILLIC_UNITS: dict[str, str] = {
    "°С": "°C", "км/ч": "km/h", "м/с": "m/s", "кВт·ч": "kWh", "кВтч": "kWh", "кВт*ч": "kWh", "МВт·ч": "MWh",
    "кВт": "kW", "МВт": "MW", "Вт": "W", "В": "V", "мА": "mA", "А": "A", "Гц": "Hz", "кГц": "kHz", "МГц": "MHz",
    "ГГц": "GHz", "км": "km", "см": "cm", "мм": "mm", "м": "m", "кг": "kg", "мг": "mg", "г": "g", "т": "t",
    "л": "l", "мл": "ml", "гПа": "hPa", "Па": "Pa", "мбар": "mbar", "бар": "bar", "дБ": "dB", "лк": "lx",
    "мкг/м³": "µg/m³", "м²": "m²", "м³": "m³", "км²": "km²", "кв. м": "m²", "куб. м": "m³", "Кб": "KB", "КБ": "KB",
    "Мб": "MB", "МБ": "MB", "Гб": "GB", "ГБ": "GB", "Тб": "TB", "ТБ": "TB", "мс": "ms", "сек": "s", "с": "s",
    "мин": "min", "ч": "h", "мм рт. ст.": "mmHg", "мм рт.ст.": "mmHg",
}
# (the unit, the cent), by ISO code.
CURRENCIES: dict[str, tuple[Forms, Forms | None]] = {
    "RUB": (_f("рубль", "рубля", "рублей"), _f("копейка", "копейки", "копеек", "", "f")),
    "USD": (_f("доллар", "доллара", "долларов"), _f("цент", "цента", "центов")),
    "EUR": (_f("евро", "евро", "евро"), _f("цент", "цента", "центов")),
    "GBP": (_f("фунт", "фунта", "фунтов"), _f("пенс", "пенса", "пенсов")),
    "JPY": (_f("иена", "иены", "иен", "", "f"), None), "CNY": (_f("юань", "юаня", "юаней"), None),
    "KRW": (_f("вона", "воны", "вон", "", "f"), None),
    "BRL": (_f("реал", "реала", "реалов"), _f("сентаво", "сентаво", "сентаво")),
    "CHF": (_f("швейцарский франк", "швейцарских франка", "швейцарских франков", "", "m", "швейцарского франка"),
            _f("сантим", "сантима", "сантимов")),
    "INR": (_f("рупия", "рупии", "рупий", "", "f"), _f("пайса", "пайсы", "пайс", "", "f")),
    "CAD": (_f("канадский доллар", "канадских доллара", "канадских долларов", "", "m", "канадского доллара"),
            _f("цент", "цента", "центов")),
    "AUD": (_f("австралийский доллар", "австралийских доллара", "австралийских долларов", "", "m",
               "австралийского доллара"), _f("цент", "цента", "центов")),
    "MXN": (_f("мексиканское песо", "мексиканских песо", "мексиканских песо", "", "n", "мексиканского песо"),
            _f("сентаво", "сентаво", "сентаво")),
    "SEK": (Forms("шведская крона", "шведские кроны", "шведских крон", "f", "шведской кроны", "шведскую крону"),
            None),
    "PLN": (_f("злотый", "злотых", "злотых", "", "m", "злотого"), _f("грош", "гроша", "грошей")),
}
SCALES: dict[str, Forms] = {
    "тыс": _f("тысяча", "тысячи", "тысяч", "", "f"), "млн": _f("миллион", "миллиона", "миллионов"),
    "млрд": _f("миллиард", "миллиарда", "миллиардов"), "трлн": _f("триллион", "триллиона", "триллионов"),
}
MONTHS = ["января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября",
          "ноября", "декабря"]  # the genitive, as dates say them
_WHOLE = ({"n": "целая", "g": "целой", "d": "целой", "a": "целую", "i": "целой", "p": "целой"},
          {"n": "целых", "g": "целых", "d": "целым", "a": "целых", "i": "целыми", "p": "целых"})


@functools.lru_cache(maxsize=4096)
def cardinal(n: int, case: str = "n", gender: str = "m") -> str:
    """`n` in `case`, its last group agreeing with a noun of `gender` (m, f, n)."""
    if n >= 10**15:
        return digits(str(n))
    low = n % 1000
    if gender != "m" and n >= 1000 and low:
        words = f"{cardinal(n - low, case)} {cardinal(low, case, gender)}"
    else:
        words = _RU.to_cardinal(n, case=case, gender=gender if low or n < 1000 else "m", animate=False)
    first, _, rest = words.partition(" ")
    if first.startswith("одн") and rest.startswith("тысяч"):
        return rest
    return _NULL.get(words, words)


# num2words' oblique "ноля", "нолю": speech says "от нуля", "к нулю".
_NULL = {"ноля": "нуля", "нолю": "нулю", "нолём": "нулём", "ноле": "нуле"}


@functools.lru_cache(maxsize=4096)
def ordinal(n: int, case: str = "n", gender: str = "m", plural: bool = False) -> str:
    return str(_RU.to_ordinal(n, case=case, gender=gender, plural=plural, animate=False))


def digits(text: str) -> str:
    return " ".join(_DIGITS[int(c)] for c in text if c.isdigit())


def _ends_in_one(n: int) -> bool:
    return n % 10 == 1 and n % 100 != 11


def agreeing(n: int, singular: str, plural: str) -> str:
    """A substantivized adjective after `n` ("целая", "десятая"): the singular after a number ending
    in one, else the plural (the genitive plural in the nominative and accusative: "две целых")."""
    return singular if _ends_in_one(n) else plural


def decimal(num: Num, case: str = "n") -> str:
    """21,5: "двадцать одна целая пять десятых"; 3,14159: "три запятая один четыре один пять девять"."""
    whole = int(num.whole)
    fraction = num.fraction or ""
    if len(fraction) > 3:
        words = f"{cardinal(whole, case)} запятая {digits(fraction)}"
    else:
        part = int(fraction)
        denominator = 10 ** len(fraction)
        plural_case = "g" if case in "na" else case
        words = " ".join([
            cardinal(whole, case, "f"), agreeing(whole, _WHOLE[0][case], _WHOLE[1][case]),
            cardinal(part, case, "f"), agreeing(part, ordinal(denominator, case, "f"),
                                          ordinal(denominator, plural_case, plural=True))])
    return f"минус {words}" if num.negative else words


def noun_form(num: Num, forms: Forms, case: str) -> str:
    """The noun after `num` in `case` (n, g or a): 1 градус, 2 градуса, 5 градусов, 1,5 градуса;
    от 1 градуса, от 5 градусов; через 1 минуту."""
    if num.fraction is not None:
        return forms.genitive or forms.few
    n = int(num.whole)
    if case == "g":
        return (forms.genitive or forms.few) if _ends_in_one(n) else forms.many
    if _ends_in_one(n):
        return (forms.accusative or forms.one) if case == "a" else forms.one
    if n % 10 in (2, 3, 4) and n % 100 not in (12, 13, 14):
        return forms.few
    return forms.many


def counted(num: Num, forms: Forms, case: str = "n") -> str:
    """`num` of a noun, both in `case` (n, g or a): "двадцать одна тонна", "двух градусов"."""
    if num.fraction is not None:
        return f"{decimal(num, case)} {noun_form(num, forms, case)}"
    said = f"{cardinal(int(num.whole), case, forms.gender)} {noun_form(num, forms, case)}"
    return f"минус {said}" if num.negative else said


# The case a preposition asks of the number after it.
_GENITIVE = frozenset(("от", "до", "с", "со", "после", "около", "из", "без", "для", "кроме", "более", "менее",
                       "свыше", "больше", "меньше", "порядка", "ниже", "выше", "среди", "вместо", "возле", "у",
                       "против", "накануне", "ради", "из-за", "из-под", "вокруг"))
_ACCUSATIVE = frozenset(("на", "за", "через", "про", "в", "во", "спустя", "по"))
_OTHER = {"к": "d", "ко": "d", "о": "p", "об": "p", "при": "p", "между": "i", "перед": "i", "над": "i", "под": "i"}
PREPOSITIONS = _GENITIVE | _ACCUSATIVE | frozenset(_OTHER)
BEFORE = r"(?<![\w.,/:@])"
# The full stop of an abbreviation: taken where the sentence goes on ("5 тыс. руб.", "руб., а"),
# left as the sentence's end otherwise ("... 1,2 млрд руб.").
DOT = r"(?:\.(?=\s*[,;:)]|\s+[а-яё\d])|(?=\.))"  # a number's start: not inside a word, a number, a path or an address
NEXT_WORD = re.compile(r"\s+([а-яё]+)", re.I)
_WORD_BEFORE = re.compile(r"(?:^|[^\w-])([а-яё]+(?:-[а-яё]+)?)\s+\+?$", re.I)  # "до +5": the sign between


def preposition(text: str, start: int) -> str:
    """The word right before `start`, lower case ("" after anything else)."""
    m = _WORD_BEFORE.search(text[max(0, start - 16):start])
    return m.group(1).lower() if m else ""


def case_before(text: str, start: int, noun: str = "") -> str:
    """The case a number at `start` is said in: by the preposition before it, refined by the ending
    of the noun after it where one is written ("с 5 детьми": instrumental; "в 3 странах":
    prepositional; "к 5 часам": dative)."""
    prep = preposition(text, start)
    if prep not in PREPOSITIONS:
        return "n"
    if noun.endswith(("ами", "ями", "ьми")):
        return "i"
    if prep in ("в", "во", "на", "о", "об", "при") and noun.endswith(("ах", "ях")):
        return "p"
    if prep in ("к", "ко", "по") and noun.endswith(("ам", "ям")):
        return "d"
    if prep in _GENITIVE:
        return "g"
    return "a" if prep in _ACCUSATIVE else _OTHER[prep]


def digit_led(pattern: str) -> str:
    """`pattern`, which starts with a number, tried only where a digit or a minus is: the engine
    then skips the other characters without trying each alternative (half the search time)."""
    return rf"(?=[-−0-9])(?:{pattern})"
