"""French's golden cases, written from French's own conventions (what a speaker reading the text
aloud says: "le huit décembre", "dix-neuf heures trente", "vingt et une personnes", "quatre-vingts",
decimals read as a number after "virgule", phone numbers in pairs), not from a library's output."""

from __future__ import annotations

CASES = [
    # cardinals, large numbers, negatives, decimals (the comma, and the point as sensors write it)
    ("J'ai 3 chats.", "J'ai trois chats."),
    ("2350 visiteurs", "deux mille trois cent cinquante visiteurs"),
    ("80 ans", "quatre-vingts ans"),
    ("81 ans", "quatre-vingt-un ans"),
    ("71 ans", "soixante et onze ans"),
    ("200 ans", "deux cents ans"),
    ("80 000 spectateurs", "quatre-vingt mille spectateurs"),
    ("1 234 567", "un million deux cent trente-quatre mille cinq cent soixante-sept"),
    ("2.000.000 habitants", "deux millions d'habitants"),
    ("1 000 000 de dollars", "un million de dollars"),
    ("Il fait -4 dehors", "Il fait moins quatre dehors"),
    ("3,14", "trois virgule quatorze"),
    ("0,05", "zéro virgule zéro cinq"),
    ("21.5 °C", "vingt et un virgule cinq degrés Celsius"),
    ("3,14159", "trois virgule un quatre un cinq neuf"),
    # "un" / "une" agreeing with the noun
    ("1 heure", "une heure"),
    ("21 personnes", "vingt et une personnes"),
    ("31 jours", "trente et un jours"),
    ("1 semaine", "une semaine"),
    ("101 pages", "cent une pages"),
    ("1 chien et 1 chatte", "un chien et une chatte"),
    # fractions
    ("3/4", "trois quarts"),
    ("1/2", "un demi"),
    ("2/3", "deux tiers"),
    ("5/8", "cinq huitièmes"),
    # ordinals
    ("le 1er étage", "le premier étage"),
    ("la 1re fois", "la première fois"),
    ("la 1ère place", "la première place"),
    ("le 2e jour", "le deuxième jour"),
    ("le 3ème étage", "le troisième étage"),
    ("le 80e anniversaire", "le quatre-vingtième anniversaire"),
    ("le 300e client", "le trois centième client"),
    ("la 2nde guerre", "la seconde guerre"),
    ("au XXIe siècle", "au vingt et unième siècle"),
    ("Louis XIV", "Louis quatorze"),
    ("Tome II", "Tome deux"),
    # percentages
    ("45 %", "quarante-cinq pour cent"),
    ("12,5 %", "douze virgule cinq pour cent"),
    ("45\u202f%", "quarante-cinq pour cent"),
    # currencies: symbols and codes, before or after the amount
    ("1.234,56 €", "mille deux cent trente-quatre euros et cinquante-six centimes"),
    ("1 234,56 €", "mille deux cent trente-quatre euros et cinquante-six centimes"),
    ("1\u202f234,56\u00a0€", "mille deux cent trente-quatre euros et cinquante-six centimes"),
    ("€ 5", "cinq euros"),
    ("1 €", "un euro"),
    ("21 €", "vingt et un euros"),
    ("0,99 €", "quatre-vingt-dix-neuf centimes"),
    ("1 £", "une livre"),
    ("10 USD", "dix dollars"),
    ("EUR 20", "vingt euros"),
    ("1 000 000 €", "un million d'euros"),
    ("2,5 M€", "deux virgule cinq millions d'euros"),
    ("$5k", "cinq mille dollars"),
    # dates: numeric (with "le" said), with the word before them, with the month's name
    ("08/12/2026", "le huit décembre deux mille vingt-six"),
    ("le 08/12/2026", "le huit décembre deux mille vingt-six"),
    ("2026-12-08", "le huit décembre deux mille vingt-six"),
    ("le 1er mai", "le premier mai"),
    ("le 1 mai", "le premier mai"),
    ("14 juillet 1789", "quatorze juillet mille sept cent quatre-vingt-neuf"),
    ("du 08/12 au 10/12", "du huit décembre au dix décembre"),
    ("lundi 01/12/2025", "lundi premier décembre deux mille vingt-cinq"),
    ("le 1/1/2027", "le premier janvier deux mille vingt-sept"),
    # times: the 24-hour clock in "heures"
    ("19h30", "dix-neuf heures trente"),
    ("à 19 h 30", "à dix-neuf heures trente"),
    ("19:30", "dix-neuf heures trente"),
    ("7h05", "sept heures cinq"),
    ("1h", "une heure"),
    ("21h", "vingt et une heures"),
    ("00:00", "minuit"),
    ("12:00", "midi"),
    ("12h", "douze heures"),
    ("0h15", "zéro heure quinze"),
    ("24h/24", "vingt-quatre heures sur vingt-quatre"),
    ("7:30 pm", "dix-neuf heures trente"),
    ("14:00 - 16:00", "quatorze heures à seize heures"),
    # years and ranges
    ("en 1999", "en mille neuf cent quatre-vingt-dix-neuf"),
    ("2020–2024", "deux mille vingt à deux mille vingt-quatre"),
    ("10–20 °C", "dix à vingt degrés Celsius"),
    ("pages 5–9", "pages cinq à neuf"),
    ("un score de 2-1", "un score de deux à un"),
    ("en 2023 l'entreprise", "en deux mille vingt-trois l'entreprise"),
    # units: singular below two ("zéro degré", "1,5 kilomètre"), feminine units with "une"
    ("1 °C", "un degré Celsius"),
    ("0 °C", "zéro degré Celsius"),
    ("1,5 km", "un virgule cinq kilomètre"),
    ("100 km/h", "cent kilomètres par heure"),
    ("5 kWh", "cinq kilowattheures"),
    ("1 t", "une tonne"),
    ("21 t", "vingt et une tonnes"),
    ("64 Go", "soixante-quatre gigaoctets"),
    ("25 cl de crème", "vingt-cinq centilitres de crème"),
    ("2 h", "deux heures"),
    ("25°", "vingt-cinq degrés"),
    # phone numbers, in pairs
    ("01 23 45 67 89", "zéro un, vingt-trois, quarante-cinq, soixante-sept, quatre-vingt-neuf"),
    ("+33 6 12 34 56 78", "plus trente-trois, six, douze, trente-quatre, cinquante-six, soixante-dix-huit"),
    ("06.12.34.56.78", "zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit"),
    # web and e-mail addresses
    ("jean@exemple.fr", "jean arobase exemple point F R"),
    ("https://www.service-public.fr/particuliers",
     "W W W point service tiret public point F R slash particuliers"),
    # abbreviations, initialisms, symbols
    ("M. Dupont et Mme Durand", "Monsieur Dupont et Madame Durand"),
    ("Dr Martin", "Docteur Martin"),
    ("Mlle Dupont", "Mademoiselle Dupont"),
    ("env. 5 km", "environ cinq kilomètres"),
    ("des pommes, des poires, etc.", "des pommes, des poires, et cetera."),
    ("p. ex. ceci", "par exemple ceci"),
    ("c.-à-d. non", "c'est-à-dire non"),
    ("n° 5", "numéro cinq"),
    ("la SNCF et l'ONU", "la S N C F et l'ONU"),
    ("Tom & Jerry", "Tom et Jerry"),
    ("2 + 2 = 4", "deux plus deux égale quatre"),
    ("3x par jour", "trois fois par jour"),
    ("24/7", "vingt-quatre heures sur vingt-quatre, sept jours sur sept"),
    ("20 €/h", "vingt euros par heure"),
    ("la 5G et le CO2", "la cinq G et le C O deux"),
]


# each run of spoken words and the characters it came from (normalize_cases.spans)
SPANS = [
    ("Le 1er mai à 19h30", "Le premier mai [1er mai] à dix-neuf heures trente [19h30]"),
    ("21 personnes, 3e étage", "vingt et une personnes [21 personnes] troisième [3e] étage"),
]


def test_cardinals_are_num2words_where_it_is_right():
    """Cardinals are composed from num2words' 0 to 99 for speed and stay what num2words says;
    ordinals are not num2words' ("quatre-vingtsième"), but the French ones."""
    from num2words import num2words

    from hearth.text.normalize import language

    french = language("french")
    numbers = [*range(1200), 21_000, 80_000, 80_080, 200_000, 999_999, 1_000_000, 2_000_001, 123_456_789]
    assert [french.cardinal(n) for n in numbers] == [num2words(n, lang="fr") for n in numbers]
    assert [french.ordinal(n) for n in (1, 5, 9, 21, 80, 300, 1000, 10**6, 2 * 10**6)] == [
        "premier", "cinquième", "neuvième", "vingt et unième", "quatre-vingtième", "trois centième", "millième",
        "millionième", "deux millionième"]
