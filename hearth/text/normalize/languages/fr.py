"""French: the comma as decimal mark (and "21.5" as sensors write it), spaces (plain, no-break or
thin) or full stops between thousands, dates day first with their article ("08/12/2026": "le huit
décembre deux mille vingt-six", "le 1er mai": "le premier mai"), the 24-hour clock in "heures"
("19h30", "19:30": "dix-neuf heures trente"), decimals after "virgule" read as a number ("3,14":
"trois virgule quatorze"), phone numbers in pairs ("06 12 34 56 78": "zéro six, douze, ...").

Cardinals under a thousand come from num2words (right in French, traditional spelling: "vingt et
un", "quatre-vingts", "deux cents", "deux cent un"); the rest is written here, because num2words
- writes the ordinals of numbers whose cardinal ends in a plural wrong: "quatre-vingtsième",
  "trois centsième", "deux cents millionsième" for "quatre-vingtième", "trois centième", "deux
  cent millionième", and "un millionième" for the millionth;
- says "un" before every noun: "vingt et une heures", "une tonne" agree with a feminine noun;
- leaves out "de" after "million" and "milliard" as nouns: "un million d'euros";
- is slow (some 300 µs for a seven-digit number), so it is asked once per number under a thousand
  and larger ones are composed ("mille", "vingt et un mille", "quatre-vingt mille": the "s" of
  "vingts" and "cents" goes before "mille", stays before "millions")."""

from __future__ import annotations

import functools
import re
from typing import ClassVar

from num2words import num2words

from hearth.text.normalize.language import Num, Rule
from hearth.text.normalize.languages.continental import DAY, Continental, Noun
from hearth.text.normalize.languages.continental_rules import continental_rules
from hearth.text.normalize.languages.fr_rules import STARTERS, feminine, french_rules

__all__ = ["French"]

_MONTHS = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
           "novembre", "décembre")
_SCALES = ((10**12, "billion"), (10**9, "milliard"), (10**6, "million"))
_CENT: Noun = ("cent", "cents", "m")
_CENTIME: Noun = ("centime", "centimes", "m")  # the euro's hundredth as the French say it (officially "cent")
# Words before which "de" is "d'": a vowel, or an "h" that is not aspirated ("d'heures", "de hertz").
_ELIDED = re.compile(r"^(?:[aeiouyàâéèêëîïôûü]|h(?!ertz))", re.I)


@functools.cache
def _below_hundred() -> tuple[str, ...]:
    """num2words' 0 to 99, asked once (some 5 ms): hundreds are composed from them as num2words
    composes them (`tests/test_normalize_fr.py` holds the two equal), without its 50 to 300 µs a
    number."""
    return tuple(num2words(n, lang="fr") for n in range(100))


def _below_thousand(n: int) -> str:
    """"cent", "deux cents", "deux cent un": "cents" takes its "s" only at the end."""
    hundreds, rest = divmod(n, 100)
    small = _below_hundred()
    if not hundreds:
        return small[rest]
    head = "cent" if hundreds == 1 else f"{small[hundreds]} cent{'' if rest else 's'}"
    return f"{head} {small[rest]}" if rest else head


class French(Continental):
    code = "fr"
    name = "french"
    group_marks = ". "
    decimals_as_number = True
    words: ClassVar[dict[str, str]] = {
        "versus": "à",
        "per": "par", "24/7": "vingt-quatre heures sur vingt-quatre, sept jours sur sept",
        "minus": "moins", "point": "virgule", "to": "à", "percent": "pour cent", "and": "et", "plus": "plus",
        "over": "sur", "dot": "point", "at": "arobase", "colon": "deux-points", "dash": "tiret",
        "underscore": "tiret bas", "question": "point d'interrogation", "equals": "égal", "hash": "dièse",
        "tilde": "tilde", "thousand": "mille", "million": "millions", "billion": "milliards",
        # "/" in an address: "slash", as the French read web addresses ("barre oblique" is the name of
        # the sign in writing, rarely said)
        "slash": "slash",
    }
    symbols: ClassVar[dict[str, str]] = {"&": "et", "+": "plus", "=": "égale", "@": "arobase", "#": "dièse",
                                         "~": "environ", "×": "fois", "÷": "divisé par", "°": "degrés",
                                         "§": "paragraphe"}
    abbreviations: ClassVar[dict[str, str]] = {
        "env.": "environ", "etc.": "et cetera", "p. ex.": "par exemple", "p.ex.": "par exemple",
        "c.-à-d.": "c'est-à-dire", "c-à-d": "c'est-à-dire", "cf.": "confer", "Cf.": "Confer", "Mme": "Madame",
        "Mmes": "Mesdames", "Mlle": "Mademoiselle", "Mlles": "Mesdemoiselles", "MM.": "Messieurs",
        "Dr": "Docteur", "Dr.": "Docteur", "Pr": "Professeur", "Pr.": "Professeur", "Prof.": "Professeur",
        "St": "Saint", "Ste": "Sainte", "av.": "avenue", "bd": "boulevard", "bd.": "boulevard", "tél.": "téléphone",
        "Tél.": "Téléphone", "max.": "maximum", "resp.": "respectivement", "vol.": "volume", "chap.": "chapitre",
        "ex.": "exemple", "Cie": "Compagnie", "Mgr": "Monseigneur", "av. J.-C.": "avant Jésus-Christ",
        "apr. J.-C.": "après Jésus-Christ", "J.-C.": "Jésus-Christ", "hab.": "habitants", "qqch.": "quelque chose",
        "qqn": "quelqu'un", "svp": "s'il vous plaît", "SVP": "s'il vous plaît", "éd.": "édition", "incl.": "inclus",
        "c. à c.": "cuillère à café", "c. à s.": "cuillère à soupe", "c.à.c.": "cuillère à café",
        "c.à.s.": "cuillère à soupe",
    }
    spelled_as_words = frozenset({
        "OTAN", "ONU", "UNESCO", "UNICEF", "FIFA", "UEFA", "NASA", "ESA", "OPEP", "SIDA", "OVNI", "ENA", "INSEE",
        "CAC", "CNIL", "SAMU", "SMIC", "CAPES", "COVID", "PIN", "RAM", "ROM", "GIF", "JPEG", "IKEA", "LEGO",
        "NASDAQ", "LASER", "RADAR", "OK",
    })
    months = _MONTHS
    month_abbreviations: ClassVar[dict[str, int]] = {
        "janv": 1, "févr": 2, "fév": 2, "avr": 4, "juil": 7, "sept": 9, "oct": 10, "nov": 11, "déc": 12}
    day_before_month = rf"(?P<d>{DAY})(?:er|ᵉʳ)?\s+"
    # "le 08/12", "du 08/12", "au 08/12", "jusqu'au 08/12", "lundi 08/12": the article said once
    date_determiners = frozenset({"le", "du", "au", "jusqu'au", "lundi", "mardi", "mercredi", "jeudi", "vendredi",
                                  "samedi", "dimanche"})
    units: ClassVar[dict[str, Noun]] = {
        "°C": ("degré Celsius", "degrés Celsius", "m"), "°F": ("degré Fahrenheit", "degrés Fahrenheit", "m"),
        "K": ("kelvin", "kelvins", "m"), "km/h": ("kilomètre par heure", "kilomètres par heure", "m"),
        "mph": ("mile par heure", "miles par heure", "m"), "m/s": ("mètre par seconde", "mètres par seconde", "m"),
        "kWh": ("kilowattheure", "kilowattheures", "m"), "MWh": ("mégawattheure", "mégawattheures", "m"),
        "Wh": ("wattheure", "wattheures", "m"), "kW": ("kilowatt", "kilowatts", "m"),
        "MW": ("mégawatt", "mégawatts", "m"), "W": ("watt", "watts", "m"), "V": ("volt", "volts", "m"),
        "mA": ("milliampère", "milliampères", "m"), "A": ("ampère", "ampères", "m"), "Hz": ("hertz", "hertz", "m"),
        "kHz": ("kilohertz", "kilohertz", "m"), "MHz": ("mégahertz", "mégahertz", "m"),
        "GHz": ("gigahertz", "gigahertz", "m"), "km": ("kilomètre", "kilomètres", "m"),
        "cm": ("centimètre", "centimètres", "m"), "mm": ("millimètre", "millimètres", "m"),
        "m": ("mètre", "mètres", "m"), "mi": ("mile", "miles", "m"), "ft": ("pied", "pieds", "m"),
        "in": ("pouce", "pouces", "m"), "kg": ("kilogramme", "kilogrammes", "m"),
        "mg": ("milligramme", "milligrammes", "m"), "g": ("gramme", "grammes", "m"), "t": ("tonne", "tonnes", "f"),
        "lb": ("livre", "livres", "f"), "oz": ("once", "onces", "f"), "l": ("litre", "litres", "m"),
        "L": ("litre", "litres", "m"), "ml": ("millilitre", "millilitres", "m"),
        "mL": ("millilitre", "millilitres", "m"), "hPa": ("hectopascal", "hectopascals", "m"),
        "mbar": ("millibar", "millibars", "m"), "bar": ("bar", "bars", "m"), "Pa": ("pascal", "pascals", "m"),
        "dB": ("décibel", "décibels", "m"), "lx": ("lux", "lux", "m"),
        "ppm": ("partie par million", "parties par million", "f"),
        "µg/m³": ("microgramme par mètre cube", "microgrammes par mètre cube", "m"),
        "m²": ("mètre carré", "mètres carrés", "m"), "m³": ("mètre cube", "mètres cubes", "m"),
        "km²": ("kilomètre carré", "kilomètres carrés", "m"), "kB": ("kilooctet", "kilooctets", "m"),
        "KB": ("kilooctet", "kilooctets", "m"), "MB": ("mégaoctet", "mégaoctets", "m"),
        "GB": ("gigaoctet", "gigaoctets", "m"), "TB": ("téraoctet", "téraoctets", "m"),
        "ms": ("milliseconde", "millisecondes", "f"), "s": ("seconde", "secondes", "f"),
        "min": ("minute", "minutes", "f"), "h": ("heure", "heures", "f"),
        # beside the shared units: as French writes bytes, and what recipes and batteries write
        "ko": ("kilooctet", "kilooctets", "m"), "Ko": ("kilooctet", "kilooctets", "m"),
        "Mo": ("mégaoctet", "mégaoctets", "m"), "Go": ("gigaoctet", "gigaoctets", "m"),
        "To": ("téraoctet", "téraoctets", "m"), "cl": ("centilitre", "centilitres", "m"),
        "dl": ("décilitre", "décilitres", "m"), "mAh": ("milliampère-heure", "milliampères-heures", "m"),
    }
    currencies: ClassVar[dict[str, tuple[Noun, Noun | None]]] = {
        "EUR": (("euro", "euros", "m"), _CENTIME), "USD": (("dollar", "dollars", "m"), _CENT),
        "GBP": (("livre", "livres", "f"), ("penny", "pence", "m")), "JPY": (("yen", "yens", "m"), None),
        "CNY": (("yuan", "yuans", "m"), None), "KRW": (("won", "wons", "m"), None),
        "RUB": (("rouble", "roubles", "m"), ("kopeck", "kopecks", "m")),
        "BRL": (("réal", "réais", "m"), ("centavo", "centavos", "m")),
        "CHF": (("franc suisse", "francs suisses", "m"), _CENTIME),
        "INR": (("roupie", "roupies", "f"), ("paisa", "paise", "m")),
        "CAD": (("dollar canadien", "dollars canadiens", "m"), _CENT),
        "AUD": (("dollar australien", "dollars australiens", "m"), _CENT),
        "MXN": (("peso", "pesos", "m"), ("centavo", "centavos", "m")),
        "SEK": (("couronne", "couronnes", "f"), ("öre", "öre", "m")),
        "PLN": (("zloty", "zlotys", "m"), ("grosz", "groszy", "m")),
    }
    percent_noun: ClassVar[Noun] = ("pour cent", "pour cent", "m")
    degree: ClassVar[Noun] = ("degré", "degrés", "m")
    scales: ClassVar[dict[int, Noun]] = {3: ("mille", "mille", "m"), 6: ("million", "millions", "m"),
                                         9: ("milliard", "milliards", "m")}
    sentence_starters = STARTERS

    def cardinal(self, n: int) -> str:
        if n < 0:
            return f"moins {self.cardinal(-n)}"
        if n >= 10**15:
            return self.digits(str(n))
        if n < 1000:
            return _below_thousand(n)
        words = []
        for size, name in _SCALES:
            count, n = divmod(n, size)
            if count:
                words.append(f"{self.cardinal(count)} {name}{'s' if count > 1 else ''}")
        thousands, rest = divmod(n, 1000)
        if thousands:  # "mille", "deux mille", "quatre-vingt mille", "deux cent mille"
            words.append("mille" if thousands == 1 else re.sub(r"(vingt|cent)s$", r"\1", _below_thousand(thousands))
                         + " mille")
        if rest:
            words.append(_below_thousand(rest))
        return " ".join(words)

    def ordinal(self, n: int, feminine_form: bool = False) -> str:
        """"premier" / "première", "deuxième", "vingt et unième", "quatre-vingtième", "centième",
        "millième", "millionième"."""
        if n == 1:
            return "première" if feminine_form else "premier"
        words = re.sub(r"^un (million|milliard)", r"\1", self.cardinal(n))
        words = re.sub(r"(vingt|cent|million|milliard)s$", r"\1", words)
        if words.endswith("cinq"):
            return words + "uième"
        if words.endswith("neuf"):
            return words[:-1] + "vième"
        return (words[:-1] if words.endswith("e") else words) + "ième"

    def fraction(self, numerator: int, denominator: int) -> str:
        count = self.cardinal(numerator)
        several = numerator > 1
        if denominator == 2:
            return f"{count} demi{'s' if several else ''}"
        if denominator == 3:
            return f"{count} tiers"
        if denominator == 4:
            return f"{count} quart{'s' if several else ''}"
        return f"{count} {self.ordinal(denominator)}{'s' if several else ''}"

    def counted(self, num: Num, noun: Noun) -> str:
        """"une tonne", "vingt et une heures", "un million d'euros", and the singular below two:
        "1,5 kilomètre", "zéro degré"."""
        singular, plural, noun_gender = noun
        words = self.number(num)
        if noun_gender == "f" and num.fraction is None:
            words = feminine(words)
        whole = int(num.whole)
        if num.fraction is None and whole >= 10**6 and whole % 10**6 == 0:
            return self.of(words, noun)
        return self.join([words, singular if whole < 2 else plural])

    def of(self, amount: str, noun: Noun) -> str:
        return f"{amount} d'{noun[1]}" if _ELIDED.match(noun[1]) else f"{amount} de {noun[1]}"

    def dated(self, det: str | None, year: int | None, month: int, day: int | None, named: bool) -> str:
        said_year = self.cardinal(year) if year is not None else ""
        if day is None:
            return self.join([_MONTHS[month - 1], said_year])
        lead = "" if det or named else "le"
        return self.join([lead, self.ordinal(1) if day == 1 else self.cardinal(day), _MONTHS[month - 1],
                          said_year])

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        """"dix-neuf heures trente", "une heure", "vingt et une heures une", "minuit", "midi"."""
        if period:
            hour = hour % 12 + (12 if period == "pm" else 0)
        if minute == 0 and not second and hour in (0, 12):
            return "minuit" if hour == 0 else "midi"
        words = [self.counted(Num(False, str(hour)), ("heure", "heures", "f"))]
        if minute or second:
            words.append(feminine(self.cardinal(minute)))  # "minute" is feminine: "sept heures une"
        if second:
            words += ["et", self.counted(Num(False, str(second)), ("seconde", "secondes", "f"))]
        return self.join(words)

    def times(self, n: int) -> str:
        return self.counted(Num(False, str(n)), ("fois", "fois", "f"))  # "une fois", "trois fois"

    def phone_group(self, digits: str) -> str:
        """Pairs, as the French say phone numbers ("zéro six, douze, trente-quatre"): a pair with a
        leading zero is "zéro" and its digit; an odd group starts with its first three digits."""
        pairs = [digits[:3]] if len(digits) % 2 and len(digits) > 1 else []
        rest = digits[3:] if pairs else digits
        pairs += [rest[i:i + 2] for i in range(0, len(rest), 2)]
        return ", ".join(self._pair(p) for p in pairs)

    def _pair(self, digits: str) -> str:
        significant = digits.lstrip("0")
        if not significant:
            return self.digits(digits)
        return self.join([self.digits(digits[:len(digits) - len(significant)]), self.cardinal(int(significant))])

    def extra_rules(self) -> list[Rule]:
        return [*continental_rules(self), *french_rules(self)]
