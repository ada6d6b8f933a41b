"""Portuguese: Brazilian usage as the default (the language of most of its speakers): "dezesseis",
"bilhão" for 10⁹ (Portugal: "dezasseis", "mil milhões"), "quilômetro", the real's "centavos", the
decimal comma and the dot between thousands ("1.234,56"; "21.5" as sensors write it is a decimal),
the day before the month, the 24-hour clock and "19h30". European forms are not produced.

How it is said, as a speaker says it:
- Numbers agree with what they count: "uma hora", "duas pessoas", "vinte e uma toneladas",
  "duzentas libras"; alone a number is masculine. Round millions take "de": "um milhão de reais".
- Decimals: "vírgula", up to three decimals read as a number ("três vírgula catorze"), longer ones
  digit by digit.
- Dates: "oito de dezembro de dois mil e vinte e seis"; the first day "primeiro de maio".
- Times: "dezenove e trinta", "sete e cinco"; on the hour "dezenove horas", "uma hora", "zero hora".
- Amounts: "dois reais e cinquenta centavos"; ranges "de dez a vinte"; "por cento".
- Phone numbers: short groups (country and area codes) as numbers, the rest digit by digit.

num2words (0.5.14, "pt_BR") gives the cardinals and ordinals, with its faults fixed here: it writes
commas between groups ("mil, novecentos e noventa e nove", a pause the model would make), has no
feminine ("uma", "duas", "duzentas") and misspells "septingentésimo" and "octingentésimo".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import ClassVar

from num2words import num2words

from hearth.text.normalize.language import Language, Num, Rule
from hearth.text.normalize.languages import iberian
from hearth.text.normalize.rules import number_pattern, parse_number

__all__ = ["Portuguese"]

_MONTHS = ["janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
           "novembro", "dezembro"]
_MILLIONS = ("milhão", "milhões", "bilhão", "bilhões", "trilhão", "trilhões")
_ORDINAL_FIXES = {"septigentésimo": "septingentésimo", "octigentésimo": "octingentésimo"}
_LETTERS = {"a": "á", "b": "bê", "c": "cê", "d": "dê", "e": "é", "f": "efe", "g": "gê", "h": "agá", "i": "i",
            "j": "jota", "k": "cá", "l": "ele", "m": "eme", "n": "ene", "o": "ó", "p": "pê", "q": "quê", "r": "erre",
            "s": "esse", "t": "tê", "u": "u", "v": "vê", "w": "dáblio", "x": "xis", "y": "ípsilon", "z": "zê"}
# (singular, plural, gender) of each unit of language.UNITS ("grama" is masculine as a unit).
_UNITS: dict[str, tuple[str, str, str]] = {
    "°C": ("grau Celsius", "graus Celsius", "m"), "°F": ("grau Fahrenheit", "graus Fahrenheit", "m"),
    "K": ("kelvin", "kelvins", "m"), "km/h": ("quilômetro por hora", "quilômetros por hora", "m"),
    "mph": ("milha por hora", "milhas por hora", "f"), "m/s": ("metro por segundo", "metros por segundo", "m"),
    "kWh": ("quilowatt-hora", "quilowatts-hora", "m"), "MWh": ("megawatt-hora", "megawatts-hora", "m"),
    "Wh": ("watt-hora", "watts-hora", "m"), "kW": ("quilowatt", "quilowatts", "m"),
    "MW": ("megawatt", "megawatts", "m"), "W": ("watt", "watts", "m"), "V": ("volt", "volts", "m"),
    "mA": ("miliampere", "miliamperes", "m"), "A": ("ampere", "amperes", "m"), "Hz": ("hertz", "hertz", "m"),
    "kHz": ("quilohertz", "quilohertz", "m"), "MHz": ("megahertz", "megahertz", "m"),
    "GHz": ("gigahertz", "gigahertz", "m"), "km": ("quilômetro", "quilômetros", "m"),
    "cm": ("centímetro", "centímetros", "m"), "mm": ("milímetro", "milímetros", "m"), "m": ("metro", "metros", "m"),
    "mi": ("milha", "milhas", "f"), "ft": ("pé", "pés", "m"), "in": ("polegada", "polegadas", "f"),
    "kg": ("quilograma", "quilogramas", "m"), "mg": ("miligrama", "miligramas", "m"),
    "g": ("grama", "gramas", "m"), "t": ("tonelada", "toneladas", "f"), "lb": ("libra", "libras", "f"),
    "oz": ("onça", "onças", "f"), "l": ("litro", "litros", "m"), "L": ("litro", "litros", "m"),
    "ml": ("mililitro", "mililitros", "m"), "mL": ("mililitro", "mililitros", "m"),
    "hPa": ("hectopascal", "hectopascais", "m"), "mbar": ("milibar", "milibares", "m"), "bar": ("bar", "bares", "m"),
    "Pa": ("pascal", "pascais", "m"), "dB": ("decibel", "decibéis", "m"), "lx": ("lux", "lux", "m"),
    "ppm": ("parte por milhão", "partes por milhão", "f"),
    "µg/m³": ("micrograma por metro cúbico", "microgramas por metro cúbico", "m"),
    "m²": ("metro quadrado", "metros quadrados", "m"), "m³": ("metro cúbico", "metros cúbicos", "m"),
    "km²": ("quilômetro quadrado", "quilômetros quadrados", "m"), "kB": ("kilobyte", "kilobytes", "m"),
    "KB": ("kilobyte", "kilobytes", "m"), "MB": ("megabyte", "megabytes", "m"), "GB": ("gigabyte", "gigabytes", "m"),
    "TB": ("terabyte", "terabytes", "m"), "ms": ("milissegundo", "milissegundos", "m"),
    "s": ("segundo", "segundos", "m"), "min": ("minuto", "minutos", "m"), "h": ("hora", "horas", "f"),
}
# (unit, units, gender, cent, cents, the cent's gender)
_CURRENCIES: dict[str, tuple[str, str, str, str, str, str]] = {
    "BRL": ("real", "reais", "m", "centavo", "centavos", "m"),
    "EUR": ("euro", "euros", "m", "centavo", "centavos", "m"),
    "USD": ("dólar", "dólares", "m", "centavo", "centavos", "m"),
    "GBP": ("libra", "libras", "f", "pêni", "pence", "m"),
    "JPY": ("iene", "ienes", "m", "", "", "m"), "CNY": ("yuan", "yuans", "m", "", "", "m"),
    "KRW": ("won", "wons", "m", "", "", "m"), "RUB": ("rublo", "rublos", "m", "copeque", "copeques", "m"),
    "CHF": ("franco suíço", "francos suíços", "m", "centavo", "centavos", "m"),
    "INR": ("rupia", "rupias", "f", "paisa", "paisas", "f"),
    "CAD": ("dólar canadense", "dólares canadenses", "m", "centavo", "centavos", "m"),
    "AUD": ("dólar australiano", "dólares australianos", "m", "centavo", "centavos", "m"),
    "MXN": ("peso mexicano", "pesos mexicanos", "m", "centavo", "centavos", "m"),
    "SEK": ("coroa sueca", "coroas suecas", "f", "", "", "m"), "PLN": ("zloty", "zlotys", "m", "", "", "m"),
}
# Words after a number that are not what it counts ("1 de cada 10", "2 e 3").
_NOT_NOUNS = frozenset((
    "a", "à", "ao", "aos", "as", "às", "até", "com", "contra", "de", "da", "das", "do", "dos", "e", "em", "entre",
    "na", "nas", "no", "nos", "num", "numa", "o", "ou", "os", "para", "pela", "pelo", "per", "por", "que", "se",
    "sem", "sob", "sobre", "mais", "menos", "é", "são", "foi", "era", "está", "estão", "como", "quando", "onde",
))
_MASCULINE_IN_A = frozenset((
    "dia", "mapa", "problema", "sistema", "programa", "tema", "idioma", "clima", "planeta", "poema", "esquema",
    "drama", "dilema", "teorema", "diploma", "telefonema", "cinema", "sofá",
))
_FEMININE_ENDINGS = ("a", "ã", "ção", "são", "dade", "gem", "tude", "ie")
_FEMININE = frozenset((
    "mão", "foto", "moto", "noite", "parte", "classe", "gente", "chave", "tarde", "mulher", "flor", "cor", "dor",
    "lei", "luz", "voz", "rede", "pele", "fome", "morte", "sorte", "fonte", "frase", "base", "torre", "nave", "vez",
    "fase",
))
_NEXT_WORD = re.compile(r"\s+([^\W\d_]+)")


@functools.lru_cache(maxsize=4096)
def _cardinal(n: int, feminine: bool = False) -> str:
    """`n` in words; `feminine` before a feminine noun ("duas", "vinte e uma", "duzentas mil": the
    part below a million agrees, "milhões" do not)."""
    if n >= 10**18:
        return " ".join(_cardinal(int(d)) for d in str(n))
    words = num2words(n, lang="pt_BR").replace(",", "").split()
    if feminine:
        low = max((i + 1 for i, w in enumerate(words) if w in _MILLIONS), default=0)
        for i in range(low, len(words)):
            words[i] = {"um": "uma", "dois": "duas"}.get(words[i], words[i].replace("entos", "entas"))
    return " ".join(words)


@functools.lru_cache(maxsize=1024)
def _ordinal(n: int, feminine: bool = False) -> str:
    words = [_ORDINAL_FIXES.get(w, w) for w in num2words(n, lang="pt_BR", to="ordinal").split()]
    return " ".join(w[:-1] + "a" if feminine and w.endswith("o") else w for w in words)


def _is_feminine(noun: str) -> bool:
    word = noun.lower()
    # the singulars a plural may have: "pessoas", "vezes" (vez), "mulheres" (mulher), "funções" (função)
    forms = {word, word[:-1] if word.endswith("s") else word, word[:-2] if word.endswith("es") else word,
             word[:-3] + "ão" if word.endswith("ões") else word}
    if forms & _MASCULINE_IN_A:
        return False
    return bool(forms & _FEMININE) or any(f.endswith(_FEMININE_ENDINGS) for f in forms) or word.endswith("gens")


def _counted(words: str, noun: str) -> str:
    """A number before its noun: "um milhão de reais", "dois reais"."""
    return f"{words} de {noun}" if words.rsplit(" ", 1)[-1] in _MILLIONS else f"{words} {noun}"


class Portuguese(Language):
    code = "pt"
    name = "portuguese"
    decimal_mark = ","
    group_marks = ". "
    date_order = "DMY"
    words: ClassVar[dict[str, str]] = {
        "minus": "menos", "point": "vírgula", "to": "a", "percent": "por cento", "and": "e", "plus": "mais",
        "over": "sobre", "dot": "ponto", "at": "arroba", "slash": "barra", "colon": "dois pontos", "dash": "hífen",
        "underscore": "underline", "question": "interrogação", "equals": "igual", "hash": "cerquilha",
        "tilde": "til", "thousand": "mil", "million": "milhões", "billion": "bilhões",
    }
    symbols: ClassVar[dict[str, str]] = {"&": "e", "+": "mais", "=": "igual a", "@": "arroba", "#": "número",
                                         "~": "aproximadamente", "×": "vezes", "÷": "dividido por", "°": "graus"}
    abbreviations: ClassVar[dict[str, str]] = {
        "Sr.": "senhor", "Sra.": "senhora", "Srta.": "senhorita", "Srs.": "senhores", "Dr.": "doutor",
        "Dra.": "doutora", "Drs.": "doutores", "Prof.": "professor", "Profa.": "professora", "Eng.": "engenheiro",
        "Exmo.": "excelentíssimo", "Exma.": "excelentíssima", "V. Sa.": "vossa senhoria", "Sto.": "santo",
        "Sta.": "santa", "p. ex.": "por exemplo", "p.ex.": "por exemplo", "pág.": "página",
        "págs.": "páginas", "nº": "número", "n.º": "número", "núm.": "número", "aprox.": "aproximadamente",
        "tel.": "telefone", "Av.": "avenida", "Ltda.": "limitada", "S.A.": "sociedade anônima",
        "S/A": "sociedade anônima", "a.C.": "antes de Cristo", "d.C.": "depois de Cristo", "obs.": "observação",
        "Obs.": "observação", "máx.": "máximo", "mín.": "mínimo", "séc.": "século", "vs.": "versus",
        "EUA": "Estados Unidos", "cia.": "companhia", "Cia.": "companhia", "depto.": "departamento",
        "apto.": "apartamento", "ap.": "apartamento",
    }
    spelled_as_words = frozenset({
        "ONU", "OTAN", "UNESCO", "UNICEF", "OVNI", "AIDS", "FIFA", "UEFA", "NASA", "OPEP", "PIN", "LED", "COVID",
        "IKEA", "LEGO", "ENEM", "DETRAN", "MEC", "USP", "CEP", "PIX", "SUS", "OK", "WIFI", "RAM", "SIM", "FAQ",
        "ANVISA", "UNICAMP", "MERCOSUL", "PETROBRAS", "SENAI", "SESC", "SEBRAE", "FUNAI",
    })

    def cardinal(self, n: int) -> str:
        return f"menos {_cardinal(-n)}" if n < 0 else _cardinal(n)

    def ordinal(self, n: int) -> str:
        return _ordinal(n)

    def number(self, num: Num, feminine: bool = False) -> str:
        """A number alone or before a masculine noun; `feminine` before a feminine one."""
        if num.fraction is None:
            words = _cardinal(int(num.whole), feminine)
        else:
            words = f"{_cardinal(int(num.whole))} vírgula {self._decimals(num.fraction)}"
        return f"menos {words}" if num.negative else words

    def _decimals(self, digits: str) -> str:
        if len(digits) > 3:
            return self.digits(digits)
        rest = digits.lstrip("0")
        return self.join(["zero"] * (len(digits) - len(rest)) + ([_cardinal(int(rest))] if rest else []))

    def fraction(self, numerator: int, denominator: int) -> str:
        one = numerator == 1
        if denominator == 2:
            name = "meio" if one else "meios"
        elif denominator == 3:
            name = "terço" if one else "terços"
        elif denominator <= 10 or denominator in (100, 1000):
            name = _ordinal(denominator) + ("" if one else "s")
        else:  # "três onze avos"
            name = f"{_cardinal(denominator)} {'avo' if one else 'avos'}"
        return f"{_cardinal(numerator)} {name}"

    def percent(self, num: Num) -> str:
        return f"{self.number(num)} por cento"

    def _amount(self, num: Num, one: str, many: str, gender: str) -> str:
        """`num` of a thing: "um grau", "vinte e uma toneladas", "um milhão de reais"."""
        if num.fraction is None:
            return _counted(self.number(num, gender == "f"), one if int(num.whole) == 1 else many)
        return f"{self.number(num)} {many}"

    def money(self, num: Num, code: str) -> str:
        names = _CURRENCIES.get(code)
        if names is None:
            return self.join([self.number(num), self.letters(code)])
        one, many, gender, cent, cents, cent_gender = names
        fraction = num.fraction or ""
        if len(fraction) > 2 or (fraction and not cent):
            said = self._amount(Num(False, num.whole, fraction), one, many, gender)
        else:
            whole, hundredths = int(num.whole), int(fraction.ljust(2, "0")) if fraction else 0
            parts = [self._amount(Num(False, num.whole), one, many, gender)] if whole or not hundredths else []
            if hundredths:
                parts += ["e"] if parts else []
                parts.append(self._amount(Num(False, str(hundredths)), cent, cents, cent_gender))
            said = " ".join(parts)
        return f"menos {said}" if num.negative else said

    def money_scaled(self, num: Num, exponent: int, code: str) -> str:
        """"R$ 5k": "cinco mil reais"; "US$ 2,5M": "dois vírgula cinco milhões de dólares"."""
        names = _CURRENCIES.get(code)
        plural = names[1] if names else self.letters(code)
        if exponent == 3:
            return f"{self.number(num, names is not None and names[2] == 'f')} mil {plural}"
        scale = {6: ("milhão", "milhões"), 9: ("bilhão", "bilhões")}[exponent]
        return f"{self.number(num)} {scale[0] if int(num.whole) < 2 else scale[1]} de {plural}"

    def currency_words(self, code: str) -> tuple[str, str, str, str] | None:
        names = _CURRENCIES.get(code)
        return None if names is None else (names[0], names[1], names[3], names[4])

    def unit_words(self, unit: str, num: Num) -> str | None:
        names = _UNITS.get(unit)
        if names is None:
            return None
        return names[0] if num.fraction is None and int(num.whole) == 1 else names[1]

    def measure(self, num: Num, unit: str) -> str:
        one, many, gender = _UNITS[unit]
        said = self._amount(Num(False, num.whole, num.fraction), one, many, gender)
        return f"menos {said}" if num.negative else said

    def range(self, first: str, second: str) -> str:
        return f"de {first} a {second}"

    def date(self, year: int | None, month: int | None, day: int | None) -> str:
        parts = [f"{'primeiro' if day == 1 else _cardinal(day)} de"] if day else []
        parts.append(_MONTHS[(month or 1) - 1])
        if year is not None:
            parts.append(f"de {self.year(year)}")
        return " ".join(parts)

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        """"dezenove e trinta"; on the hour "dezenove horas"; a written am/pm said as the part of
        the day ("sete e meia da noite" is not written: "sete e trinta da noite")."""
        said_hour = _cardinal(hour, feminine=True)
        hours = "hora" if hour in (0, 1) else "horas"  # "zero hora", as Brazil says midnight
        if second is not None:
            minutes = _counted(_cardinal(minute), "minuto" if minute == 1 else "minutos")
            seconds = _counted(_cardinal(second), "segundo" if second == 1 else "segundos")
            return f"{said_hour} {hours} {minutes} e {seconds}"
        if period:
            if hour == 12:
                words = "meio-dia" if period == "pm" else "meia-noite"
                return words + (f" e {_cardinal(minute)}" if minute else "")
            return said_hour + (f" e {_cardinal(minute)}" if minute else "") + " " + _day_part(hour, period)
        if minute == 0:
            return f"{said_hour} {hours}"
        return f"{said_hour} e {_cardinal(minute)}"

    def phone(self, groups: Sequence[str], international: bool) -> str:
        """Brazil reads the country and area codes as numbers ("mais cinquenta e cinco, onze"), the
        number itself digit by digit."""
        said = ", ".join(_cardinal(int(g)) if len(g) <= 2 and not g.startswith("0") else self.digits(g)
                         for g in groups)
        return f"mais {said}" if international else said

    def letters(self, text: str) -> str:
        return " ".join(_LETTERS.get(c.lower(), c) if c.isalpha() else self.digits(c) if c.isdigit() else c
                        for c in text if not c.isspace())

    def extra_rules(self) -> list[Rule]:
        number = number_pattern(self)
        months = "|".join(_MONTHS)
        ordinal = re.compile(r"(?<![\w.,])(?P<n>\d{1,4})\.?(?P<suf>[ºª])(?![\w])")
        first = re.compile(rf"(?<![\w.,])1[º°]?(?= de (?:{months})\b)", re.I)
        clock = re.compile(r"(?<![\w.,])(?P<h>[01]?\d|2[0-3])h(?:(?P<min>[0-5]\d)(?:min|m)?)?(?![\w])")
        counted = re.compile(rf"(?<![\w.,/:@]){number}(?![\w]|[.,]\d)(?=\s(?:mil\s)?(?P<noun>[a-záâãàéêíóôõúüç]+)\b)")
        phone = re.compile(r"(?<![\w+])(?:\(\d{2}\)\s?|\d{2}\s)9?\d{4}[-\s]\d{4}(?![\w])")
        scale = r"(?P<scale>mil|milhões|milhão|bilhões|bilhão|trilhões|trilhão|mi|bi|tri)"
        scaled = re.compile(rf"(?<![\w.,])(?P<cur>R\$|US\$|€|\$)\s?{number}\s{scale}(?![\w])")
        return [
            Rule("ordinal", ordinal, self._ordinal_said, 25),
            Rule("date", first, lambda m: "primeiro", 24),
            Rule("time", clock, lambda m: self.time(int(m.group("h")), int(m.group("min") or 0), None, None), 14),
            Rule("number", counted, self._counted_number, 89),
            Rule("phone", phone, lambda m: self.phone(re.findall(r"\d+", m.group()), False), 11),
            Rule("currency", scaled, self._scaled_money, 19),
            Rule("number", re.compile(r"(?<![\w-])\d{5}-\d{3}(?![\w-])"), lambda m: self.digits(m.group()), 12),
            *iberian.rules(self, iberian.Words(
                self._degrees, _ordinal, _cardinal, "mais", {"-": "a", ":": "a", "x": "a"}, "et cetera",
                ("século", "séculos"))),
        ]

    def _ordinal_said(self, m: re.Match[str]) -> str | None:
        n = int(m.group("n"))
        return _ordinal(n, feminine=m.group("suf") == "ª") if n else None

    def _degrees(self, num: Num, scale: str | None) -> str:
        unit = {"C": "°C", "F": "°F"}.get(scale or "")
        if unit:
            return self.measure(num, unit)
        said = self._amount(Num(False, num.whole, num.fraction), "grau", "graus", "m")
        return f"menos {said}" if num.negative else said

    def _counted_number(self, m: re.Match[str]) -> str | None:
        num, noun = parse_number(m), m.group("noun")
        if num.fraction is not None or noun in _NOT_NOUNS:
            return None
        said = self.number(num, _is_feminine(noun))
        return said + (" de" if said.rsplit(" ", 1)[-1] in _MILLIONS else "")

    def _scaled_money(self, m: re.Match[str]) -> str:
        """"R$ 1,5 milhão", "R$ 500 mil", "US$ 2 bi": the amount, its scale, the currency."""
        symbol = m.group("cur")
        code = {"R$": "BRL", "US$": "USD", "€": "EUR", "$": "USD"}[symbol]
        names = _CURRENCIES[code]
        num = parse_number(m)
        word = {"mi": "milhão", "bi": "bilhão", "tri": "trilhão"}.get(m.group("scale"), m.group("scale"))
        if word != "mil":
            word = word if int(num.whole) < 2 else word[:-2] + "ões"  # "1,5 milhão", as Brazil writes
            return f"{self.number(num)} {word} de {names[1]}"
        return f"{self.number(num, names[2] == 'f')} mil {names[1]}"


def _day_part(hour: int, period: str) -> str:
    if period == "am":
        return "da madrugada" if hour < 6 else "da manhã"
    return "da tarde" if hour < 7 else "da noite"
