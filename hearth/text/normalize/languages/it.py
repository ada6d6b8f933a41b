"""Italian: the comma as decimal mark (and "21.5" as sensors write it), full stops between
thousands, dates day first with their article elided as Italian elides it ("08/12/2026": "l'otto
dicembre duemilaventisei", "il primo maggio", "dell'11/12": "dell'undici dicembre"), the 24-hour
clock ("19:30", "alle 19.30": "diciannove e trenta"), decimals after "virgola" read as a number
("3,14": "tre virgola quattordici"), phone numbers digit by digit, ordinals "1º", "1ª" and "3°"
where the degree sign stands for "º" ("il 3° posto"), and ranges "da ... a ..." ("10–20 °C": "da
dieci a venti gradi Celsius", as Italian says a span).

Cardinals and ordinals under a million come from num2words (fast, and right for Italian but for
two slips fixed in `_small`: "centodicotto" for 118, "duemilaventitre" without its accent); above a
million num2words puts "e" after the millions ("un milione e duecentomila", "un milione e
unesimo"), which the cardinal's spoken and written form leaves out ("un milione duecentomila"), so
those are composed here. The number "one" before a noun agrees with it, which num2words cannot
know: "un grado", "una tonnellata", "un'ora", "uno yen"."""

from __future__ import annotations

import functools
import re
from typing import ClassVar

from num2words import num2words

from hearth.text.normalize.language import Num, Rule
from hearth.text.normalize.languages.continental import DAY, Continental, Noun
from hearth.text.normalize.languages.continental_rules import continental_rules
from hearth.text.normalize.languages.it_rules import ELISIONS, STARTERS, indefinite, italian_rules, noun_gender

__all__ = ["Italian"]

_MONTHS = ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre",
           "ottobre", "novembre", "dicembre")
_SCALES = ((10**9, "un miliardo", "miliardi"), (10**6, "un milione", "milioni"))
_CENT: Noun = ("centesimo", "centesimi", "m")
_WEEKDAYS = ("lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica")


@functools.cache
def _small(n: int, to: str = "cardinal") -> str:
    words = num2words(n, lang="it", to=to)
    if to != "cardinal":
        return words
    # num2words drops an "i" after "cento" ("centodicotto" for 118) and the accent of a compound's
    # last "tre" after a hundred or a thousand ("centoventitre", "duemilaventitre"; it writes
    # "ventitré" and "centotré" right): "centodiciotto", "centoventitré", "duemilaventitré"
    words = words.replace("dicotto", "diciotto")
    return words[:-3] + "tré" if words.endswith("tre") and len(words) > 3 else words


class Italian(Continental):
    code = "it"
    name = "italian"
    decimals_as_number = True
    words: ClassVar[dict[str, str]] = {
        "versus": "a",
        "per": "al", "24/7": "ventiquattro ore su ventiquattro, sette giorni su sette",
        "minus": "meno", "point": "virgola", "to": "a", "percent": "per cento", "and": "e", "plus": "più",
        "over": "su", "dot": "punto", "at": "chiocciola", "colon": "due punti", "dash": "trattino",
        "underscore": "trattino basso", "question": "punto interrogativo", "equals": "uguale",
        "hash": "cancelletto", "tilde": "tilde", "thousand": "mila", "million": "milioni", "billion": "miliardi",
        # "/" in an address: "slash", as Italians read web addresses ("barra" is heard too)
        "slash": "slash",
    }
    symbols: ClassVar[dict[str, str]] = {"&": "e", "+": "più", "=": "uguale", "@": "chiocciola", "#": "cancelletto",
                                         "~": "circa", "×": "per", "÷": "diviso", "°": "gradi", "§": "paragrafo"}
    abbreviations: ClassVar[dict[str, str]] = {
        "Sig.": "Signor", "Sig.ra": "Signora", "Sig.na": "Signorina", "Sigg.": "Signori", "Dott.": "Dottor",
        "Dott.ssa": "Dottoressa", "Dr.": "Dottor", "Prof.": "Professor", "Prof.ssa": "Professoressa",
        "Avv.": "Avvocato", "Ing.": "Ingegner", "Arch.": "Architetto", "Geom.": "Geometra", "Egr.": "Egregio",
        "Gent.": "Gentile", "Gent.mo": "Gentilissimo", "Gent.ma": "Gentilissima", "Spett.": "Spettabile",
        "ecc.": "eccetera", "p.es.": "per esempio", "p. es.": "per esempio", "ad es.": "ad esempio",
        "es.": "esempio", "cfr.": "confronta", "ca.": "circa", "tel.": "telefono", "Tel.": "Telefono",
        "pag.": "pagina", "pagg.": "pagine", "sec.": "secolo", "vol.": "volume", "max.": "massimo",
        "a.C.": "avanti Cristo", "d.C.": "dopo Cristo", "N.B.": "nota bene", "P.S.": "post scriptum",
        "S.p.A.": "S P A", "S.r.l.": "S R L", "s.r.l.": "S R L", "P.za": "Piazza", "p.za": "piazza",
        "C.so": "Corso", "V.le": "Viale", "Sant'": "Sant'",
    }
    spelled_as_words = frozenset({
        "NATO", "ONU", "UNESCO", "UNICEF", "FIFA", "UEFA", "NASA", "ESA", "OPEC", "FIAT", "RAI", "ANSA", "ISTAT",
        "INPS", "INAIL", "IVA", "IRPEF", "IMU", "TAR", "PIL", "CONI", "ENI", "ENEL", "ANAS", "USA", "COVID",
        "PIN", "RAM", "ROM", "GIF", "JPEG", "IKEA", "LEGO", "LASER", "RADAR", "AIDS", "CAP", "OK",
    })
    months = _MONTHS
    month_abbreviations: ClassVar[dict[str, int]] = {
        "gen": 1, "feb": 2, "mar": 3, "apr": 4, "mag": 5, "giu": 6, "lug": 7, "ago": 8, "set": 9, "sett": 9,
        "ott": 10, "nov": 11, "dic": 12}
    day_before_month = rf"(?P<d>{DAY})[°º]?\s+"
    date_determiners = frozenset([*ELISIONS, *ELISIONS.values(), *_WEEKDAYS])
    units: ClassVar[dict[str, Noun]] = {
        "°C": ("grado Celsius", "gradi Celsius", "m"), "°F": ("grado Fahrenheit", "gradi Fahrenheit", "m"),
        "K": ("kelvin", "kelvin", "m"), "km/h": ("chilometro orario", "chilometri orari", "m"),
        "mph": ("miglio orario", "miglia orarie", "m"), "m/s": ("metro al secondo", "metri al secondo", "m"),
        "kWh": ("chilowattora", "chilowattora", "m"), "MWh": ("megawattora", "megawattora", "m"),
        "Wh": ("wattora", "wattora", "m"), "kW": ("chilowatt", "chilowatt", "m"),
        "MW": ("megawatt", "megawatt", "m"), "W": ("watt", "watt", "m"), "V": ("volt", "volt", "m"),
        "mA": ("milliampere", "milliampere", "m"), "A": ("ampere", "ampere", "m"), "Hz": ("hertz", "hertz", "m"),
        "kHz": ("chilohertz", "chilohertz", "m"), "MHz": ("megahertz", "megahertz", "m"),
        "GHz": ("gigahertz", "gigahertz", "m"), "km": ("chilometro", "chilometri", "m"),
        "cm": ("centimetro", "centimetri", "m"), "mm": ("millimetro", "millimetri", "m"),
        "m": ("metro", "metri", "m"), "ft": ("piede", "piedi", "m"), "kg": ("chilogrammo", "chilogrammi", "m"),
        "mg": ("milligrammo", "milligrammi", "m"), "g": ("grammo", "grammi", "m"),
        "t": ("tonnellata", "tonnellate", "f"), "lb": ("libbra", "libbre", "f"), "oz": ("oncia", "once", "f"),
        "l": ("litro", "litri", "m"), "L": ("litro", "litri", "m"), "ml": ("millilitro", "millilitri", "m"),
        "mL": ("millilitro", "millilitri", "m"), "hPa": ("ettopascal", "ettopascal", "m"),
        "mbar": ("millibar", "millibar", "m"), "bar": ("bar", "bar", "m"), "Pa": ("pascal", "pascal", "m"),
        "dB": ("decibel", "decibel", "m"), "lx": ("lux", "lux", "m"),
        "ppm": ("parte per milione", "parti per milione", "f"),
        "µg/m³": ("microgrammo per metro cubo", "microgrammi per metro cubo", "m"),
        "m²": ("metro quadrato", "metri quadrati", "m"), "m³": ("metro cubo", "metri cubi", "m"),
        "km²": ("chilometro quadrato", "chilometri quadrati", "m"), "kB": ("kilobyte", "kilobyte", "m"),
        "KB": ("kilobyte", "kilobyte", "m"), "MB": ("megabyte", "megabyte", "m"),
        "GB": ("gigabyte", "gigabyte", "m"), "TB": ("terabyte", "terabyte", "m"),
        "ms": ("millisecondo", "millisecondi", "m"), "s": ("secondo", "secondi", "m"),
        "min": ("minuto", "minuti", "m"), "h": ("ora", "ore", "f"),
        # "in" and "mi" are left out: in Italian they are words ("5 in tutto", "mi piace")
        # beside the shared units: what recipes and batteries write
        "cl": ("centilitro", "centilitri", "m"), "dl": ("decilitro", "decilitri", "m"),
        "mAh": ("milliampereora", "milliampereora", "m"),
    }
    currencies: ClassVar[dict[str, tuple[Noun, Noun | None]]] = {
        "EUR": (("euro", "euro", "m"), _CENT), "USD": (("dollaro", "dollari", "m"), _CENT),
        "GBP": (("sterlina", "sterline", "f"), ("penny", "pence", "m")), "JPY": (("yen", "yen", "m"), None),
        "CNY": (("yuan", "yuan", "m"), None), "KRW": (("won", "won", "m"), None),
        "RUB": (("rublo", "rubli", "m"), ("copeco", "copechi", "m")),
        "BRL": (("real", "reais", "m"), ("centavo", "centavos", "m")),
        "CHF": (("franco svizzero", "franchi svizzeri", "m"), ("centesimo", "centesimi", "m")),
        "INR": (("rupia", "rupie", "f"), ("paisa", "paise", "m")),
        "CAD": (("dollaro canadese", "dollari canadesi", "m"), _CENT),
        "AUD": (("dollaro australiano", "dollari australiani", "m"), _CENT),
        "MXN": (("peso", "pesos", "m"), ("centavo", "centavos", "m")),
        "SEK": (("corona", "corone", "f"), ("öre", "öre", "m")), "PLN": (("zloty", "zloty", "m"), ("grosz",
                                                                                              "groszy", "m")),
    }
    degree: ClassVar[Noun] = ("grado", "gradi", "m")
    scales: ClassVar[dict[int, Noun]] = {3: ("mille", "mila", "m"), 6: ("milione", "milioni", "m"),
                                         9: ("miliardo", "miliardi", "m")}
    sentence_starters = STARTERS

    def cardinal(self, n: int) -> str:
        if n < 0:
            return f"meno {self.cardinal(-n)}"
        if n >= 10**15:
            return self.digits(str(n))
        if n < 10**6:
            return _small(n)
        words = []
        for size, one, many in _SCALES:
            count, n = divmod(n, size)
            if count:
                words.append(one if count == 1 else f"{self.cardinal(count)} {many}")
        return " ".join([*words, _small(n)] if n else words)

    def ordinal(self, n: int) -> str:
        if n < 10**6:
            return _small(n, "ordinal")
        words = self.cardinal(n).removeprefix("un ").replace(" ", "")  # "milionesimo", "duemilionesimo"
        return words[:-1] + "esimo"

    def fraction(self, numerator: int, denominator: int) -> str:
        several = numerator > 1
        name = ("mezz" if denominator == 2 else self.ordinal(denominator)[:-1]) + ("i" if several else "o")
        return f"{self.cardinal(numerator) if several else 'un'} {name}"

    def percent(self, num: Num) -> str:
        # "uno per cento", as after the article ("l'uno per cento"), not "un per cento"
        return self.join([self.number(num), "per cento"])

    def counted(self, num: Num, noun: Noun) -> str:
        """"un grado", "una tonnellata", "un'ora", "due ore", "un milione di euro"."""
        singular, plural, noun_gender = noun
        whole = int(num.whole)
        if num.fraction is None and whole == 1:
            said = indefinite(noun_gender, singular)
            return self.join([self.words["minus"], said]) if num.negative else said
        if num.fraction is None and whole >= 10**6 and whole % 10**6 == 0:
            return self.of(self.number(num), noun)
        return self.join([self.number(num), plural])

    def of(self, amount: str, noun: Noun) -> str:
        return f"{amount} di {noun[1]}"

    def range(self, first: str, second: str) -> str:
        return self.join(["da", first, "a", second])

    def dated(self, det: str | None, year: int | None, month: int, day: int | None, named: bool) -> str:
        said_year = self.cardinal(year) if year is not None else ""
        if day is None:
            return self.join([_MONTHS[month - 1], said_year])
        said_day = "primo" if day == 1 else self.cardinal(day)
        rest = self.join([_MONTHS[month - 1], said_year])
        if det is not None or named:  # "lunedì 8 dicembre", "dell'8/12" (elided by `italian_rules`)
            return self.join([said_day, rest])
        return ("l'" + said_day if said_day[0] in "aeiou" else f"il {said_day}") + " " + rest

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        """"diciannove e trenta", "una e cinque" (the hour is "una", as "ora" is feminine)."""
        if period:
            hour = hour % 12 + (12 if period == "pm" else 0)
        words = ["una" if hour == 1 else self.cardinal(hour)]
        if minute:
            words += ["e", self.cardinal(minute)]
        if second:
            words += ["e", self.counted(Num(False, str(second)), ("secondo", "secondi", "m"))]
        return self.join(words)

    def phone_group(self, digits: str) -> str:
        # Digit by digit, as Italians dictate phone numbers ("zero sei, uno due tre quattro"), in
        # the groups as written.
        return self.digits(digits)

    def times(self, n: int) -> str:
        return self.counted(Num(False, str(n)), ("volta", "volte", "f"))  # "una volta", "tre volte"

    def per(self, noun: str) -> str:
        """"€/mese": "al mese", "alla settimana", "all'ora", "allo zaino"."""
        lower = noun.lower()
        if lower[0] in "aeiouàèéìòù":
            return f"all'{noun}"
        if noun_gender(noun) == "f":
            return f"alla {noun}"
        return f"allo {noun}" if re.match(r"s[^aeiou]|z|gn|ps|x|y", lower) else f"al {noun}"

    def regnal(self, value: int, name: str) -> str:
        said = self.ordinal(value)  # "Luigi XIV": "Luigi quattordicesimo", "Elisabetta II": "seconda"
        return said[:-1] + "a" if noun_gender(name) == "f" else said

    def extra_rules(self) -> list[Rule]:
        return [*continental_rules(self), *italian_rules(self)]
