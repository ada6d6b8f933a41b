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

from hearth.text.normalize.language import Noun, Num, Rule, currency_nouns, nouns, word_set, word_table
from hearth.text.normalize.languages.continental import DAY, Continental, month_table
from hearth.text.normalize.languages.continental_rules import continental_rules
from hearth.text.normalize.languages.it_rules import ELISIONS, STARTERS, indefinite, italian_rules, noun_gender

__all__ = ["Italian"]

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
    words = word_table(
        "versus a; per al; 24/7 ventiquattro ore su ventiquattro, sette giorni su sette; minus meno; point virgola; "
        "to a; percent per cento; and e; plus più; over su; thousand mila; million milioni; billion miliardi")
    # "/" in an address: "slash", as Italians read web addresses ("barra" is heard too)
    marks = word_table(
        ". punto; @ chiocciola; / slash; : due punti; - trattino; _ trattino basso; ? punto interrogativo; = uguale; "
        "# cancelletto; ~ tilde")
    symbols = word_table(
        "& e; + più; = uguale; @ chiocciola; # cancelletto; ~ circa; × per; ÷ diviso; ° gradi; § paragrafo")
    abbreviations = word_table(
        "Sig.: Signor; Sig.ra: Signora; Sig.na: Signorina; Sigg.: Signori; Dott.: Dottor; Dott.ssa: Dottoressa; "
        "Dr.: Dottor; Prof.: Professor; Prof.ssa: Professoressa; Avv.: Avvocato; Ing.: Ingegner; Arch.: Architetto; "
        "Geom.: Geometra; Egr.: Egregio; Gent.: Gentile; Gent.mo: Gentilissimo; Gent.ma: Gentilissima; "
        "Spett.: Spettabile; ecc.: eccetera; p.es.: per esempio; p. es.: per esempio; ad es.: ad esempio; "
        "es.: esempio; cfr.: confronta; ca.: circa; tel.: telefono; Tel.: Telefono; pag.: pagina; pagg.: pagine; "
        "sec.: secolo; vol.: volume; max.: massimo; a.C.: avanti Cristo; d.C.: dopo Cristo; N.B.: nota bene; "
        "P.S.: post scriptum; S.p.A.: S P A; S.r.l.: S R L; s.r.l.: S R L; P.za: Piazza; p.za: piazza; C.so: Corso; "
        "V.le: Viale; Sant': Sant'", ": ")
    spelled_as_words = word_set(
        "NATO ONU UNESCO UNICEF FIFA UEFA NASA ESA OPEC FIAT RAI ANSA ISTAT INPS INAIL IVA IRPEF IMU TAR PIL CONI ENI "
        "ENEL ANAS USA COVID PIN RAM ROM GIF JPEG IKEA LEGO LASER RADAR AIDS CAP OK")
    months, month_abbreviations = month_table(
        "gennaio gen; febbraio feb; marzo mar; aprile apr; maggio mag; giugno giu; luglio lug; agosto ago; "
        "settembre set sett; ottobre ott; novembre nov; dicembre dic")
    day_before_month = rf"(?P<d>{DAY})[°º]?\s+"
    date_determiners = frozenset([*ELISIONS, *ELISIONS.values(), *_WEEKDAYS])
    # "in" and "mi" are left out: in Italian they are words ("5 in tutto", "mi piace")
    units = nouns(
        "°C grad(o|i) Celsius; °F grad(o|i) Fahrenheit; K kelvin; km/h chilometr(o|i) orari(o|); "
        "mph migli(o|a) orari(o|e); m/s metr(o|i) al secondo; kWh chilowattora; MWh megawattora; Wh wattora; "
        "kW chilowatt; MW megawatt; W watt; V volt; mA milliampere; A ampere; Hz hertz; kHz chilohertz; MHz megahertz; "
        "GHz gigahertz; km chilometr(o|i); cm centimetr(o|i); mm millimetr(o|i); m metr(o|i); ft pied(e|i); "
        "kg chilogramm(o|i); mg milligramm(o|i); g gramm(o|i); t tonnellat(a|e), f; lb libbr(a|e), f; "
        "oz (oncia|once), f; l litr(o|i); L litr(o|i); ml millilitr(o|i); mL millilitr(o|i); hPa ettopascal; "
        "mbar millibar; bar bar; Pa pascal; dB decibel; lx lux; ppm part(e|i) per milione, f; "
        "µg/m³ microgramm(o|i) per metro cubo; m² metr(o|i) quadrat(o|i); m³ metr(o|i) cub(o|i); "
        "km² chilometr(o|i) quadrat(o|i); kB kilobyte; KB kilobyte; MB megabyte; GB gigabyte; TB terabyte; "
        "ms millisecond(o|i); s second(o|i); min minut(o|i); h (ora|ore), f; "
        # beside the shared units: what recipes and batteries write
        "cl centilitr(o|i); dl decilitr(o|i); mAh milliampereora", gender="m")
    currencies = currency_nouns(
        "EUR euro / centesim(o|i); USD dollar(o|i) / centesim(o|i); GBP sterlin(a|e), f / (penny|pence); JPY yen; "
        "CNY yuan; KRW won; RUB rubl(o|i) / copec(o|hi); BRL (real|reais) / centavo(s); "
        "CHF franc(o|hi) svizzer(o|i) / centesim(o|i); INR rupi(a|e), f / pais(a|e); "
        "CAD dollar(o|i) canades(e|i) / centesim(o|i); AUD dollar(o|i) australian(o|i) / centesim(o|i); "
        "MXN peso(s) / centavo(s); SEK coron(a|e), f / öre; PLN zloty / grosz(y)", gender="m")
    degree: ClassVar[Noun] = ("grado", "gradi", "m")
    scales: ClassVar[dict[int, Noun]] = {3: ("mille", "mila", "m"), 6: ("milione", "milioni", "m"),
                                         9: ("miliardo", "miliardi", "m")}
    sentence_starters = STARTERS
    # Phone numbers digit by digit (`Continental.phone_group`), as Italians dictate them ("zero sei,
    # uno due tre quattro"), in the groups as written.

    def below_million(self, n: int) -> str:
        return _small(n)

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
            return self.join([self.months[month - 1], said_year])
        said_day = "primo" if day == 1 else self.cardinal(day)
        rest = self.join([self.months[month - 1], said_year])
        if det is not None or named:  # "lunedì 8 dicembre", "dell'8/12" (elided by `italian_rules`)
            return self.join([said_day, rest])
        return ("l'" + said_day if said_day[0] in "aeiou" else f"il {said_day}") + " " + rest

    def clock(self, hour: int, minute: int, second: int | None) -> str:
        """"diciannove e trenta", "una e cinque" (the hour is "una", as "ora" is feminine)."""
        words = ["una" if hour == 1 else self.cardinal(hour), *(["e", self.cardinal(minute)] if minute else [])]
        return self.join([*words, *self.and_seconds(second)])

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
