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

import re
from typing import ClassVar

from hearth.text.normalize.language import Noun, Num, Rule, currency_nouns, nouns, word_set, word_table
from hearth.text.normalize.languages.continental import DAY, Continental, below_hundred, month_table
from hearth.text.normalize.languages.continental_rules import continental_rules
from hearth.text.normalize.languages.fr_rules import STARTERS, feminine, french_rules

__all__ = ["French"]

# Words before which "de" is "d'": a vowel, or an "h" that is not aspirated ("d'heures", "de hertz").
_ELIDED = re.compile(r"^(?:[aeiouyàâéèêëîïôûü]|h(?!ertz))", re.I)


def _below_thousand(n: int) -> str:
    """"cent", "deux cents", "deux cent un": "cents" takes its "s" only at the end."""
    hundreds, rest = divmod(n, 100)
    small = below_hundred("fr")
    if not hundreds:
        return small[rest]
    head = "cent" if hundreds == 1 else f"{small[hundreds]} cent{'' if rest else 's'}"
    return f"{head} {small[rest]}" if rest else head


class French(Continental):
    code = "fr"
    name = "french"
    group_marks = ". "
    decimals_as_number = True
    words = word_table(
        "versus à; per par; 24/7 vingt-quatre heures sur vingt-quatre, sept jours sur sept; minus moins; "
        "point virgule; to à; percent pour cent; and et; plus plus; over sur; thousand mille; million millions; "
        "billion milliards")
    # "/" in an address: "slash", as the French read web addresses ("barre oblique" is the name of
    # the sign in writing, rarely said)
    marks = word_table(
        ". point; @ arobase; / slash; : deux-points; - tiret; _ tiret bas; ? point d'interrogation; = égal; # dièse; "
        "~ tilde")
    symbols = word_table(
        "& et; + plus; = égale; @ arobase; # dièse; ~ environ; × fois; ÷ divisé par; ° degrés; § paragraphe")
    abbreviations = word_table(
        "env.: environ; etc.: et cetera; p. ex.: par exemple; p.ex.: par exemple; c.-à-d.: c'est-à-dire; "
        "c-à-d: c'est-à-dire; cf.: confer; Cf.: Confer; Mme: Madame; Mmes: Mesdames; Mlle: Mademoiselle; "
        "Mlles: Mesdemoiselles; MM.: Messieurs; Dr: Docteur; Dr.: Docteur; Pr: Professeur; Pr.: Professeur; "
        "Prof.: Professeur; St: Saint; Ste: Sainte; av.: avenue; bd: boulevard; bd.: boulevard; tél.: téléphone; "
        "Tél.: Téléphone; max.: maximum; resp.: respectivement; vol.: volume; chap.: chapitre; ex.: exemple; "
        "Cie: Compagnie; Mgr: Monseigneur; av. J.-C.: avant Jésus-Christ; apr. J.-C.: après Jésus-Christ; "
        "J.-C.: Jésus-Christ; hab.: habitants; qqch.: quelque chose; qqn: quelqu'un; svp: s'il vous plaît; "
        "SVP: s'il vous plaît; éd.: édition; incl.: inclus; c. à c.: cuillère à café; c. à s.: cuillère à soupe; "
        "c.à.c.: cuillère à café; c.à.s.: cuillère à soupe", ": ")
    spelled_as_words = word_set(
        "OTAN ONU UNESCO UNICEF FIFA UEFA NASA ESA OPEP SIDA OVNI ENA INSEE CAC CNIL SAMU SMIC CAPES COVID PIN RAM ROM "
        "GIF JPEG IKEA LEGO NASDAQ LASER RADAR OK")
    months, month_abbreviations = month_table(
        "janvier janv; février févr fév; mars; avril avr; mai; juin; juillet juil; août; septembre sept; octobre oct; "
        "novembre nov; décembre déc")
    day_before_month = rf"(?P<d>{DAY})(?:er|ᵉʳ)?\s+"
    # "le 08/12", "du 08/12", "au 08/12", "jusqu'au 08/12", "lundi 08/12": the article said once
    date_determiners = frozenset({"le", "du", "au", "jusqu'au", "lundi", "mardi", "mercredi", "jeudi", "vendredi",
                                  "samedi", "dimanche"})
    units = nouns(
        "°C degré(s) Celsius; °F degré(s) Fahrenheit; K kelvin(s); km/h kilomètre(s) par heure; mph mile(s) par heure; "
        "m/s mètre(s) par seconde; kWh kilowattheure(s); MWh mégawattheure(s); Wh wattheure(s); kW kilowatt(s); "
        "MW mégawatt(s); W watt(s); V volt(s); mA milliampère(s); A ampère(s); Hz hertz; kHz kilohertz; MHz mégahertz; "
        "GHz gigahertz; km kilomètre(s); cm centimètre(s); mm millimètre(s); m mètre(s); mi mile(s); ft pied(s); "
        "in pouce(s); kg kilogramme(s); mg milligramme(s); g gramme(s); t tonne(s), f; lb livre(s), f; oz once(s), f; "
        "l litre(s); L litre(s); ml millilitre(s); mL millilitre(s); hPa hectopascal(s); mbar millibar(s); bar bar(s); "
        "Pa pascal(s); dB décibel(s); lx lux; ppm partie(s) par million, f; µg/m³ microgramme(s) par mètre cube; "
        "m² mètre(s) carré(s); m³ mètre(s) cube(s); km² kilomètre(s) carré(s); kB kilooctet(s); KB kilooctet(s); "
        "MB mégaoctet(s); GB gigaoctet(s); TB téraoctet(s); ms milliseconde(s), f; s seconde(s), f; min minute(s), f; "
        "h heure(s), f; "
        # beside the shared units: as French writes bytes, and what recipes and batteries write
        "ko kilooctet(s); Ko kilooctet(s); Mo mégaoctet(s); Go gigaoctet(s); To téraoctet(s); cl centilitre(s); "
        "dl décilitre(s); mAh milliampère(s)-heure(s)", gender="m")
    # the euro's hundredth as the French say it, "centime" (officially "cent")
    currencies = currency_nouns(
        "EUR euro(s) / centime(s); USD dollar(s) / cent(s); GBP livre(s), f / (penny|pence); JPY yen(s); CNY yuan(s); "
        "KRW won(s); RUB rouble(s) / kopeck(s); BRL (réal|réais) / centavo(s); CHF franc(s) suisse(s) / centime(s); "
        "INR roupie(s), f / pais(a|e); CAD dollar(s) canadien(s) / cent(s); AUD dollar(s) australien(s) / cent(s); "
        "MXN peso(s) / centavo(s); SEK couronne(s), f / öre; PLN zloty(s) / grosz(y)", gender="m")
    percent_noun: ClassVar[Noun] = ("pour cent", "pour cent", "m")
    degree: ClassVar[Noun] = ("degré", "degrés", "m")
    scales: ClassVar[dict[int, Noun]] = {3: ("mille", "mille", "m"), 6: ("million", "millions", "m"),
                                         9: ("milliard", "milliards", "m"), 12: ("billion", "billions", "m")}
    sentence_starters = STARTERS

    def below_million(self, n: int) -> str:
        if n < 1000:
            return _below_thousand(n)
        thousands, rest = divmod(n, 1000)
        # "mille", "deux mille", "quatre-vingt mille", "deux cent mille"
        head = "mille" if thousands == 1 else re.sub(r"(vingt|cent)s$", r"\1", _below_thousand(thousands)) + " mille"
        return f"{head} {_below_thousand(rest)}" if rest else head

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
            return self.join([self.months[month - 1], said_year])
        lead = "" if det or named else "le"
        return self.join([lead, self.ordinal(1) if day == 1 else self.cardinal(day), self.months[month - 1],
                          said_year])

    def clock(self, hour: int, minute: int, second: int | None) -> str:
        """"dix-neuf heures trente", "une heure", "vingt et une heures une", "minuit", "midi"."""
        if minute == 0 and not second and hour in (0, 12):
            return "minuit" if hour == 0 else "midi"
        words = [self.counted(Num(False, str(hour)), ("heure", "heures", "f"))]
        if minute or second:
            words.append(feminine(self.cardinal(minute)))  # "minute" is feminine: "sept heures une"
        return self.join([*words, *self.and_seconds(second)])

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
