"""Portuguese's golden cases, written from Brazilian Portuguese's own rules (the decimal comma, "e"
between the hundreds and the tens, a number agreeing with what it counts: "uma hora", "duas
pessoas", "duzentas libras"; "dezenove e trinta"; "primeiro de maio"), not from a library's output."""

from __future__ import annotations

CASES = [
    # cardinals, large numbers, negatives, decimals (the comma, and a sensor's point)
    ("Tenho 3 gatos.", "Tenho três gatos."),
    ("1999", "mil novecentos e noventa e nove"),
    ("1.250", "mil duzentos e cinquenta"),
    ("1.100", "mil e cem"),
    ("1.234.567", "um milhão duzentos e trinta e quatro mil quinhentos e sessenta e sete"),
    ("16", "dezesseis"),
    ("101", "cento e um"),
    ("1.000.000.000", "um bilhão"),
    ("Faz -4 lá fora", "Faz menos quatro lá fora"),
    ("pi é 3,14", "pi é três vírgula catorze"),
    ("0,05", "zero vírgula zero cinco"),
    ("o sensor marca 21.5", "o sensor marca vinte e um vírgula cinco"),
    # agreement with the noun counted
    ("2 horas", "duas horas"),
    ("21 pessoas", "vinte e uma pessoas"),
    ("200 pessoas", "duzentas pessoas"),
    ("2 mil pessoas", "duas mil pessoas"),
    ("2 vezes", "duas vezes"),
    ("2 dias", "dois dias"),
    ("2 irmãs", "duas irmãs"),
    ("2.000.000 pessoas", "dois milhões de pessoas"),
    ("1 de cada 10", "um de cada dez"),
    # fractions, ordinals, percentages
    ("3/4 de xícara", "três quartos de xícara"),
    ("2/3", "dois terços"),
    ("1/5", "um quinto"),
    ("3/16", "três dezesseis avos"),
    ("1º lugar", "primeiro lugar"),
    ("1ª vez", "primeira vez"),
    ("3.º andar", "terceiro andar"),
    ("21º", "vigésimo primeiro"),
    ("a 2ª colocada", "a segunda colocada"),
    ("Dom Pedro II", "Dom Pedro segundo"),
    ("no século XIX", "no século dezenove"),
    ("45 %", "quarenta e cinco por cento"),
    ("100%", "cem por cento"),
    # currencies, before and after, symbols and codes
    ("R$ 10,00", "dez reais"),
    ("R$ 1,00", "um real"),
    ("R$ 0,50", "cinquenta centavos"),
    ("R$ 1.234,56", "mil duzentos e trinta e quatro reais e cinquenta e seis centavos"),
    ("1.234,56 €", "mil duzentos e trinta e quatro euros e cinquenta e seis centavos"),
    ("$5", "cinco dólares"),
    ("US$ 20", "vinte dólares"),
    ("£200", "duzentas libras"),
    ("100 ₽", "cem rublos"),
    ("R$ 1,5 milhão", "um vírgula cinco milhão de reais"),
    ("R$ 500 mil", "quinhentos mil reais"),
    ("R$ 1.000.000,00", "um milhão de reais"),
    # dates
    ("08/12/2026", "oito de dezembro de dois mil e vinte e seis"),
    ("2026-12-08", "oito de dezembro de dois mil e vinte e seis"),
    ("em 8/12", "em oito de dezembro"),
    ("01/01/2000", "primeiro de janeiro de dois mil"),
    ("1º de maio", "primeiro de maio"),
    ("1 de maio", "primeiro de maio"),
    # times
    ("19:30", "dezenove e trinta"),
    ("às 7:05", "às sete e cinco"),
    ("às 19:00", "às dezenove horas"),
    ("à 1:00", "à uma hora"),
    ("às 21:00", "às vinte e uma horas"),
    ("00:00", "zero hora"),
    ("19h30", "dezenove e trinta"),
    ("às 7h", "às sete horas"),
    ("19:30:15", "dezenove horas trinta minutos e quinze segundos"),
    # years
    ("em 2026", "em dois mil e vinte e seis"),
    ("em 1500", "em mil e quinhentos"),
    # ranges
    ("10–20 °C", "de dez a vinte graus Celsius"),
    ("páginas 5-9", "páginas de cinco a nove"),
    ("o jogo terminou 2x1.", "o jogo terminou dois a um."),
    ("2020–2024", "de dois mil e vinte a dois mil e vinte e quatro"),
    # units, singular and plural, masculine and feminine
    ("21,5 °C", "vinte e um vírgula cinco graus Celsius"),
    ("1 °C", "um grau Celsius"),
    ("-2 °C", "menos dois graus Celsius"),
    ("faz 30°", "faz trinta graus"),
    ("100 km/h", "cem quilômetros por hora"),
    ("1 kWh", "um quilowatt-hora"),
    ("5 kWh", "cinco quilowatts-hora"),
    ("2,5 kg", "dois vírgula cinco quilogramas"),
    ("200 g", "duzentos gramas"),
    ("2 t", "duas toneladas"),
    ("1 h", "uma hora"),
    ("220 V", "duzentos e vinte volts"),
    ("faz +5 °C", "faz mais cinco graus Celsius"),
    ("um quarto de 3 x 4 m", "um quarto de três por quatro metros"),
    # phone numbers, addresses
    ("+55 11 98765-4321", "mais cinquenta e cinco, onze, nove oito sete seis cinco, quatro três dois um"),
    ("(21) 3456-7890", "vinte e um, três quatro cinco seis, sete oito nove zero"),
    ("CEP 01310-100", "CEP zero um três um zero um zero zero"),
    ("eu@exemplo.com.br", "eu arroba exemplo ponto com ponto br"),
    ("https://www.exemplo.com.br/docs/", "dáblio dáblio dáblio ponto exemplo ponto com ponto br barra docs"),
    # abbreviations, initialisms, symbols
    ("Sr. Silva e Sra. Souza", "senhor Silva e senhora Souza"),
    ("a Dra. Ana", "a doutora Ana"),
    ("p. ex. isto", "por exemplo isto"),
    ("livros, revistas etc.", "livros, revistas et cetera."),
    ("apto. 52", "apartamento cinquenta e dois"),
    ("os EUA", "os Estados Unidos"),
    ("a porta USB", "a porta u esse bê"),
    ("o CPF", "o cê pê efe"),
    ("a ONU", "a ONU"),
    ("Tom & Jerry", "Tom e Jerry"),
    ("2 + 2 = 4", "dois mais dois igual a quatro"),
    ("nº 5", "número cinco"),
]


# each run of spoken words and the characters it came from (normalize_cases.spans)
SPANS = [
    ("Custa R$ 2,50 hoje", "Custa dois reais e cinquenta centavos [R$ 2,50] hoje"),
    ("às 19h30, 2 horas", "às dezenove e trinta [19h30] duas [2] horas"),
]
