"""German's golden cases, written from German's own conventions (what a speaker reading the text
aloud says: "am dritten Mai", "neunzehn Uhr dreißig", "eine Stunde", years in hundreds, decimals
digit by digit), not from a library's output."""

from __future__ import annotations

CASES = [
    # cardinals, large numbers, negatives, decimals (the comma, and the point as sensors write it)
    ("Ich habe 3 Katzen.", "Ich habe drei Katzen."),
    ("2350 Besucher", "zweitausenddreihundertfünfzig Besucher"),
    ("28.000 Fans", "achtundzwanzigtausend Fans"),
    ("10 000 Schritte", "zehntausend Schritte"),
    ("101.000 Einwohner", "einhunderteintausend Einwohner"),
    ("1.234.567", "eine Million zweihundertvierunddreißigtausendfünfhundertsiebenundsechzig"),
    ("3.000.000.000 Menschen", "drei Milliarden Menschen"),
    ("Draußen sind -4 Grad", "Draußen sind minus vier Grad"),
    ("Pi ist 3,14", "Pi ist drei Komma eins vier"),
    ("0,5 Liter", "null Komma fünf Liter"),
    ("Es sind 21,5 °C.", "Es sind einundzwanzig Komma fünf Grad Celsius."),
    ("21.5 °C", "einundzwanzig Komma fünf Grad Celsius"),
    # "eins" alone, "ein" / "eine" before a noun
    ("Seite 1 von 3", "Seite eins von drei"),
    ("1 Stunde", "eine Stunde"),
    ("nur 1 Tag", "nur ein Tag"),
    # fractions
    ("3/4 Tasse", "drei Viertel Tasse"),
    ("1/2", "einhalb"),
    ("2/3", "zwei Drittel"),
    ("1/8", "ein Achtel"),
    # ordinals: "3." before a noun, with the ending its article asks for; not a sentence's last number
    ("im 3. Stock", "im dritten Stock"),
    ("der 2. Weltkrieg", "der zweite Weltkrieg"),
    ("zum 3. Mal", "zum dritten Mal"),
    ("ein 2. Versuch", "ein zweiter Versuch"),
    ("in der 2. Klasse", "in der zweiten Klasse"),
    ("das 20. Jahrhundert", "das zwanzigste Jahrhundert"),
    ("Er wurde 3. Sieger.", "Er wurde dritter Sieger."),
    ("Er war der 3.", "Er war der dritte."),
    ("Kapitel 3. Fazit", "Kapitel drei. Fazit"),
    ("am 2. und 3. Juni", "am zweiten und dritten Juni"),
    ("die 80er Jahre", "die achtziger Jahre"),
    ("Die Antwort ist 42.", "Die Antwort ist zweiundvierzig."),
    ("Es sind 42. Dann geht es weiter.", "Es sind zweiundvierzig. Dann geht es weiter."),
    ("Ludwig XIV. war König.", "Ludwig der Vierzehnte war König."),
    ("Teil II", "Teil zwei"),
    # percentages
    ("45 %", "fünfundvierzig Prozent"),
    ("12,5% Rabatt", "zwölf Komma fünf Prozent Rabatt"),
    ("1 %", "ein Prozent"),
    ("DAX +0,8 %", "DAX plus null Komma acht Prozent"),
    # currencies: symbols and codes, before or after the amount
    ("1.234,56 €", "eintausendzweihundertvierunddreißig Euro und sechsundfünfzig Cent"),
    ("€ 5", "fünf Euro"),
    ("5 €", "fünf Euro"),
    ("1 €", "ein Euro"),
    ("0,99 €", "neunundneunzig Cent"),
    ("10,- €", "zehn Euro"),
    ("$1", "ein Dollar"),
    ("10 USD", "zehn Dollar"),
    ("EUR 20", "zwanzig Euro"),
    ("CHF 20", "zwanzig Franken"),
    ("£3,50", "drei Pfund und fünfzig Pence"),
    ("1.000.000 €", "eine Million Euro"),
    ("2,5 Mio. €", "zwei Komma fünf Millionen Euro"),
    ("$5k", "fünftausend Dollar"),
    # dates: numeric (the article said), with the word before them, with the month's name
    ("08.12.2026", "der achte Dezember zweitausendsechsundzwanzig"),
    ("am 08.12.2026", "am achten Dezember zweitausendsechsundzwanzig"),
    ("2026-12-08", "der achte Dezember zweitausendsechsundzwanzig"),
    ("08/12/2026", "der achte Dezember zweitausendsechsundzwanzig"),
    ("Heute ist der 1. Mai.", "Heute ist der erste Mai."),
    ("am 3. Okt. 1990", "am dritten Oktober neunzehnhundertneunzig"),
    ("Berlin, 3. Mai 2026", "Berlin, dritter Mai zweitausendsechsundzwanzig"),
    ("vom 3. bis 5. Mai", "vom dritten bis zum fünften Mai"),
    ("Urlaub 3.–5. Mai", "Urlaub dritter bis fünfter Mai"),
    ("bis 31.12. fertig", "bis zum einunddreißigsten Dezember fertig"),
    ("Montag, den 8.12.", "Montag, den achten Dezember."),
    ("am 21.5. war", "am einundzwanzigsten Mai war"),
    ("Es waren 21.5.", "Es waren einundzwanzig Komma fünf."),
    # times: the 24-hour clock with "Uhr"
    ("19:30", "neunzehn Uhr dreißig"),
    ("um 19:30 Uhr", "um neunzehn Uhr dreißig"),
    ("um 19.30 Uhr", "um neunzehn Uhr dreißig"),
    ("um 19.30", "um neunzehn Uhr dreißig"),
    ("um 8 Uhr", "um acht Uhr"),
    ("gegen 1 Uhr", "gegen ein Uhr"),
    ("07:05", "sieben Uhr fünf"),
    ("00:15", "null Uhr fünfzehn"),
    ("9.00–17.00 Uhr", "neun bis siebzehn Uhr"),
    ("Mo.–Fr. 9–17 Uhr", "Montag bis Freitag neun bis siebzehn Uhr"),
    ("14:00 - 16:30", "vierzehn Uhr bis sechzehn Uhr dreißig"),
    ("7:30 pm", "neunzehn Uhr dreißig"),
    # years: in hundreds after a word that announces one
    ("seit 1999", "seit neunzehnhundertneunundneunzig"),
    ("im Jahr 2026", "im Jahr zweitausendsechsundzwanzig"),
    ("im Mai 1905", "im Mai neunzehnhundertfünf"),
    ("1999 Menschen", "eintausendneunhundertneunundneunzig Menschen"),
    ("zwischen 1914 und 1918", "zwischen neunzehnhundertvierzehn und neunzehnhundertachtzehn"),
    ("bis 1500 m", "bis eintausendfünfhundert Meter"),
    ("2020–2024", "zweitausendzwanzig bis zweitausendvierundzwanzig"),
    # ranges
    ("10–20 °C", "zehn bis zwanzig Grad Celsius"),
    ("Seiten 5–9", "Seiten fünf bis neun"),
    ("Das Spiel endete 2:1.", "Das Spiel endete zwei zu eins."),
    # units: singular for exactly one, the noun's gender in "ein" / "eine"
    ("1 °C", "ein Grad Celsius"),
    ("100 km/h", "einhundert Kilometer pro Stunde"),
    ("5 kWh", "fünf Kilowattstunden"),
    ("1 kWh", "eine Kilowattstunde"),
    ("2,5 kg", "zwei Komma fünf Kilogramm"),
    ("230 V", "zweihundertdreißig Volt"),
    ("1013 hPa", "eintausenddreizehn Hektopascal"),
    ("1 t", "eine Tonne"),
    ("30 min", "dreißig Minuten"),
    ("64 GB", "vierundsechzig Gigabyte"),
    ("25°", "fünfundzwanzig Grad"),
    ("5 in Berlin", "fünf in Berlin"),
    # phone numbers: the country code as a number, the rest digit by digit
    ("+49 30 1234567", "plus neunundvierzig, drei null, eins zwei drei vier fünf sechs sieben"),
    ("030 1234567", "null drei null, eins zwei drei vier fünf sechs sieben"),
    ("089 / 123 456-0", "null acht neun, eins zwei drei, vier fünf sechs, null"),
    # web and e-mail addresses
    ("max@beispiel.de", "max at beispiel Punkt D E"),
    ("https://www.home-assistant.io/docs/", "W W W Punkt home Bindestrich assistant Punkt I O Schrägstrich docs"),
    ("beispiel.com", "beispiel Punkt com"),
    # abbreviations, initialisms, symbols
    ("z. B. heute", "zum Beispiel heute"),
    ("Z. B. morgen", "Zum Beispiel morgen"),
    ("Äpfel, Birnen usw.", "Äpfel, Birnen und so weiter."),
    ("d. h. nein", "das heißt nein"),
    ("inkl. MwSt.", "inklusive Mehrwertsteuer."),
    ("Nr. 5", "Nummer fünf"),
    ("S. 12", "Seite zwölf"),
    ("Dr. Müller", "Doktor Müller"),
    ("Prof. Dr. Meier", "Professor Doktor Meier"),
    ("Fr. Schmidt", "Frau Schmidt"),
    ("Hauptstr. 12", "Hauptstraße zwölf"),
    ("2 EL Öl", "zwei Esslöffel Öl"),
    ("ca. 5 km", "circa fünf Kilometer"),
    ("die Müller GmbH", "die Müller G M B H"),
    ("die USA und die NATO", "die U S A und die NATO"),
    ("Tom & Jerry", "Tom und Jerry"),
    ("2 + 2 = 4", "zwei plus zwei gleich vier"),
    ("3x täglich", "dreimal täglich"),
    ("24/7 erreichbar", "vierundzwanzig sieben erreichbar"),
    ("9,99 €/Monat", "neun Euro und neunundneunzig Cent pro Monat"),
    ("A4-Papier und CO2", "A vier-Papier und C O zwei"),
    ("Agent 007", "Agent null null sieben"),
    ("**Achtung:** 3 Grad", "Achtung: drei Grad"),
]


# each run of spoken words and the characters it came from (normalize_cases.spans)
SPANS = [
    ("Am 08.12. um 19:30 Uhr im 3. Stock",
     "Am achten Dezember [08.12.] um neunzehn Uhr dreißig [19:30 Uhr] im dritten [3.] Stock"),
    ("1 Stunde kostet 1.234,56 €",
     "eine [1] Stunde kostet eintausendzweihundertvierunddreißig Euro und sechsundfünfzig Cent [1.234,56 €]"),
]


def test_numbers_are_num2words_where_it_is_right():
    """Cardinals, ordinals and years are composed from num2words' 0 to 99 for speed; they stay what
    num2words says, but for its "einstausend" (101 000: "einhunderteintausend")."""
    from num2words import num2words

    from hearth.text.normalize import language

    german = language("german")
    numbers = [*range(1200), 21_000, 80_000, 999_999, 1_000_000, 2_000_001, 123_456_789]
    assert [german.cardinal(n) for n in numbers] == [num2words(n, lang="de") for n in numbers]
    assert german.cardinal(101_000) == "einhunderteintausend" != num2words(101_000, lang="de")
    ordinals = [*range(1, 130), 1000, 1001, 20_000, 21_003]
    assert [german.ordinal(n) for n in ordinals] == [num2words(n, lang="de", to="ordinal") for n in ordinals]
    years = range(1000, 2100, 7)
    assert [german.year(y) for y in years] == [num2words(y, lang="de", to="year") for y in years]
