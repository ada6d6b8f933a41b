"""Spanish's golden cases, written from Spanish's own rules (Spain's conventions: the decimal comma,
"céntimos"; a number agrees with what it counts: "un grado", "veintiún euros", "doscientas
personas"; the 24-hour clock read as written), not from a library's output."""

from __future__ import annotations

from normalize_cases import words

from hearth.text.normalize import normalize

CASES = [
    # cardinals, large numbers, negatives, decimals (the comma, and a sensor's point)
    ("Tengo 3 gatos.", "Tengo tres gatos."),
    ("2350 personas", "dos mil trescientas cincuenta personas"),
    ("1.234.567", "un millón doscientos treinta y cuatro mil quinientos sesenta y siete"),
    ("21000", "veintiún mil"),
    ("101000", "ciento un mil"),
    ("21 000 000", "veintiún millones"),
    ("1 000 000 000", "mil millones"),
    ("Estamos a -4", "Estamos a menos cuatro"),
    ("pi es 3,14", "pi es tres coma catorce"),
    ("0,05", "cero coma cero cinco"),
    ("3,14159", "tres coma uno cuatro uno cinco nueve"),
    ("el sensor marca 21.5", "el sensor marca veintiuno coma cinco"),
    # agreement with the noun counted
    ("21 años", "veintiún años"),
    ("31 semanas", "treinta y una semanas"),
    ("1 vez", "una vez"),
    ("200 personas", "doscientas personas"),
    ("2 000 000 personas", "dos millones de personas"),
    ("1 de cada 10", "uno de cada diez"),
    # fractions, ordinals, percentages
    ("3/4 de taza", "tres cuartos de taza"),
    ("1/2", "un medio"),
    ("2/3", "dos tercios"),
    ("3/16", "tres dieciseisavos"),
    ("el 1.º", "el primero"),
    ("el 1.er piso", "el primer piso"),
    ("la 3.ª planta", "la tercera planta"),
    ("el 3º lugar", "el tercer lugar"),
    ("el 11.º", "el undécimo"),
    ("el 21.º aniversario", "el vigésimo primer aniversario"),
    ("2do", "segundo"),
    ("Felipe VI", "Felipe sexto"),
    ("Alfonso XIII", "Alfonso trece"),
    ("en el siglo XXI", "en el siglo veintiuno"),
    ("45 %", "cuarenta y cinco por ciento"),
    ("un 12,5 % menos", "un doce coma cinco por ciento menos"),
    # currencies, before and after, symbols and codes
    ("1.234,56 €", "mil doscientos treinta y cuatro euros con cincuenta y seis céntimos"),
    ("1 €", "un euro"),
    ("21 €", "veintiún euros"),
    ("0,99 €", "noventa y nueve céntimos"),
    ("$5", "cinco dólares"),
    ("$1,234.56", "mil doscientos treinta y cuatro dólares con cincuenta y seis centavos"),
    ("R$ 10,00", "diez reales"),
    ("£200", "doscientas libras"),
    ("100 ₽", "cien rublos"),
    ("EUR 20", "veinte euros"),
    ("1.000.000 €", "un millón de euros"),
    ("€2,5M", "dos coma cinco millones de euros"),
    # dates
    ("08/12/2026", "ocho de diciembre de dos mil veintiséis"),
    ("2026-12-08", "ocho de diciembre de dos mil veintiséis"),
    ("el 15.03.2024", "el quince de marzo de dos mil veinticuatro"),
    ("el 1/1/2000", "el uno de enero de dos mil"),
    ("hasta el 8/12", "hasta el ocho de diciembre"),
    ("el 1º de mayo", "el primero de mayo"),
    # times
    ("19:30", "diecinueve treinta"),
    ("a las 7:05", "a las siete cero cinco"),
    ("a las 07:00", "a las siete en punto"),
    ("a las 19:00", "a las diecinueve horas"),
    ("a la 1:15", "a la una quince"),
    ("a las 21:00", "a las veintiuna horas"),
    ("a las 19.30", "a las diecinueve treinta"),
    ("sale a las 6:45 h", "sale a las seis cuarenta y cinco"),
    ("7:30 p. m.", "siete treinta de la tarde."),
    ("19:30:15", "diecinueve horas treinta minutos y quince segundos"),
    # years
    ("en 1999", "en mil novecientos noventa y nueve"),
    ("en 2021", "en dos mil veintiuno"),
    # ranges
    ("10–20 °C", "de diez a veinte grados Celsius"),
    ("páginas 5-9", "páginas de cinco a nueve"),
    ("ganó 3-1", "ganó tres a uno"),
    ("terminó 2:1.", "terminó dos a uno."),
    ("2020–2024", "de dos mil veinte a dos mil veinticuatro"),
    # units, singular and plural, masculine and feminine
    ("21,5 °C", "veintiuno coma cinco grados Celsius"),
    ("1 °C", "un grado Celsius"),
    ("21 °C", "veintiún grados Celsius"),
    ("-1 °C", "menos un grado Celsius"),
    ("hace 30°", "hace treinta grados"),
    ("100 km/h", "cien kilómetros por hora"),
    ("1 kWh", "un kilovatio hora"),
    ("5 kWh", "cinco kilovatios hora"),
    ("2,5 kg", "dos coma cinco kilogramos"),
    ("1 t", "una tonelada"),
    ("21 t", "veintiuna toneladas"),
    ("1013 hPa", "mil trece hectopascales"),
    ("230 V", "doscientos treinta voltios"),
    ("1 h", "una hora"),
    ("hace +5 °C", "hace más cinco grados Celsius"),
    ("una sala de 2x3 m", "una sala de dos por tres metros"),
    # phone numbers, addresses
    ("+34 612 34 56 78", "más treinta y cuatro, seiscientos doce, treinta y cuatro, cincuenta y seis, setenta y ocho"),
    ("91 234 56 78", "noventa y uno, doscientos treinta y cuatro, cincuenta y seis, setenta y ocho"),
    ("yo@ejemplo.es", "yo arroba ejemplo punto es"),
    ("https://www.ejemplo.com/docs/", "uve doble uve doble uve doble punto ejemplo punto com barra docs"),
    # abbreviations, initialisms, symbols
    ("Sr. García y Sra. López", "señor García y señora López"),
    ("la Dra. Pérez", "la doctora Pérez"),
    ("p. ej. esto", "por ejemplo esto"),
    ("libros, revistas, etc.", "libros, revistas, etcétera."),
    ("Carlos, Ana, etc., vinieron", "Carlos, Ana, etcétera, vinieron"),
    ("EE. UU.", "Estados Unidos"),
    ("el puerto USB", "el puerto u ese be"),
    ("el DNI", "el de ene i"),
    ("la ONU y la OTAN", "la ONU y la OTAN"),
    ("Tom & Jerry", "Tom y Jerry"),
    ("2 + 2 = 4", "dos más dos igual a cuatro"),
    ("nº 5", "número cinco"),
]


# each run of spoken words and the characters it came from (normalize_cases.spans)
SPANS = [
    ("Hace 21,5 °C y el 1º piso", "Hace veintiuno coma cinco grados Celsius [21,5 °C] y el primer [1º] piso"),
    ("**Hoy** a las 19:30", "Hoy a las diecinueve treinta [19:30]"),
]


def test_an_amount_maps_each_of_its_words_to_the_whole_amount():
    assert words("Cuesta 1.234,56 €.", "spanish")[1:3] == [("mil", "1.234,56 €"), ("doscientos", "1.234,56 €")]


def test_the_language_is_found_by_its_code_too():
    assert normalize("21 €", "es").text == normalize("21 €", "spanish").text == "veintiún euros"
