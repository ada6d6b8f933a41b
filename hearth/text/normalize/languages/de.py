"""German: the comma as decimal mark (and "21.5" as sensors write it), full stops or spaces
between thousands, dates day first ("08.12.2026": "der achte Dezember zweitausendsechsundzwanzig",
"am 3. Mai": "am dritten Mai"), the 24-hour clock said with "Uhr" ("19:30": "neunzehn Uhr
dreißig"), years in hundreds ("neunzehnhundertneunundneunzig"), decimals digit by digit ("drei Komma
eins vier"), "ein"/"eine" before a noun where the number alone is "eins".

Cardinals, ordinals and years come from num2words, which is right for German below a thousand
and in its nouns ("eine Million", "zwei Milliarden", capitalised); what it gets wrong or does not
know is written here:
- a count before "tausend" or before "Millionen" ends in "ein"/"eine", not "eins": num2words
  writes "einhunderteinstausend" (101 000) and "einhunderteins Millionen" (101 000 000);
- "eins" before a noun is "ein" or "eine" by the noun's gender ("1 Stunde": num2words says "eins");
- an ordinal takes the ending its article and noun ask for (num2words gives "dritte" only: "am
  dritten", "dritter Stock");
- it is slow (some 300 µs for a seven-digit number, a scan over its whole table of scale words), so
  it is asked for numbers under a thousand once each and larger ones are composed here."""

from __future__ import annotations

import functools
import re
from typing import ClassVar

from num2words import num2words

from hearth.text.normalize.language import Noun, Num, Rule, currency_nouns, nouns, word_set, word_table
from hearth.text.normalize.languages.continental import DAY, Continental, below_hundred, month_table
from hearth.text.normalize.languages.continental_rules import continental_rules
from hearth.text.normalize.languages.de_grammar import STARTERS, determiner_ending, inflect
from hearth.text.normalize.languages.de_rules import determiner, german_rules

__all__ = ["German"]



def _below_thousand(n: int) -> str:
    hundreds, rest = divmod(n, 100)
    small = below_hundred("de")
    if not hundreds:
        return small[rest]
    return ("ein" if hundreds == 1 else small[hundreds]) + "hundert" + (small[rest] if rest else "")


@functools.cache
def _large_ordinal(n: int) -> str:
    return num2words(n, lang="de", to="ordinal")


# The ordinal's end after a last word under twenty: "erste", "dritte", "siebte", "achte", else "-te".
_ORDINAL_ENDS = (("eins", "erste"), ("drei", "dritte"), ("sieben", "siebte"), ("acht", "achte"))


def _with_capitals(table: dict[str, str]) -> dict[str, str]:
    """The abbreviations as written inside a sentence and at its start ("z. B." / "Z. B.")."""
    out = dict(table)
    for key, said in table.items():
        if key[0].islower():
            out.setdefault(key[0].upper() + key[1:], said[0].upper() + said[1:])
    return out


class German(Continental):
    code = "de"
    name = "german"
    group_marks = ". "  # full stops, or spaces as DIN 5008 writes them ("10 000")
    words = word_table(
        "versus zu; per pro; 24/7 vierundzwanzig sieben; minus minus; point Komma; to bis; percent Prozent; and und; "
        "plus plus; over durch; thousand tausend; million Millionen; billion Milliarden")
    # "@" read out in an address: "at", as Germans dictate e-mail addresses ("Klammeraffe" names
    # the sign, nobody dictates it)
    marks = word_table(
        ". Punkt; @ at; / Schrägstrich; : Doppelpunkt; - Bindestrich; _ Unterstrich; ? Fragezeichen; = gleich; "
        "# Raute; ~ Tilde")
    symbols = word_table(
        "& und; + plus; = gleich; @ at; # Raute; ~ circa; × mal; ÷ geteilt durch; ° Grad; § Paragraf; §§ Paragrafen")
    abbreviations = _with_capitals(word_table(
        "z. B.: zum Beispiel; z.B.: zum Beispiel; z. T.: zum Teil; z.T.: zum Teil; usw.: und so weiter; "
        "bzw.: beziehungsweise; d. h.: das heißt; d.h.: das heißt; u. a.: unter anderem; u.a.: unter anderem; "
        "o. Ä.: oder Ähnliches; o.Ä.: oder Ähnliches; u. Ä.: und Ähnliches; u. U.: unter Umständen; "
        "u.U.: unter Umständen; v. a.: vor allem; v.a.: vor allem; i. d. R.: in der Regel; u. v. m.: und vieles mehr; "
        "s. o.: siehe oben; s. u.: siehe unten; ca.: circa; evtl.: eventuell; ggf.: gegebenenfalls; inkl.: inklusive; "
        "MwSt.: Mehrwertsteuer; exkl.: exklusive; zzgl.: zuzüglich; max.: maximal; mind.: mindestens; "
        "vgl.: vergleiche; bspw.: beispielsweise; etc.: et cetera; sog.: sogenannte; bzgl.: bezüglich; ehem.: ehemals; "
        "gem.: gemäß; geb.: geboren; gest.: gestorben; Nr.: Nummer; Dr.: Doktor; Prof.: Professor; Hr.: Herr; "
        "Hrn.: Herrn; Fr.: Frau; Str.: Straße; Tel.: Telefon; St.: Sankt; Jh.: Jahrhundert; Abs.: Absatz; "
        "Kap.: Kapitel; Std.: Stunden; Min.: Minuten; Sek.: Sekunden; Mio.: Millionen; Mrd.: Milliarden; "
        "Tsd.: Tausend; Hbf.: Hauptbahnhof; e. V.: eingetragener Verein; GmbH: G M B H; TL: Teelöffel; "
        "EL: Esslöffel", ": "))
    spelled_as_words = word_set(
        "NATO UNO UNESCO UNICEF FIFA UEFA NASA ESA OPEC DAX DIN ISO PIN TAN GIF JPEG RAM ROM LAN WLAN SIM COVID IKEA "
        "LEGO NASDAQ LASER RADAR AIDS OK")
    months, month_abbreviations = month_table(
        "Januar Jan; Februar Feb; März Mär Mrz; April Apr; Mai; Juni Jun; Juli Jul; August Aug; September Sep Sept; "
        "Oktober Okt; November Nov; Dezember Dez")
    day_before_month = rf"(?P<d>{DAY})\.\s?"
    # "am 8.12.", "vom 8.12.", "den 8.12.", "bis 8.12." (said "bis zum achten Dezember")
    date_determiners = frozenset({"am", "vom", "zum", "beim", "im", "dem", "den", "der", "des", "bis", "ab", "seit",
                                  "vor", "nach"})
    # "in" (inch) is left out: in German it is the preposition ("5 in Berlin")
    units = nouns(
        "°C Grad Celsius; °F Grad Fahrenheit; K Kelvin; km/h Kilometer pro Stunde, m; mph Meile(n) pro Stunde, f; "
        "m/s Meter pro Sekunde, m; kWh Kilowattstunde(n), f; MWh Megawattstunde(n), f; Wh Wattstunde(n), f; "
        "kW Kilowatt; MW Megawatt; W Watt; V Volt; mA Milliampere; A Ampere; Hz Hertz; kHz Kilohertz; MHz Megahertz; "
        "GHz Gigahertz; km Kilometer, m; cm Zentimeter, m; mm Millimeter, m; m Meter, m; mi Meile(n), f; ft Fuß, m; "
        "kg Kilogramm; mg Milligramm; g Gramm; t Tonne(n), f; lb Pfund; oz Unze(n), f; l Liter, m; L Liter, m; "
        "ml Milliliter, m; mL Milliliter, m; hPa Hektopascal; mbar Millibar; bar Bar; Pa Pascal; dB Dezibel; lx Lux; "
        "ppm P P M; µg/m³ Mikrogramm pro Kubikmeter; m² Quadratmeter, m; m³ Kubikmeter, m; km² Quadratkilometer, m; "
        "kB Kilobyte; KB Kilobyte; MB Megabyte; GB Gigabyte; TB Terabyte; ms Millisekunde(n), f; s Sekunde(n), f; "
        "min Minute(n), f; h Stunde(n), f; "
        # beside the shared units: what recipes and batteries write
        "cl Zentiliter, m; dl Deziliter, m; mAh Milliamperestunde(n), f", gender="n")
    currencies = currency_nouns(
        "EUR Euro / Cent; USD Dollar / Cent; GBP Pfund, n / (Penny|Pence); JPY Yen; CNY Yuan; KRW Won; "
        "RUB Rubel / Kopeke(n), f; BRL (Real|Reais) / Centavo(s); CHF Franken / Rappen; INR Rupie(n), f / Pais(a|e); "
        "CAD kanadische(r|) Dollar / Cent; AUD australische(r|) Dollar / Cent; MXN Peso(s) / Centavo(s); "
        "SEK Krone(n), f / Öre, n; PLN Złoty / Groschen", gender="m")
    percent_noun: ClassVar[Noun] = ("Prozent", "Prozent", "n")
    degree: ClassVar[Noun] = ("Grad", "Grad", "n")
    scales: ClassVar[dict[int, Noun]] = {3: ("tausend", "tausend", "n"), 6: ("Million", "Millionen", "f"),
                                         9: ("Milliarde", "Milliarden", "f"), 12: ("Billion", "Billionen", "f")}
    sentence_starters = STARTERS
    regnal_stop = True
    # Phone numbers digit by digit (`Continental.phone_group`), as Germans dictate them ("null drei
    # null"), in the groups as written: pairs ("dreißig") are heard too, but digits leave a listener
    # no doubt. "zwei", not the telephone's "zwo", which is a speaker's habit rather than the written
    # word.

    def below_million(self, n: int) -> str:
        if n < 1000:
            return _below_thousand(n)
        thousands, rest = divmod(n, 1000)
        return _before_noun(_below_thousand(thousands), "") + "tausend" + (_below_thousand(rest) if rest else "")

    def ordinal(self, n: int) -> str:
        """As num2words says them ("erste", "dritte", "zwanzigste", "hundertste", "einhunderterste"),
        composed from the cardinal: "-te" after a last part under twenty, "-ste" after the rest."""
        if n >= 10**6:
            return _large_ordinal(n) if n < 10**15 else self.digits(str(n))
        words = {100: "hundert", 1000: "tausend"}.get(n) or self.cardinal(n)
        if 0 < n % 100 < 20:
            for end, ordinal in _ORDINAL_ENDS:
                if words.endswith(end):
                    return words[:-len(end)] + ordinal
            return words + "te"
        return words + "ste"

    def year(self, year: int) -> str:
        """"neunzehnhundertneunundneunzig" from 1100 to 1999, as num2words' years, else the cardinal."""
        hundreds, rest = divmod(year, 100)
        if 11 <= hundreds <= 19:
            return self.cardinal(hundreds) + "hundert" + (self.cardinal(rest) if rest else "")
        return self.cardinal(year)

    def fraction(self, numerator: int, denominator: int) -> str:
        if denominator == 2:
            return "einhalb" if numerator == 1 else f"{self.cardinal(numerator)} halbe"
        name = self.ordinal(denominator)[:-1] + "el"  # "dritte" -> "Drittel", "zwanzigste" -> "Zwanzigstel"
        return f"{'ein' if numerator == 1 else self.cardinal(numerator)} {name[0].upper()}{name[1:]}"

    def counted(self, num: Num, noun: Noun) -> str:
        """"ein Grad", "eine Stunde", "zwei Stunden", "1,5 Stunden" (plural but for exactly one)."""
        singular, plural, noun_gender = noun
        if num.fraction is None and int(num.whole) == 1:
            said = self.join(["eine" if noun_gender == "f" else "ein", singular])
            return self.join([self.words["minus"], said]) if num.negative else said
        return self.join([self.number(num), plural])

    def determiner(self, m: re.Match[str]) -> str | None:
        """As Continental's, and the first date's word for the second in "am 2. und 3. Juni"."""
        found = super().determiner(m)
        if found is None:
            word, _ = determiner(m.string, m.start())
            found = word if word in self.date_determiners else None
        return found

    def dated(self, det: str | None, year: int | None, month: int, day: int | None, named: bool) -> str:
        """"der achte Dezember" (a numeric date: its article said), "am achten Dezember", "achter
        Dezember" (a dateline "8. Dezember 2026"), "bis zum achten Dezember"."""
        said_year = self.year(year) if year is not None else ""
        if day is None:
            return self.join([self.months[month - 1], said_year])
        if det is None:
            lead, ending = ("", "er") if named else ("der", "e")
        elif det.lower() == "bis":
            lead, ending = "zum", "en"
        elif det.lower() in ("ab", "seit", "vor", "nach"):
            lead, ending = "dem", "en"
        else:
            lead, ending = "", determiner_ending(det, "m")
        return self.join([lead, inflect(self.ordinal(day), ending), self.months[month - 1], said_year])

    def clock(self, hour: int, minute: int, second: int | None) -> str:
        """"neunzehn Uhr dreißig", "ein Uhr"."""
        words = ["ein" if hour == 1 else self.cardinal(hour), "Uhr", self.cardinal(minute) if minute else ""]
        return self.join([*words, *self.and_seconds(second)])

    def count_of_scale(self, count: int) -> str:
        return _before_noun(self.cardinal(count), "e")  # "hunderteine Millionen"

    def times(self, n: int) -> str:
        return _before_noun(self.cardinal(n), "") + "mal"  # "einmal", "dreimal"

    def regnal(self, value: int, name: str) -> str:
        """"Ludwig XIV.": "Ludwig der Vierzehnte", "Elisabeth II.": "Elisabeth die Zweite" (a
        ruler's name in -a, -e or -th is a woman's)."""
        said = self.ordinal(value)
        article = "die" if name.endswith(("a", "e", "th")) else "der"
        return f"{article} {said[0].upper()}{said[1:]}"

    def extra_rules(self) -> list[Rule]:
        return [*continental_rules(self), *german_rules(self)]


def _before_noun(words: str, ending: str) -> str:
    """A count before a noun or "tausend": its last "eins" is "ein" ("einundzwanzigtausend" has
    none; "hunderteintausend", "hunderteine Millionen")."""
    return words[:-1] + ending if words.endswith("eins") else words

