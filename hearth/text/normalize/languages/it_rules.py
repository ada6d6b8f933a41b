"""What only Italian writes: ordinals "1º", "1ª" and "3°" where the degree sign stands for "º"
("il 3° posto", "la 2° volta"; not "30° e sole", which is degrees), "1" before a noun ("un'ora",
"una volta", "uno zaino": the noun's gender guessed), clock times with a full stop after the words
that announce them ("alle 19.30"), "n. 5" and "pag. 5", "2,5 mln €" and national phone numbers
("06 1234 5678", "333 123 4567")."""

from __future__ import annotations

import re

from hearth.text.normalize.language import Rule, word_set
from hearth.text.normalize.languages.continental import (
    BEFORE,
    DAY,
    DIGIT,
    Continental,
    roman,
    words_before,
)
from hearth.text.normalize.languages.continental_rules import numbered_rule
from hearth.text.normalize.rules import number_pattern, parse_number

__all__ = ["ELISIONS", "STARTERS", "indefinite", "italian_rules", "noun_gender"]

# An article or articulated preposition before a number: its full form and its elided form ("il"
# / "l'", "del" / "dell'"), the elided one before a vowel ("l'otto", "dell'undici", "all'ottanta").
ELISIONS = {"il": "l'", "del": "dell'", "dal": "dall'", "al": "all'", "nel": "nell'", "sul": "sull'"}

_STARTERS = (
    "Il Lo La I Gli Le Un Una Uno Di Da In Con Su Per Tra Fra E Ma O Se Che Non Come Quando Dove Perché Anche "
    "Poi Oggi Ieri Domani Ora Qui Questo Questa Quello Quella Io Tu Lui Lei Noi Voi Loro Del Della Al Alla Nel "
    "Nella Sul Sulla Dal Dalla Alle Ci Si Mi Ti Vi Ne Sono Ecco Grazie Dopo Prima Però Quindi Infatti Inoltre")
STARTERS = word_set(_STARTERS)
# Words after "1" that show it is not counting a noun ("1 è dispari", "1 e 2", "1 di 3").
_NOT_NOUNS = word_set(
    "e ed o od di a ad da in con su per tra fra è era sarà sono non più meno che come se ma del della dei degli "
    "delle al alla ai agli alle dal dalla nel nella sul sulla x")
_VOWELS = "aeiouàèéìòùh"

# Nouns in -a that are masculine, in -e that are feminine, in -o that are feminine: the rest goes
# by its ending (-a, -zione, -tà feminine; -o masculine; an unknown -e masculine).
_MASCULINE_A = word_set(
    "problema sistema tema programma schema clima pianeta poeta papa dramma diploma panorama cinema pigiama "
    "enigma teorema dilemma telegramma diagramma fantasma dogma trauma aroma idioma giorno collega atleta "
    "luca andrea nicola mattia elia enea battista tobia giona")
_FEMININE_E = word_set(
    "parte notte chiave classe fine gente legge luce mente morte nave neve pelle sete fame voce sede carne fonte "
    "frase torre valle madre rete febbre arte corte sorte base fase canzone stagione ragione occasione "
    "televisione nazione regione lezione azione soluzione informazione opinione chiave tesi crisi analisi "
    "ipotesi sintesi diagnosi")
_FEMININE_O = word_set("mano radio foto moto auto eco dinamo")


def noun_gender(word: str) -> str:
    """"f" or "m" for an Italian noun in the singular, as guessed."""
    lower = word.lower().replace("’", "'")
    if lower in _MASCULINE_A:
        return "m"
    if lower in _FEMININE_E or lower in _FEMININE_O:
        return "f"
    if lower.endswith(("zione", "sione", "gione", "tà", "tù", "udine", "igine")):
        return "f"
    return "f" if lower.endswith("a") else "m"


def indefinite(gender: str, noun: str) -> str:
    """"one" as the article before `noun`: "un grado", "uno zaino", "una tonnellata", "un'ora"."""
    lower = noun.lower()
    if gender == "f":
        return f"un'{noun}" if lower[0] in _VOWELS and not lower.startswith("h") else f"una {noun}"
    if re.match(r"s[^aeiouàèéìòù]|z|gn|ps|pn|x|y|i[aeiou]", lower):
        return f"uno {noun}"
    return f"un {noun}"


_FEMININE_DETS = ("la", "una", "della", "alla", "dalla", "nella", "sulla", "le", "delle", "alle", "dalle", "nelle",
                  "sulle")
_PLURAL_DETS = ("i", "gli", "le", "dei", "degli", "delle", "ai", "agli", "alle", "nei", "negli", "nelle")
_DETS = frozenset({*_FEMININE_DETS, *_PLURAL_DETS, "il", "lo", "un", "del", "dello", "al", "allo", "dal", "nel", "sul"})
_CLOCK_CUES = frozenset({"alle", "dalle", "le", "ore"})  # "alle 19.30", "entro le 19.30"
_NUMBERED = {"n": "numero", "N": "numero", "nr": "numero", "Nr": "numero", "pag": "pagina", "p": "pagina",
             "art": "articolo", "Art": "articolo", "cap": "capitolo", "vol": "volume"}
_CURRENCY = {"€": "EUR", "$": "USD", "£": "GBP"}
_EXPONENTS = {"k": 3, "M": 6, "mln": 6, "Mln": 6, "mld": 9, "Mld": 9}


def italian_rules(lang: Continental) -> list[Rule]:
    return [*_number_rules(lang), *_amount_rules(lang)]


def _number_rules(lang: Continental) -> list[Rule]:
    number = number_pattern(lang)
    ordinal = re.compile(rf"(?P<n>{DIGIT}\d{{0,3}})(?P<mark>[°ºª])(?!\s?[CFK]\b|\w)")
    elided = re.compile(rf"(?<![\w'’])(?P<det>{'|'.join(ELISIONS)}|{'|'.join(a.capitalize() for a in ELISIONS)})"
                        r"\s+(?=\d)")
    counted = re.compile(rf"(?=\d){BEFORE}{number}[ \u00a0](?P<noun>[^\W\d_](?:[^\W\d_]|['’])*)(?![\w'’])")
    century = re.compile(r"\b(?P<r>[IVXLC]{1,7})(?=\s+(?:secol[oi]|sec\.)(?!\w))")  # "XXI secolo"

    def say_ordinal(m: re.Match[str]) -> str | None:
        before = words_before(m.string, m.start(), 1)
        det = before[0] if before and before[0] in _DETS else None
        mark = m.group("mark")
        following = re.match(r"[ \u00a0]+([^\W\d_][\w'’]*)", m.string[m.end():])
        noun = following.group(1) if following else None
        if mark == "°" and det is None and (noun is None or not noun[0].islower() or noun in _NOT_NOUNS):
            return None  # degrees: "30°", "30° e sole"
        female = mark == "ª" or det in _FEMININE_DETS or (not det and noun is not None and noun_gender(noun) == "f")
        said = lang.ordinal(int(m.group("n")))[:-1]
        return said + (("e" if female else "i") if det in _PLURAL_DETS else ("a" if female else "o"))

    def say_elided(m: re.Match[str]) -> str | None:
        """"il 8" -> "l'otto", "dal 11" -> "dall'undici", "al 06" -> "allo zero sei": the article as
        the number's first sound asks (the number itself is said by its own rule)."""
        number = re.match(r"(\d+)([/.-]\d)?", m.string[m.end():])
        if number is None or number.group(1) == "1":
            return None
        # a leading zero is said ("06": "zero sei"), but for a date's day ("08/12": "otto")
        spoken_zero = number.group(1).startswith("0") and not number.group(2)
        first = "zero" if spoken_zero else lang.cardinal(int(number.group(1)))
        written = m.group("det")
        if first[0] in "aeiou":
            article = ELISIONS[written.lower()]
        elif first.startswith("z"):  # "lo zero", "allo zero"
            article = ELISIONS[written.lower()][:-1] + "o "
        else:
            return None
        return article.capitalize() if written[0].isupper() else article

    def say_counted(m: re.Match[str]) -> str | None:
        """A number and the noun it counts: "un'ora", "uno zaino", "due milioni di abitanti"."""
        num, noun = parse_number(m), m.group("noun")
        # "1 dell'anno", "1 e 2": the number counts no noun
        if num.fraction is not None or num.negative or noun.lower() in _NOT_NOUNS or "'" in noun or "’" in noun:
            return None
        n = int(num.whole)
        if n >= 10**6 and n % 10**6 == 0:
            return lang.of(lang.cardinal(n), (noun, noun, "m"))
        return indefinite(noun_gender(noun), noun) if n == 1 else None

    return [Rule("ordinal", ordinal, say_ordinal, 25), Rule("number", elided, say_elided, 25),
            Rule("number", counted, say_counted, 50),
            Rule("ordinal", century, lambda m: lang.ordinal(value) if (value := roman(m.group("r"))) else None, 44)]


def _amount_rules(lang: Continental) -> list[Rule]:
    clock = re.compile(rf"(?P<h>{DAY})[.:](?P<min>[0-5]\d)(?![\w]|[.,]\d)")
    scaled = re.compile(rf"(?=[-−\d]){BEFORE}{number_pattern(lang)}\s?(?P<scale>mln|Mln|mld|Mld|k|M)\.?"
                        r"(?:\s?(?P<cur>[€$£]))?(?![\w])")
    phone = re.compile(r"(?=[03])(?<![\w+])(?:0\d{1,3}|3\d{2})[ ./-]\d{3,4}[ .-]?\d{3,4}(?![\w]|[.,]\d)")

    def say_scaled(m: re.Match[str]) -> str | None:
        cur = m.group("cur")
        if m.group("scale") in ("k", "M") and not cur:
            return None  # "5 k", "3 M": not amounts without a currency
        noun = lang.currencies[_CURRENCY[cur]][0] if cur else None
        return lang.scaled(parse_number(m), _EXPONENTS[m.group("scale")], noun)

    def say_clock(m: re.Match[str]) -> str | None:
        # "19.30" is a time after the words that announce one ("alle 19.30"), "19:30" always
        cue = words_before(m.string, m.start(), 1)
        if int(m.group("h")) > 23 or (":" not in m.group() and not (cue and cue[0] in _CLOCK_CUES)):
            return None
        return lang.time(int(m.group("h")), int(m.group("min")), None, None)

    return [Rule("time", clock, say_clock, 14), Rule("currency", scaled, say_scaled, 19),
            numbered_rule(lang, _NUMBERED, r"(?<![\w.])", r"(?:\.\s?|[°º]\s?)"),
            Rule("phone", phone, lambda m: _phone(lang, m), 12)]


def _phone(lang: Continental, m: re.Match[str]) -> str | None:
    groups = re.findall(r"\d+", m.group())
    return lang.phone(groups, False) if 6 <= sum(map(len, groups)) <= 11 else None
