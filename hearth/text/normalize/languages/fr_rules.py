"""What only French writes: ordinals "1er", "1re", "2e", "3ème", "2nd" and with Roman numerals
("XXIe siècle"), clock times "19h30" / "19 h 30", "une" before a feminine noun ("1 heure", "21
personnes": the noun's gender guessed), "M. Dupont", "n° 5", "64 Go", "2,5 M€" and national phone
numbers ("01 23 45 67 89")."""

from __future__ import annotations

import re

from hearth.text.normalize.language import Num, Rule, word_set
from hearth.text.normalize.languages.continental import BEFORE, DAY, DIGIT, Continental, roman
from hearth.text.normalize.rules import number_pattern, parse_number

__all__ = ["STARTERS", "feminine", "french_rules", "noun_gender"]

_STARTERS = (
    "Le La Les Un Une Des Du Au Aux Je Tu Il Elle On Nous Vous Ils Elles Ce Cette Ces Cet Et Mais Ou Donc Or "
    "Ni Car Puis Ensuite Alors Hier Demain Maintenant Ici Là Si Quand Comme Que Qui Quoi Où Pourquoi Comment "
    "Oui Non En Dans Sur Sous Avec Pour Par De Depuis Avant Après Pendant Mon Ma Mes Ton Ta Son Sa Ses Notre "
    "Nos Votre Vos Leur Leurs Voici Voilà Merci Enfin Bref Aussi Cependant Pourtant Toutefois Ainsi")
STARTERS = word_set(_STARTERS)


def feminine(words: str) -> str:
    """A cardinal before a feminine noun: its last "un" is "une" ("vingt et une", "quatre-vingt-une")."""
    return re.sub(r"(^|[\s-])un$", r"\1une", words)


# The gender of a noun after "un"/"une": French suffixes say it mostly; the common feminine nouns
# they miss are listed, as the masculine ones that look feminine. What nothing tells is masculine.
_FEMININE = word_set(
    "heure minute seconde semaine année journée nuit fois personne page chose place pièce étape partie voiture "
    "maison ville porte tonne livre once femme fille mère sœur idée victoire équipe fin main part clé clef tasse "
    "bouteille cuillère pomme fleur couleur valeur chaleur douleur odeur erreur peur largeur longueur hauteur "
    "profondeur vapeur image plage table chambre salle lampe ligne carte lettre photo vidéo phrase langue "
    "raison saison façon leçon chanson maison mer terre eau peau dent loi foi voix croix paix mort forêt souris "
    "dizaine centaine douzaine vingtaine étoile planète école classe note règle zone région rue route avenue "
    "gare station course balle boule boîte liste série radio moto auto faim soif nation question réponse "
    "famille vie envie sortie entrée tentative fête chaise porte fenêtre cuisine douche semaine")
_MASCULINE = word_set(
    "été comité côté pâté musée lycée trophée incendie génie parapluie magazine stade grade silence "
    "bonheur malheur honneur cœur moteur ordinateur secteur facteur serveur capteur compteur auteur acteur "
    "joueur docteur professeur directeur visiteur spectateur million milliard mille euro dollar jour mois an "
    "siècle article épisode modèle exemple groupe problème système programme thème kilomètre mètre litre "
    "verre livre-sterling")
_FEMININE_ENDINGS = ("tte", "tion", "sion", "xion", "ure", "ette", "ence", "ance", "ise", "ade", "elle", "euse", "ière",
                     "onne", "esse", "ie", "ée", "ude", "té", "ine", "ode", "ole", "oire", "aine", "eine", "ue")


def noun_gender(word: str) -> str:
    """"f" or "m" for a French noun, singular or plural, as guessed."""
    lower = word.lower().replace("’", "'")
    for form in (lower, lower[:-1] if len(lower) > 3 and lower[-1] in "sx" else lower):
        if form in _FEMININE:
            return "f"
        if form in _MASCULINE:
            return "m"
    singular = lower[:-1] if len(lower) > 3 and lower[-1] in "sx" else lower
    return "f" if singular.endswith(_FEMININE_ENDINGS) else "m"


# Words after a number that show it counts no noun ("1 000 000 de personnes", "21 sont venus").
_NOT_NOUNS = word_set("de d' du des et ou à au aux en pour par sur dans sont est ont a sera était avec sans fois")
_SUFFIX = r"ers|er|res|re|ères|ère|ᵉʳ|ʳᵉ|èmes|ème|ièmes|ième|emes|eme|es|e|è|ᵉ|ndes|nde|nds|nd"


def french_rules(lang: Continental) -> list[Rule]:
    number = number_pattern(lang)
    ordinal = re.compile(rf"(?P<n>{DIGIT}\d{{0,5}})(?P<s>{_SUFFIX})(?![\w])")
    roman_ordinal = re.compile(rf"\b(?P<r>[IVX]{{1,6}})(?P<s>{_SUFFIX})(?![\w])")
    clock = re.compile(rf"(?P<h>{DAY})\s?h\s?(?P<min>[0-5]\d)?(?![\w])")
    counted = re.compile(rf"(?=\d){BEFORE}{number}[ \u00a0](?P<noun>[^\W\d_](?:[^\W\d_]|['’-])*)(?![\w'’-])")
    mister = re.compile(r"(?<![\w.])M\.(?=\s+[A-ZÀ-Ý])")
    numero = re.compile(r"(?<![\w])[nN][°º]\s?(?P<n>\d+)(?![\w]|[.,]\d)")
    scaled = re.compile(rf"(?=[-−\d]){BEFORE}{number}\s?(?P<scale>k|M|Mds?|Mrd)\s?(?P<cur>€|\$|£)")
    # "24h/24", "7j/7": "vingt-quatre heures sur vingt-quatre", "sept jours sur sept"
    around = re.compile(rf"(?P<n>{DAY})\s?(?P<u>h|j)\s?/\s?(?P=n)(?![\w])")
    phone = re.compile(r"0(?<![\w+]0)[1-9](?:[ .-]?\d{2}){4}(?![\w]|[.,]\d)")
    currencies = {"€": "EUR", "$": "USD", "£": "GBP"}
    exponents = {"k": 3, "M": 6, "Md": 9, "Mds": 9, "Mrd": 9}

    def say_ordinal(n: int | None, suffix: str) -> str | None:
        if n is None:
            return None
        plural = "s" if suffix.endswith("s") else ""
        if suffix.rstrip("s") in ("er", "ᵉʳ", "re", "ère", "ʳᵉ"):
            return ("première" if suffix[0] in "rèʳ" else "premier") + plural if n == 1 else None
        if suffix.startswith("nd"):
            return ("seconde" if "e" in suffix else "second") + plural if n == 2 else None
        return lang.ordinal(n) + plural

    def say_clock(m: re.Match[str]) -> str | None:
        hour, minute = int(m.group("h")), m.group("min")
        if hour > 24:
            return None
        if minute is None:  # "12h", "2 h": hours as well as a time of day ("douze heures", never "midi")
            return lang.counted(Num(False, str(hour)), ("heure", "heures", "f"))
        return lang.time(hour, int(minute), None, None)

    def say_counted(m: re.Match[str]) -> str | None:
        """A number and the noun it counts: "vingt et une personnes", "deux millions d'habitants"."""
        num, noun = parse_number(m), m.group("noun")
        # "1 000 000 de dollars", "21 d'entre eux": the number counts no noun
        if num.fraction is not None or noun.lower() in _NOT_NOUNS or "'" in noun or "’" in noun:
            return None
        n = int(num.whole)
        if n >= 10**6 and n % 10**6 == 0:
            return lang.of(lang.cardinal(n), (noun, noun, "m"))
        if n % 10 != 1 or n % 100 == 11 or noun_gender(noun) != "f":
            return None
        return f"{feminine(lang.cardinal(n))} {noun}"

    def say_scaled(m: re.Match[str]) -> str:
        code = currencies[m.group("cur")]
        return lang.scaled(parse_number(m), exponents[m.group("scale")], lang.currencies[code][0])

    return [
        Rule("ordinal", ordinal, lambda m: say_ordinal(int(m.group("n")), m.group("s")), 25),
        Rule("ordinal", roman_ordinal, lambda m: say_ordinal(roman(m.group("r")), m.group("s")), 25),
        Rule("time", clock, say_clock, 14),
        Rule("number", counted, say_counted, 50),
        Rule("abbreviation", mister, lambda m: "Monsieur", 70),
        Rule("abbreviation", numero, lambda m: f"numéro {lang.cardinal(int(m.group('n')))}", 65),
        Rule("currency", scaled, say_scaled, 19),
        Rule("time", around, lambda m: lang.join([
            lang.counted(Num(False, m.group("n")), ("heure", "heures", "f") if m.group("u") == "h" else
                         ("jour", "jours", "m")), "sur", lang.cardinal(int(m.group("n")))]), 13),
        Rule("phone", phone, lambda m: lang.phone(re.findall(r"\d+", m.group()), False), 12),
    ]
