"""Portuguese: Brazilian usage as the default (the language of most of its speakers): "dezesseis",
"bilhão" for 10⁹ (Portugal: "dezasseis", "mil milhões"), "quilômetro", the real's "centavos", the
decimal comma and the dot between thousands ("1.234,56"; "21.5" as sensors write it is a decimal),
the day before the month, the 24-hour clock and "19h30". European forms are not produced.

How it is said, as a speaker says it:
- Numbers agree with what they count: "uma hora", "duas pessoas", "vinte e uma toneladas",
  "duzentas libras"; alone a number is masculine. Round millions take "de": "um milhão de reais".
- Decimals: "vírgula", up to three decimals read as a number ("três vírgula catorze"), longer ones
  digit by digit.
- Dates: "oito de dezembro de dois mil e vinte e seis"; the first day "primeiro de maio".
- Times: "dezenove e trinta", "sete e cinco"; on the hour "dezenove horas", "uma hora", "zero hora".
- Amounts: "dois reais e cinquenta centavos"; ranges "de dez a vinte"; "por cento".
- Phone numbers: short groups (country and area codes) as numbers, the rest digit by digit.

num2words (0.5.14, "pt_BR") gives the cardinals and ordinals, with its faults fixed here: it writes
commas between groups ("mil, novecentos e noventa e nove", a pause the model would make), has no
feminine ("uma", "duas", "duzentas") and misspells "septingentésimo" and "octingentésimo".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from num2words import num2words

from hearth.text.normalize.language import Num, Rule, currency_nouns, nouns, word_set, word_table
from hearth.text.normalize.languages.iberian import Iberian
from hearth.text.normalize.rules import number_pattern, parse_number

__all__ = ["Portuguese"]

_MONTHS = ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
           "novembro", "dezembro")
_MILLIONS = ("milhão", "milhões", "bilhão", "bilhões", "trilhão", "trilhões")
_ORDINAL_FIXES = {"septigentésimo": "septingentésimo", "octigentésimo": "octingentésimo"}
_LETTERS = {"a": "á", "b": "bê", "c": "cê", "d": "dê", "e": "é", "f": "efe", "g": "gê", "h": "agá", "i": "i",
            "j": "jota", "k": "cá", "l": "ele", "m": "eme", "n": "ene", "o": "ó", "p": "pê", "q": "quê", "r": "erre",
            "s": "esse", "t": "tê", "u": "u", "v": "vê", "w": "dáblio", "x": "xis", "y": "ípsilon", "z": "zê"}
# Words after a number that are not what it counts ("1 de cada 10", "2 e 3").
_NOT_NOUNS = frozenset((
    "a", "à", "ao", "aos", "as", "às", "até", "com", "contra", "de", "da", "das", "do", "dos", "e", "em", "entre",
    "na", "nas", "no", "nos", "num", "numa", "o", "ou", "os", "para", "pela", "pelo", "per", "por", "que", "se",
    "sem", "sob", "sobre", "mais", "menos", "é", "são", "foi", "era", "está", "estão", "como", "quando", "onde",
))
_MASCULINE_IN_A = frozenset((
    "dia", "mapa", "problema", "sistema", "programa", "tema", "idioma", "clima", "planeta", "poema", "esquema",
    "drama", "dilema", "teorema", "diploma", "telefonema", "cinema", "sofá",
))
_FEMININE_ENDINGS = ("a", "ã", "ção", "são", "dade", "gem", "tude", "ie")
_FEMININE = frozenset((
    "mão", "foto", "moto", "noite", "parte", "classe", "gente", "chave", "tarde", "mulher", "flor", "cor", "dor",
    "lei", "luz", "voz", "rede", "pele", "fome", "morte", "sorte", "fonte", "frase", "base", "torre", "nave", "vez",
    "fase",
))
_NEXT_WORD = re.compile(r"\s+([^\W\d_]+)")


@functools.lru_cache(maxsize=4096)
def _cardinal(n: int, feminine: bool = False) -> str:
    """`n` in words; `feminine` before a feminine noun ("duas", "vinte e uma", "duzentas mil": the
    part below a million agrees, "milhões" do not)."""
    if n >= 10**18:
        return " ".join(_cardinal(int(d)) for d in str(n))
    words = num2words(n, lang="pt_BR").replace(",", "").split()
    if feminine:
        low = max((i + 1 for i, w in enumerate(words) if w in _MILLIONS), default=0)
        for i in range(low, len(words)):
            words[i] = {"um": "uma", "dois": "duas"}.get(words[i], words[i].replace("entos", "entas"))
    return " ".join(words)


@functools.lru_cache(maxsize=1024)
def _ordinal(n: int, feminine: bool = False) -> str:
    words = [_ORDINAL_FIXES.get(w, w) for w in num2words(n, lang="pt_BR", to="ordinal").split()]
    return " ".join(w[:-1] + "a" if feminine and w.endswith("o") else w for w in words)


class Portuguese(Iberian):
    code = "pt"
    name = "portuguese"
    words = word_table(
        "minus menos; point vírgula; to a; percent por cento; and e; plus mais; over sobre; thousand mil; "
        "million milhões; billion bilhões; versus a; by a; etc et cetera; half meio; halves meios; third terço; "
        "thirds terços")
    marks = word_table(
        ". ponto; @ arroba; / barra; : dois pontos; - hífen; _ underline; ? interrogação; = igual; # cerquilha; ~ til")
    symbols = word_table(
        "& e; + mais; = igual a; @ arroba; # número; ~ aproximadamente; × vezes; ÷ dividido por; ° graus")
    abbreviations = word_table(
        "Sr.: senhor; Sra.: senhora; Srta.: senhorita; Srs.: senhores; Dr.: doutor; Dra.: doutora; Drs.: doutores; "
        "Prof.: professor; Profa.: professora; Eng.: engenheiro; Exmo.: excelentíssimo; Exma.: excelentíssima; "
        "V. Sa.: vossa senhoria; Sto.: santo; Sta.: santa; p. ex.: por exemplo; p.ex.: por exemplo; pág.: página; "
        "págs.: páginas; nº: número; n.º: número; núm.: número; aprox.: aproximadamente; tel.: telefone; Av.: avenida; "
        "Ltda.: limitada; S.A.: sociedade anônima; S/A: sociedade anônima; a.C.: antes de Cristo; "
        "d.C.: depois de Cristo; obs.: observação; Obs.: observação; máx.: máximo; mín.: mínimo; séc.: século; "
        "vs.: versus; EUA: Estados Unidos; cia.: companhia; Cia.: companhia; depto.: departamento; apto.: apartamento; "
        "ap.: apartamento", ": ")
    spelled_as_words = word_set(
        "ONU OTAN UNESCO UNICEF OVNI AIDS FIFA UEFA NASA OPEP PIN LED COVID IKEA LEGO ENEM DETRAN MEC USP CEP PIX SUS "
        "OK WIFI RAM SIM FAQ ANVISA UNICAMP MERCOSUL PETROBRAS SENAI SESC SEBRAE FUNAI")
    months = _MONTHS
    first_day = "primeiro"
    scale_nouns = _MILLIONS
    letter_names = _LETTERS
    not_nouns = _NOT_NOUNS
    noun_letters = "a-záâãàéêíóôõúüç"
    centuries = word_set("século séculos")
    # "grama" is masculine as a unit
    units = nouns(
        "° grau(s); °C grau(s) Celsius; °F grau(s) Fahrenheit; K kelvin(s); km/h quilômetro(s) por hora; "
        "mph milha(s) por hora, f; m/s metro(s) por segundo; kWh quilowatt(s)-hora; MWh megawatt(s)-hora; "
        "Wh watt(s)-hora; kW quilowatt(s); MW megawatt(s); W watt(s); V volt(s); mA miliampere(s); A ampere(s); "
        "Hz hertz; kHz quilohertz; MHz megahertz; GHz gigahertz; km quilômetro(s); cm centímetro(s); mm milímetro(s); "
        "m metro(s); mi milha(s), f; ft pé(s); in polegada(s), f; kg quilograma(s); mg miligrama(s); g grama(s); "
        "t tonelada(s), f; lb libra(s), f; oz onça(s), f; l litro(s); L litro(s); ml mililitro(s); mL mililitro(s); "
        "hPa hectopasca(l|is); mbar milibar(es); bar bar(es); Pa pasca(l|is); dB decib(el|éis); lx lux; "
        "ppm parte(s) por milhão, f; µg/m³ micrograma(s) por metro cúbico; m² metro(s) quadrado(s); "
        "m³ metro(s) cúbico(s); km² quilômetro(s) quadrado(s); kB kilobyte(s); KB kilobyte(s); MB megabyte(s); "
        "GB gigabyte(s); TB terabyte(s); ms milissegundo(s); s segundo(s); min minuto(s); h hora(s), f", gender="m")
    currencies = currency_nouns(
        "BRL (real|reais) / centavo(s); EUR euro(s) / centavo(s); USD dólar(es) / centavo(s); "
        "GBP libra(s), f / (pêni|pence); JPY iene(s); CNY yuan(s); KRW won(s); RUB rublo(s) / copeque(s); "
        "CHF franco(s) suíço(s) / centavo(s); INR rupia(s), f / paisa(s), f; CAD dólar(es) canadense(s) / centavo(s); "
        "AUD dólar(es) australiano(s) / centavo(s); MXN peso(s) mexicano(s) / centavo(s); SEK coroa(s) sueca(s), f; "
        "PLN zloty(s)", gender="m")

    def counting(self, n: int, gender: str) -> str:
        return _cardinal(n, gender == "f")

    def ordinal(self, n: int) -> str:
        return _ordinal(n)

    def is_feminine(self, noun: str) -> bool:
        word = noun.lower()
        # the singulars a plural may have: "pessoas", "vezes" (vez), "mulheres" (mulher), "funções" (função)
        forms = {word, word[:-1] if word.endswith("s") else word, word[:-2] if word.endswith("es") else word,
                 word[:-3] + "ão" if word.endswith("ões") else word}
        if forms & _MASCULINE_IN_A:
            return False
        return bool(forms & _FEMININE) or any(f.endswith(_FEMININE_ENDINGS) for f in forms) or word.endswith("gens")

    def parts(self, denominator: int, one: bool) -> str:
        return f"{_cardinal(denominator)} {'avo' if one else 'avos'}"  # "três onze avos"

    def money_scaled(self, num: Num, exponent: int, code: str) -> str:
        """"R$ 5k": "cinco mil reais"; "US$ 2,5M": "dois vírgula cinco milhões de dólares"."""
        names = self.currencies.get(code)
        plural = names[0][1] if names else self.letters(code)
        if exponent == 3:
            return f"{self.number(num, names[0][2] if names else '')} mil {plural}"
        scale = {6: ("milhão", "milhões"), 9: ("bilhão", "bilhões")}[exponent]
        return f"{self.number(num)} {scale[0] if int(num.whole) < 2 else scale[1]} de {plural}"

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        """"dezenove e trinta"; on the hour "dezenove horas"; a written am/pm said as the part of
        the day ("sete e meia da noite" is not written: "sete e trinta da noite")."""
        said_hour = _cardinal(hour, feminine=True)
        hours = "hora" if hour in (0, 1) else "horas"  # "zero hora", as Brazil says midnight
        if second is not None:
            minutes = self.of(_cardinal(minute), "minuto" if minute == 1 else "minutos")
            seconds = self.of(_cardinal(second), "segundo" if second == 1 else "segundos")
            return f"{said_hour} {hours} {minutes} e {seconds}"
        if period:
            if hour == 12:
                words = "meio-dia" if period == "pm" else "meia-noite"
                return words + (f" e {_cardinal(minute)}" if minute else "")
            return said_hour + (f" e {_cardinal(minute)}" if minute else "") + " " + _day_part(hour, period)
        if minute == 0:
            return f"{said_hour} {hours}"
        return f"{said_hour} e {_cardinal(minute)}"

    def phone(self, groups: Sequence[str], international: bool) -> str:
        """Brazil reads the country and area codes as numbers ("mais cinquenta e cinco, onze"), the
        number itself digit by digit."""
        said = ", ".join(_cardinal(int(g)) if len(g) <= 2 and not g.startswith("0") else self.digits(g)
                         for g in groups)
        return f"mais {said}" if international else said

    def extra_rules(self) -> list[Rule]:
        number = number_pattern(self)
        months = "|".join(_MONTHS)
        ordinal = re.compile(r"(?<![\w.,])(?P<n>\d{1,4})\.?(?P<suf>[ºª])(?![\w])")
        first = re.compile(rf"(?<![\w.,])1[º°]?(?= de (?:{months})\b)", re.I)
        clock = re.compile(r"(?<![\w.,])(?P<h>[01]?\d|2[0-3])h(?:(?P<min>[0-5]\d)(?:min|m)?)?(?![\w])")
        phone = re.compile(r"(?<![\w+])(?:\(\d{2}\)\s?|\d{2}\s)9?\d{4}[-\s]\d{4}(?![\w])")
        scale = r"(?P<scale>mil|milhões|milhão|bilhões|bilhão|trilhões|trilhão|mi|bi|tri)"
        scaled = re.compile(rf"(?<![\w.,])(?P<cur>R\$|US\$|€|\$)\s?{number}\s{scale}(?![\w])")
        return [
            Rule("ordinal", ordinal, self._ordinal_said, 25),
            Rule("date", first, lambda m: "primeiro", 24),
            Rule("time", clock, lambda m: self.time(int(m.group("h")), int(m.group("min") or 0), None, None), 14),
            Rule("phone", phone, lambda m: self.phone(re.findall(r"\d+", m.group()), False), 11),
            Rule("currency", scaled, self._scaled_money, 19),
            Rule("number", re.compile(r"(?<![\w-])\d{5}-\d{3}(?![\w-])"), lambda m: self.digits(m.group()), 12),
            *super().extra_rules(),
        ]

    def _ordinal_said(self, m: re.Match[str]) -> str | None:
        n = int(m.group("n"))
        return _ordinal(n, feminine=m.group("suf") == "ª") if n else None

    def _scaled_money(self, m: re.Match[str]) -> str:
        """"R$ 1,5 milhão", "R$ 500 mil", "US$ 2 bi": the amount, its scale, the currency."""
        symbol = m.group("cur")
        code = {"R$": "BRL", "US$": "USD", "€": "EUR", "$": "USD"}[symbol]
        unit = self.currencies[code][0]
        num = parse_number(m)
        word = {"mi": "milhão", "bi": "bilhão", "tri": "trilhão"}.get(m.group("scale"), m.group("scale"))
        if word != "mil":
            word = word if int(num.whole) < 2 else word[:-2] + "ões"  # "1,5 milhão", as Brazil writes
            return f"{self.number(num)} {word} de {unit[1]}"
        return f"{self.number(num, unit[2])} mil {unit[1]}"


def _day_part(hour: int, period: str) -> str:
    if period == "am":
        return "da madrugada" if hour < 6 else "da manhã"
    return "da tarde" if hour < 7 else "da noite"
