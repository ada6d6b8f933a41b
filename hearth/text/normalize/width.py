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

_FULL_ALNUM = "\uff10-\uff19\uff21-\uff3a\uff41-\uff5a"
_ALNUM = f"0-9A-Za-z{_FULL_ALNUM}"
_DIGIT = "0-9\uff10-\uff19"

# Single characters that stand for a unit (the CJK compatibility squares), spelled as UNITS spells them.
_UNITS = {
    "℃": "°C", "℉": "°F", "㎏": "kg", "㎎": "mg", "㎍": "µg", "㎞": "km", "㎝": "cm", "㎜": "mm", "㎡": "m²",
    "㎥": "m³", "㎢": "km²", "㎖": "ml", "ℓ": "l", "㎾": "kW", "㎿": "MW", "㎽": "mW", "㎐": "Hz", "㎑": "kHz",
    "㎒": "MHz", "㎓": "GHz", "㏈": "dB", "㎧": "m/s", "㎩": "Pa", "㎫": "MPa", "㎪": "kPa", "㏊": "ha",
}
_SIGNS = {"－": "-", "＋": "+", "＄": "$", "￥": "¥", "￡": "£", "～": "~", "〜": "~", "，": ","}

_FOLD = re.compile(
    rf"[{_FULL_ALNUM}]"
    # marks inside a number or an address: 12．5, 19：30, a／b, x＠y, 3－5, 3～5, 3〜5
    rf"|(?<=[{_ALNUM}])[．：／＿＠＋＆＝－](?=[{_ALNUM}])"
    rf"|(?<=[{_DIGIT}％%])[～〜](?=[{_DIGIT}－-])"
    rf"|(?<=[{_DIGIT}])，(?=[{_DIGIT}]{{3}}(?![{_DIGIT}]))"  # a thousands separator: 28，000 (not 1，2)
    rf"|(?<![{_ALNUM}])[－＋＄￥￡](?=[{_DIGIT}])"  # a sign or a currency before a number
    rf"|(?<=[{_DIGIT}])％"
    rf"|[{''.join(_UNITS)}]"
)
_ANY = re.compile(rf"[\uff01-\uffee{''.join(_UNITS)}〜]")


def _folded(char: str) -> str:
    if char in _UNITS:
        return _UNITS[char]
    if char in _SIGNS:
        return _SIGNS[char]
    return chr(ord(char) - 0xFEE0)  # U+FF01..U+FF5E are U+0021..U+007E, full-width


def fold_width(text: Mapped) -> Mapped:
    if not _ANY.search(text.text):
        return text
    return text.sub(_FOLD, lambda m: [_folded(m.group())])
