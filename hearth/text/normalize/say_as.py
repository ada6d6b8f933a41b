"""SSML's `<say-as>`: a stretch read as the markup says (spelled, a number, digits, a date in a given
order, a time, a telephone number, an amount of money), in the language of its part."""

from __future__ import annotations

import re

from hearth.text.normalize.language import Language, Num
from hearth.text.normalize.rules import number_pattern, parse_number, rules_for

__all__ = ["say_interpreted"]


def say_interpreted(lang: Language, text: str, interpret_as: str, fmt: str | None) -> str | None:
    """How `text` is said as `interpret_as`; None: it is not one (then it is spoken as written)."""
    text = text.strip()
    if not text:
        return None
    if interpret_as in ("characters", "spell-out"):
        return lang.join([lang.digits(c) if c.isdigit() else lang.letters(c) for c in text if not c.isspace()])
    if interpret_as == "digits":
        return lang.digits(text) if re.search(r"\d", text) else None
    if interpret_as in ("cardinal", "number"):
        num = _number(lang, text)
        return lang.number(num) if num is not None else None
    if interpret_as == "ordinal":
        digits = re.sub(r"\D", "", text)
        return lang.ordinal(int(digits)) if digits else None
    if interpret_as == "telephone":
        groups = re.findall(r"\d+", text)
        return lang.phone(groups, text.startswith("+")) if groups else None
    if interpret_as == "date":
        return _date(lang, text, (fmt or lang.date_order).lower())
    if interpret_as in ("time", "currency"):
        kind = "time" if interpret_as == "time" else "currency"
        for rule in rules_for(lang):
            if rule.kind == kind and (m := rule.pattern.fullmatch(text)) is not None:
                return rule.say(m)
        return None
    return None


def _number(lang: Language, text: str) -> Num | None:
    m = re.fullmatch(number_pattern(lang), text)
    return parse_number(m) if m else None


def _date(lang: Language, text: str, fmt: str) -> str | None:
    """A date in the order `fmt` gives (ymd, dmy, mdy, md, dm, ym, my, y, m, d)."""
    numbers = [int(n) for n in re.findall(r"\d+", text)]
    order = [c for c in fmt if c in "ymd"]
    if len(numbers) != len(order) or not order:
        return None
    parts = dict(zip(order, numbers, strict=True))
    year, month, day = parts.get("y"), parts.get("m"), parts.get("d")
    if order == ["y"] and year is not None:
        return lang.year(year)
    if month is not None and not 1 <= month <= 12 or day is not None and not 1 <= day <= 31:
        return None
    return lang.date(year, month, day)
