"""Italian's golden cases, written from Italian's own conventions (what a speaker reading the text
aloud says: "l'otto dicembre", "il primo maggio", "diciannove e trenta", "un'ora", "da dieci a
venti", decimals read as a number after "virgola"), not from a library's output."""

from __future__ import annotations

CASES = [
    # cardinals, large numbers, negatives, decimals (the comma, and the point as sensors write it)
    ("Ho 3 gatti.", "Ho tre gatti."),
    ("2350 visitatori", "duemilatrecentocinquanta visitatori"),
    ("28.000 tifosi", "ventottomila tifosi"),
    ("23 anni", "ventitré anni"),
    ("108 pagine", "centotto pagine"),
    ("118 pagine", "centodiciotto pagine"),
    ("nel 2023 l'azienda", "nel duemilaventitré l'azienda"),
    ("1.234.567", "un milione duecentotrentaquattromilacinquecentosessantasette"),
    ("1.200.000", "un milione duecentomila"),
    ("2.000.000 abitanti", "due milioni di abitanti"),
    ("Fuori ci sono -4 gradi", "Fuori ci sono meno quattro gradi"),
    ("3,14", "tre virgola quattordici"),
    ("0,05", "zero virgola zero cinque"),
    ("21.5 °C", "ventuno virgola cinque gradi Celsius"),
    # "uno" alone, "un" / "uno" / "una" / "un'" before a noun
    ("1 ora", "un'ora"),
    ("1 volta", "una volta"),
    ("1 giorno", "un giorno"),
    ("1 zaino", "uno zaino"),
    ("1 è dispari", "uno è dispari"),
    # fractions
    ("3/4", "tre quarti"),
    ("1/2", "un mezzo"),
    ("2/3", "due terzi"),
    ("1/10", "un decimo"),
    # ordinals: "º", "ª", and "°" where it stands for "º"
    ("il 3° posto", "il terzo posto"),
    ("la 2ª volta", "la seconda volta"),
    ("il 1º piano", "il primo piano"),
    ("la 3° classificata", "la terza classificata"),
    ("il 21° secolo", "il ventunesimo secolo"),
    ("30° e sole", "trenta gradi e sole"),
    ("Luigi XIV", "Luigi quattordicesimo"),
    ("Papa Giovanni XXIII", "Papa Giovanni ventitreesimo"),
    ("Elisabetta II", "Elisabetta seconda"),
    ("nel XXI secolo", "nel ventunesimo secolo"),
    # percentages, with the article elided before a vowel
    ("45 %", "quarantacinque per cento"),
    ("l'1%", "l'uno per cento"),
    ("il 80%", "l'ottanta per cento"),
    # currencies: symbols and codes, before or after the amount
    ("1.234,56 €", "milleduecentotrentaquattro euro e cinquantasei centesimi"),
    ("€ 5", "cinque euro"),
    ("1 €", "un euro"),
    ("0,99 €", "novantanove centesimi"),
    ("1 £", "una sterlina"),
    ("10 USD", "dieci dollari"),
    ("EUR 20", "venti euro"),
    ("1.000.000 €", "un milione di euro"),
    ("2,5 mln €", "due virgola cinque milioni di euro"),
    ("$5k", "cinquemila dollari"),
    ("¥500", "cinquecento yen"),
    # dates: numeric (with the article, elided before "otto" and "undici"), with the month's name
    ("08/12/2026", "l'otto dicembre duemilaventisei"),
    ("il 08/12/2026", "l'otto dicembre duemilaventisei"),
    ("dell'8/12/2026", "dell'otto dicembre duemilaventisei"),
    ("dal 08/12 al 11/12", "dall'otto dicembre all'undici dicembre"),
    ("11/12/2026", "l'undici dicembre duemilaventisei"),
    ("2026-12-01", "il primo dicembre duemilaventisei"),
    ("il 1° maggio", "il primo maggio"),
    ("l'8 dicembre", "l'otto dicembre"),
    ("lunedì 08/12/2026", "lunedì otto dicembre duemilaventisei"),
    ("8 dicembre 2026", "otto dicembre duemilaventisei"),
    # times: the 24-hour clock, "e" between hours and minutes
    ("19:30", "diciannove e trenta"),
    ("alle 19.30", "alle diciannove e trenta"),
    ("1:05", "una e cinque"),
    ("all'1:30", "all'una e trenta"),
    ("07:00", "sette"),
    ("00:15", "zero e quindici"),
    ("7:30 pm", "diciannove e trenta"),
    ("14:00 - 16:00", "da quattordici a sedici"),
    ("costa 19.30 euro", "costa diciannove virgola trenta euro"),
    # years and ranges ("da ... a ...")
    ("nel 1999", "nel millenovecentonovantanove"),
    ("nel 800", "nell'ottocento"),
    ("2020–2024", "da duemilaventi a duemilaventiquattro"),
    ("10–20 °C", "da dieci a venti gradi Celsius"),
    ("pagine 5–9", "pagine da cinque a nove"),
    ("finita 2-1", "finita due a uno"),
    ("tra il 1914 e il 1918", "tra il millenovecentoquattordici e il millenovecentodiciotto"),
    # units: plural but for exactly one, the noun's gender in "un" / "una"
    ("1 °C", "un grado Celsius"),
    ("100 km/h", "cento chilometri orari"),
    ("5 kWh", "cinque chilowattora"),
    ("1 t", "una tonnellata"),
    ("1 h", "un'ora"),
    ("2 h", "due ore"),
    ("2,5 kg", "due virgola cinque chilogrammi"),
    ("25°", "venticinque gradi"),
    ("4000 mAh", "quattromila milliampereora"),
    ("5 in tutto", "cinque in tutto"),
    # phone numbers, digit by digit
    ("+39 06 1234 5678", "più trentanove, zero sei, uno due tre quattro, cinque sei sette otto"),
    ("333 123 4567", "tre tre tre, uno due tre, quattro cinque sei sette"),
    ("06 1234 5678", "zero sei, uno due tre quattro, cinque sei sette otto"),
    ("chiamate al 06 1234 5678", "chiamate allo zero sei, uno due tre quattro, cinque sei sette otto"),
    # web and e-mail addresses
    ("mario@esempio.it", "mario chiocciola esempio punto I T"),
    ("https://www.comune.roma.it/servizi", "W W W punto comune punto roma punto I T slash servizi"),
    # abbreviations, initialisms, symbols
    ("Sig. Rossi e Dott.ssa Bianchi", "Signor Rossi e Dottoressa Bianchi"),
    ("Prof. Verdi", "Professor Verdi"),
    ("il Dott. Neri", "il Dottor Neri"),
    ("Sig.ra Bianchi", "Signora Bianchi"),
    ("mele, pere ecc.", "mele, pere eccetera."),
    ("p.es. questo", "per esempio questo"),
    ("n. 5", "numero cinque"),
    ("pag. 12", "pagina dodici"),
    ("pag. 3-5", "pagina da tre a cinque"),
    ("USB e NATO", "U S B e NATO"),
    ("Tom & Jerry", "Tom e Jerry"),
    ("2 + 2 = 4", "due più due uguale quattro"),
    ("3x al giorno", "tre volte al giorno"),
    ("24/7", "ventiquattro ore su ventiquattro, sette giorni su sette"),
    ("20 €/h", "venti euro all'ora"),
    ("9,99 €/settimana", "nove euro e novantanove centesimi alla settimana"),
    ("00184 Roma", "zero zero uno otto quattro Roma"),
]


# each run of spoken words and the characters it came from (normalize_cases.spans)
SPANS = [
    ("il 8/12 alle 19.30", "l'otto [il 8/12] dicembre [8/12] alle diciannove e trenta [19.30]"),
    ("1 ora al 3° piano", "un'ora [1 ora] al terzo [3°] piano"),
]


def test_cardinals_are_num2words_where_it_is_right():
    """num2words' cardinals under a million, but for its "centodicotto" and its "duemilaventitre"
    without the accent; above a million, no "e" after the millions."""
    from num2words import num2words

    from hearth.text.normalize import language

    italian = language("italian")
    numbers = [n for n in range(2100) if n % 100 != 18 and n % 10 != 3]
    assert [italian.cardinal(n) for n in numbers] == [num2words(n, lang="it") for n in numbers]
    assert [italian.cardinal(n) for n in (118, 2023, 23, 103, 1_200_000)] == [
        "centodiciotto", "duemilaventitré", "ventitré", "centotré", "un milione duecentomila"]
