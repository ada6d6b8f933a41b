"""East Asian text writes numbers in full-width forms ("１２．５％", "１９：３０", "３～５") and units as
single characters ("℃", "㎡", "㎏"). They are folded here to the ASCII the rules read, before the
rules run, in every language (a full-width digit in an English sentence is still a digit).

A letter or digit is always folded; a mark only where it belongs to a number or an address (a
decimal point or a colon between digits, a minus or a currency sign before one, a percent sign
after one), so that the sentence's own punctuation ("，", "：", "！") stays as written. Each folded
character keeps its place in the original, so the span map stays exact.
"""

from __future__ import annotations

import re

from hearth.text.normalize.mapped import Mapped

__all__ = ["fold_width"]

_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                   + "".join(chr(c) for c in range(0xFF10, 0xFF5B) if chr(c).isalnum()))
_FULL_DIGITS = "０１２３４５６７８９"
_DIGITS = frozenset("0123456789" + _FULL_DIGITS)

# Single characters that stand for a unit (the CJK compatibility squares), spelled as UNITS spells them.
_UNITS = {
    "℃": "°C", "℉": "°F", "㎏": "kg", "㎎": "mg", "㎍": "µg", "㎞": "km", "㎝": "cm", "㎜": "mm", "㎡": "m²",
    "㎥": "m³", "㎢": "km²", "㎖": "ml", "ℓ": "l", "㎾": "kW", "㎿": "MW", "㎽": "mW", "㎐": "Hz", "㎑": "kHz",
    "㎒": "MHz", "㎓": "GHz", "㏈": "dB", "㎧": "m/s", "㎩": "Pa", "㎫": "MPa", "㎪": "kPa", "㏊": "ha",
}
_SIGNS = {"－": "-", "＋": "+", "＄": "$", "￥": "¥", "￡": "£", "～": "~", "〜": "~", "，": ","}
_CANDIDATES = re.compile(rf"[\uff01-\uffee〜μ{''.join(_UNITS)}]")


def _folded(text: str, i: int) -> str | None:
    """What text[i] is folded to where it stands, or None (kept)."""
    c = text[i]
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if c in _UNITS:
        return _UNITS[c]
    if c == "μ":  # the Greek letter written for the micro sign: 75μg/m³
        return "µ" if (before in _DIGITS or before == " ") and after in "gmlLsAV" and after else None
    if c in _ALNUM:
        fold = True
    elif c in "．：／＿＠＋＆＝－" and before in _ALNUM and after in _ALNUM:
        fold = True  # inside a number or an address: 12．5, 19：30, a／b, x＠y, 3－5
    elif c in "～〜":
        fold = (before in _DIGITS or before in "％%") and (after in _DIGITS or after in "－-")  # 3～5
    elif c == "，":  # a thousands separator between full-width digits: ２８，０００ (not １，２, nor 8，100)
        back = text[max(0, i - 4):i][::-1]
        fold = _group_of(back, 1) and back.lstrip(_FULL_DIGITS)[:1] not in (".", "．") and (
            _group_of(text[i + 1:i + 5], 3))
    elif c in "－＋＄￥￡":
        fold = before not in _ALNUM and after in _DIGITS  # a sign or a currency before a number
    else:
        fold = c == "％" and before in _DIGITS
    if not fold:
        return None
    return _SIGNS.get(c) or chr(ord(c) - 0xFEE0)  # U+FF01..U+FF5E are U+0021..U+007E, full-width


def _group_of(digits: str, least: int) -> bool:
    """Whether `digits` starts with between `least` and 3 full-width digits, then no digit."""
    n = next((k for k, d in enumerate(digits) if d not in _FULL_DIGITS), len(digits))
    if digits[n:n + 1] in _DIGITS:
        return False
    return least <= n <= 3


def fold_width(text: Mapped) -> Mapped:
    s = text.text
    folds = [(m.start(), said) for m in _CANDIDATES.finditer(s) if (said := _folded(s, m.start())) is not None]
    if not folds:
        return text
    out, starts, ends, pos = [], [], [], 0
    for i, said in folds:
        out += [s[pos:i], said]
        starts += text.starts[pos:i] + [text.starts[i]] * len(said)
        ends += text.ends[pos:i] + [text.ends[i]] * len(said)
        pos = i + 1
    out.append(s[pos:])
    return Mapped("".join(out), starts + text.starts[pos:], ends + text.ends[pos:])
