"""Spanish: Spain's conventions as the default (the decimal comma, thousands grouped by a dot or a
space, the day before the month, the 24-hour clock, the euro's "céntimos"); "21.5" as sensors write
it is still a decimal, "1.234" a thousand and more (rules.number_pattern).

How it is said, as a speaker says it:
- Numbers agree with what they count: "un grado", "veintiún euros", "una tonelada", "doscientas
  personas"; alone a number is "uno", "veintiuno". Round millions take "de": "un millón de euros".
- Decimals: the comma said ("coma") and up to three decimals read as a number ("tres coma catorce",
  "cero coma cero cinco"); longer decimals digit by digit.
- Dates: "ocho de diciembre de dos mil veintiséis", the first day "uno" (Spain; Latin America says
  "primero"). No article: the writer writes "el", "del", "hasta el" before a date.
- Times: the 24-hour clock read as written, "diecinueve treinta", "siete cero cinco"; on the hour
  "siete en punto" up to twelve, "diecinueve horas" after; "de la tarde" where am/pm is written.
- Ranges: "de diez a veinte"; percentages "por ciento"; amounts "con" their cents.

num2words (0.5.14) gives the cardinals, with its faults fixed here: it says "veintiuno mil",
"ciento uno mil", "veintiuno millones" (the one is shortened before mil/millón: "veintiún mil") and
has no feminine ("doscientas", "una") nor the shortened form before a noun ("un", "veintiún"). Its
ordinals are misspelled past ten ("décimoprimero", "quadragésimo", "cuadrigentésimo"), so the
ordinals are written here from the RAE's forms ("undécimo", "decimotercero", "cuadragésimo").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from num2words import num2words

from hearth.text.normalize.language import Language, Num, Rule, currency_nouns, nouns, word_set, word_table
from hearth.text.normalize.languages.iberian import Iberian

__all__ = ["Spanish"]

_MILLIONS = ("millón", "millones", "billón", "billones")
_SHORT = {"uno": "un", "veintiuno": "veintiún"}  # the one before a noun or a scale word
_ORD_UNITS = ["", "primero", "segundo", "tercero", "cuarto", "quinto", "sexto", "séptimo", "octavo", "noveno"]
_ORD_TEENS = ["décimo", "undécimo", "duodécimo", "decimotercero", "decimocuarto", "decimoquinto", "decimosexto",
              "decimoséptimo", "decimoctavo", "decimonoveno"]
_ORD_TENS = ["", "", "vigésimo", "trigésimo", "cuadragésimo", "quincuagésimo", "sexagésimo", "septuagésimo",
             "octogésimo", "nonagésimo"]
_ORD_HUNDREDS = ["", "centésimo", "ducentésimo", "tricentésimo", "cuadringentésimo", "quingentésimo",
                 "sexcentésimo", "septingentésimo", "octingentésimo", "noningentésimo"]
_LETTERS = {"a": "a", "b": "be", "c": "ce", "d": "de", "e": "e", "f": "efe", "g": "ge", "h": "hache", "i": "i",
            "j": "jota", "k": "ka", "l": "ele", "m": "eme", "n": "ene", "ñ": "eñe", "o": "o", "p": "pe", "q": "cu",
            "r": "erre", "s": "ese", "t": "te", "u": "u", "v": "uve", "w": "uve doble", "x": "equis",
            "y": "i griega", "z": "zeta"}

# Words after a number that are not what it counts ("1 de cada 10", "2 y 3"): the number stays "uno".
_NOT_NOUNS = frozenset((
    "a", "al", "ante", "bajo", "con", "contra", "de", "del", "desde", "durante", "e", "en", "entre", "hacia", "hasta",
    "la", "las", "lo", "los", "más", "menos", "mediante", "o", "ni", "para", "pero", "por", "que", "se", "según",
    "si", "sin", "so", "sobre", "tras", "u", "y", "ya", "es", "son", "fue", "era", "está", "están", "ha", "han",
    "como", "cuando", "donde",
))
_UNSTRESSED = str.maketrans("áéíóú", "aeiou")
_NEXT_WORD = re.compile(r"\s+([^\W\d_]+)")
_MASCULINE_IN_A = frozenset((
    "día", "mapa", "problema", "sistema", "programa", "tema", "idioma", "clima", "planeta", "poema", "esquema",
    "drama", "dilema", "teorema", "diploma", "fantasma", "pijama", "sofá", "cometa", "telegrama",
))
_FEMININE_ENDINGS = ("a", "ción", "sión", "cion", "sion", "dad", "tad", "tud", "umbre", "ie", "sis", "ez")
_FEMININE = frozenset((
    "mano", "foto", "moto", "radio", "noche", "parte", "clase", "calle", "gente", "llave", "leche", "carne", "nube",
    "mujer", "flor", "imagen", "ley", "luz", "voz", "red", "sal", "piel", "miel", "cárcel", "señal", "tarde",
    "muerte", "suerte", "fuente", "frase", "base", "torre", "nave",
))


@functools.lru_cache(maxsize=4096)
def _cardinal(n: int, form: str = "") -> str:
    """`n` in words; `form` "" alone ("uno"), "m" before a masculine noun ("un", "veintiún"), "f"
    before a feminine one ("una", "doscientas": the part below a million agrees, millones do not)."""
    if n >= 10**18:
        return " ".join(_cardinal(int(d)) for d in str(n))
    words = num2words(n, lang="es").split()
    for i, word in enumerate(words[:-1]):
        if words[i + 1] in ("mil", *_MILLIONS):
            words[i] = _SHORT.get(word, word)
    if form:
        low = max((i + 1 for i, w in enumerate(words) if w in _MILLIONS), default=0)
        for i in range(low, len(words)):
            word = words[i]
            if form == "f":
                word = word.replace("ientos", "ientas")
                if i == len(words) - 1 and word in ("uno", "veintiuno"):
                    word = word[:-1] + "a"
            elif i == len(words) - 1:
                word = _SHORT.get(word, word)
            words[i] = word
    return " ".join(words)


def _ordinal(n: int, feminine: bool = False, short: bool = False) -> str:
    """The ordinal ("vigésimo primero"); `short` before a masculine noun ("primer", "tercer")."""
    if n >= 1000:
        thousands, rest = divmod(n, 1000)
        words = ("" if thousands == 1 else _cardinal(thousands).replace(" ", "")) + "milésimo"
        words += f" {_ordinal(rest)}" if rest else ""
    else:
        hundreds, tens = divmod(n, 100)
        parts = [_ORD_HUNDREDS[hundreds]]
        if 10 <= tens < 20:
            parts.append(_ORD_TEENS[tens - 10])
        else:
            parts += [_ORD_TENS[tens // 10], _ORD_UNITS[tens % 10]]
        words = " ".join(p for p in parts if p)
    if feminine:
        return " ".join(w[:-1] + "a" if w.endswith("o") else w for w in words.split())
    if short and words.endswith(("primero", "tercero")):
        return words[:-1]
    return words


class Spanish(Iberian):
    code = "es"
    name = "spanish"
    words = word_table(
        "minus menos; point coma; to a; percent por ciento; and con; plus más; over entre; thousand mil; "
        "million millones; billion mil millones; versus a; by por; etc etcétera; half medio; halves medios; "
        "third tercio; thirds tercios")
    marks = word_table(
        ". punto; @ arroba; / barra; : dos puntos; - guion; _ guion bajo; ? interrogación; = igual; # almohadilla; "
        "~ virgulilla")
    symbols = word_table("& y; + más; = igual a; @ arroba; # número; ~ aproximadamente; × por; ÷ entre; ° grados")
    abbreviations = word_table(
        "Sr.: señor; Sra.: señora; Srta.: señorita; Sres.: señores; Dr.: doctor; Dra.: doctora; Prof.: profesor; "
        "Profa.: profesora; Lic.: licenciado; Ing.: ingeniero; Ud.: usted; Uds.: ustedes; Vd.: usted; Vds.: ustedes; "
        "Dña.: doña; Sto.: santo; Sta.: santa; p. ej.: por ejemplo; p.ej.: por ejemplo; pág.: página; págs.: páginas; "
        "núm.: número; n.º: número; nº: número; aprox.: aproximadamente; tel.: teléfono; Avda.: avenida; Av.: avenida; "
        "C/: calle; EE. UU.: Estados Unidos; EE.UU.: Estados Unidos; a. C.: antes de Cristo; d. C.: después de Cristo; "
        "máx.: máximo; mín.: mínimo; vs.: contra; S. A.: sociedad anónima; S.A.: sociedad anónima; "
        "S. L.: sociedad limitada; S.L.: sociedad limitada; Cía.: compañía; izq.: izquierda; dcha.: derecha; "
        "admón.: administración; depto.: departamento; Dpto.: departamento", ": ")
    spelled_as_words = word_set(
        "ONU OTAN UNESCO UNICEF OVNI SIDA PYME PYMES RENFE FIFA UEFA NASA OPEP IVA ISO RAE PIN LED ERE AVE COVID IKEA "
        "LEGO ONCE INE DGT OK SIM RAM ROM WIFI PSOE FAQ SEAT MIR")
    months = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
              "noviembre", "diciembre")
    scale_nouns = _MILLIONS
    letter_names = _LETTERS
    not_nouns = _NOT_NOUNS
    noun_letters = "a-záéíóúñü"
    centuries = word_set("siglo siglos")
    units = nouns(
        "° grado(s); °C grado(s) Celsius; °F grado(s) Fahrenheit; K kelvin(s); km/h kilómetro(s) por hora; "
        "mph milla(s) por hora, f; m/s metro(s) por segundo; kWh kilovatio(s) hora; MWh megavatio(s) hora; "
        "Wh vatio(s) hora; kW kilovatio(s); MW megavatio(s); W vatio(s); V voltio(s); mA miliamperio(s); A amperio(s); "
        "Hz hercio(s); kHz kilohercio(s); MHz megahercio(s); GHz gigahercio(s); km kilómetro(s); cm centímetro(s); "
        "mm milímetro(s); m metro(s); mi milla(s), f; ft pie(s); in pulgada(s), f; kg kilogramo(s); mg miligramo(s); "
        "g gramo(s); t tonelada(s), f; lb libra(s), f; oz onza(s), f; l litro(s); L litro(s); ml mililitro(s); "
        "mL mililitro(s); hPa hectopascal(es); mbar milibar(es); bar bar(es); Pa pascal(es); dB decibelio(s); lx lux; "
        "ppm parte(s) por millón, f; µg/m³ microgramo(s) por metro cúbico; m² metro(s) cuadrado(s); "
        "m³ metro(s) cúbico(s); km² kilómetro(s) cuadrado(s); kB kilobyte(s); KB kilobyte(s); MB megabyte(s); "
        "GB gigabyte(s); TB terabyte(s); ms milisegundo(s); s segundo(s); min minuto(s); h hora(s), f", gender="m")
    currencies = currency_nouns(
        "EUR euro(s) / céntimo(s); USD dólar(es) / centavo(s); GBP libra(s), f / penique(s); JPY yen(es); "
        "CNY yuan(es); KRW won(es); RUB rublo(s) / kopek(s); BRL real(es) / centavo(s); "
        "CHF franco(s) suizo(s) / céntimo(s); INR rupia(s), f / paisa(s); CAD dólar(es) canadiense(s) / centavo(s); "
        "AUD dólar(es) australiano(s) / centavo(s); MXN peso(s) mexicano(s) / centavo(s); SEK corona(s) sueca(s), f; "
        "PLN esloti(s)", gender="m")

    def counting(self, n: int, gender: str) -> str:
        return _cardinal(n, gender)

    def ordinal(self, n: int) -> str:
        return _ordinal(n)

    def is_feminine(self, noun: str) -> bool:
        word = noun.lower()
        # the singulars a plural may have: "personas", "ciudades" (ciudad), "canciones" (canción, unaccented)
        forms = {word, word[:-1] if word.endswith("s") else word, word[:-2] if word.endswith("es") else word}
        if forms & _MASCULINE_IN_A:
            return False
        return bool(forms & _FEMININE) or any(f.endswith(_FEMININE_ENDINGS) for f in forms)

    def parts(self, denominator: int, one: bool) -> str:
        """"onceavo", "dieciseisavo", "treintavo": the cardinal, unstressed, with -avo."""
        stem = _cardinal(denominator).replace(" y ", "i").replace(" ", "").translate(_UNSTRESSED)
        return re.sub(r"[ao]$", "", stem) + ("avo" if one else "avos")

    def money_scaled(self, num: Num, exponent: int, code: str) -> str:
        """"5k €": "cinco mil euros"; "2,5M $": "dos coma cinco millones de dólares" (the English
        billion, 10⁹, is "mil millones")."""
        names = self.currencies.get(code)
        plural = names[0][1] if names else self.letters(code)
        if exponent == 3:
            return f"{self.number(num, names[0][2] if names else 'm')} mil {plural}"
        if exponent == 6:
            amount = f"{self.number(num, 'm')} {'millón' if num.is_one else 'millones'}"
        else:
            amount = "mil millones" if num.is_one else f"{self.number(num, 'm')} mil millones"
        return f"{amount} de {plural}"

    def time(self, hour: int, minute: int, second: int | None, period: str | None) -> str:
        """The 24-hour clock as written ("diecinueve treinta"); a written am/pm said as the part of
        the day ("siete treinta de la tarde")."""
        said_hour = _cardinal(hour, "f") if hour else "cero"
        if second is not None:
            minutes = self.of(_cardinal(minute, "m"), "minuto" if minute == 1 else "minutos")
            seconds = self.of(_cardinal(second, "m"), "segundo" if second == 1 else "segundos")
            return f"{said_hour} {'hora' if hour == 1 else 'horas'} {minutes} y {seconds}"
        minutes = ("cero " if minute < 10 else "") + _cardinal(minute)
        if period:
            return f"{said_hour}{' ' + minutes if minute else ''} {_day_part(hour, period)}"
        if minute == 0:
            return f"{said_hour} en punto" if 1 <= hour <= 12 else f"{said_hour} horas"
        return f"{said_hour} {minutes}"

    def phone(self, groups: Sequence[str], international: bool) -> str:
        """Spain reads phone numbers in groups, each as a number ("seiscientos doce, treinta y
        cuatro"); a group with a leading zero digit by digit, a long group in pairs."""
        said = ", ".join(_phone_group(self, g) for g in groups)
        return f"más {said}" if international else said

    def extra_rules(self) -> list[Rule]:
        ordinal = re.compile(r"(?<![\w.,])(?P<n>\d{1,4})(?P<suf>\.?[ºª]|\.?er|(?:ro|ra|do|da|to|ta|mo|ma|vo|va|no|na))"
                             r"(?![\w])")
        clock = re.compile(r"(?<![\w.,])(?P<h>[01]?\d|2[0-3])[.:](?P<min>[0-5]\d)\s?h\b|"
                           r"(?<=\blas )(?P<h2>[01]?\d|2[0-3])\.(?P<min2>[0-5]\d)(?![\w]|[.,]\d)")
        phone = re.compile(r"(?<![\w+.,])[6-9]\d{2}(?: \d{2}){3}(?![\w])|(?<![\w+.,])[89]\d (?:\d{3} \d{2} \d{2})"
                           r"(?![\w])|(?<![\w+.,])[6-9]\d{2} \d{3} \d{3}(?![\w])")
        return [
            Rule("ordinal", ordinal, self._ordinal_said, 25),
            Rule("time", clock, self._dotted_time, 14),
            Rule("phone", phone, lambda m: self.phone(re.findall(r"\d+", m.group()), False), 11),
            *super().extra_rules(),
        ]

    def _ordinal_said(self, m: re.Match[str]) -> str | None:
        n, suffix = int(m.group("n")), m.group("suf").lstrip(".")
        if n == 0:
            return None
        feminine = suffix in ("ª", "a") or (len(suffix) == 2 and suffix.endswith("a"))
        masculine = _ordinal(n)
        if suffix == "er" and not masculine.endswith(("primero", "tercero")):
            return None
        if len(suffix) == 2 and suffix != "er" and masculine[-2:] != suffix[0] + "o":
            return None  # "2do", "7mo": the ending written must be the word's
        following = _NEXT_WORD.match(m.string, m.end())
        noun = (following is not None and following.group(1).islower() and following.group(1) not in _NOT_NOUNS
                and m.string[following.end():following.end() + 1] != ".")  # "3.º izq.": not a noun
        return _ordinal(n, feminine, short=suffix == "er" or (noun and not feminine))

    def _dotted_time(self, m: re.Match[str]) -> str:
        """Spain also writes the clock with a dot: "a las 19.30", "19.30 h"."""
        hour, minute = m.group("h") or m.group("h2"), m.group("min") or m.group("min2")
        return self.time(int(hour), int(minute), None, None)


def _day_part(hour: int, period: str) -> str:
    if hour == 12:
        return "del mediodía" if period == "pm" else "de la noche"
    if period == "am":
        return "de la madrugada" if hour < 6 else "de la mañana"
    return "de la tarde" if hour < 8 else "de la noche"


def _phone_group(lang: Language, group: str) -> str:
    """A group of a phone number: as a number up to three digits, a longer one in pairs (after a
    first three when odd), a leading zero digit by digit."""
    if len(group) > 3:
        head = 3 if len(group) % 2 else 2
        chunks = [group[:head], *(group[i:i + 2] for i in range(head, len(group), 2))]
        return ", ".join(_phone_group(lang, c) for c in chunks)
    if group.startswith("0") or len(group) == 1:
        return lang.digits(group)
    return lang.cardinal(int(group))
