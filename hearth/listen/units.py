"""The units a transcript is aligned in, cut as qwen-asr cuts them for Qwen3-ForcedAligner.

Japanese: nagisa's words (an optional dependency: `pip install nagisa==0.2.11`). Korean: each
space-separated word split once, after its longest beginning (two characters or more) found in
qwen-asr's Korean word list, or kept whole when none is (soynlp's LTokenizer with that list as
scores; the list ships with Hearth, see `korean_words.txt`). Every other language: the
space-separated words, with each CJK ideograph a unit of its own. In every case only letters,
digits and apostrophes are kept, and units left empty are dropped.
"""

from __future__ import annotations

import importlib
import sys
import threading
import unicodedata
from functools import cache
from importlib.resources import files
from types import ModuleType

from hearth.errors import InputError

__all__ = ["import_nagisa", "is_cjk", "korean_words", "split_units"]

# The CJK Unified Ideographs blocks (and their Extensions A to E, and the compatibility block).
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF), (0xF900, 0xFAFF))


def is_cjk(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _CJK)


def _kept(ch: str) -> bool:
    return ch == "'" or unicodedata.category(ch)[0] in "LN"


def _clean(word: str) -> str:
    return "".join(ch for ch in word if _kept(ch))


def _spaced(text: str) -> list[str]:
    units: list[str] = []
    for word in text.split():
        run = ""
        for ch in _clean(word):
            if is_cjk(ch):
                units += [run, ch] if run else [ch]
                run = ""
            else:
                run += ch
        if run:
            units.append(run)
    return units


@cache
def korean_words() -> frozenset[str]:
    """The Korean word list (lines after the '#' header of korean_words.txt)."""
    text = files("hearth.listen").joinpath("korean_words.txt").read_text(encoding="utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


def _korean(text: str) -> list[str]:
    words = korean_words()
    units = []
    for word in text.split():
        cut = len(word)  # a word of two characters or fewer, or with no listed beginning, stays whole
        if len(word) > 2:
            cut = next((end for end in range(len(word), 1, -1) if word[:end] in words), len(word))
        units += [c for c in (_clean(word[:cut]), _clean(word[cut:])) if c]
    return units


def _japanese(text: str) -> list[str]:
    try:
        nagisa = import_nagisa()
    except ImportError as e:
        raise InputError("aligning Japanese needs nagisa, its word splitter: pip install nagisa==0.2.11",
                         "language") from e
    return [c for c in (_clean(w) for w in nagisa.tagging(text).words) if c]


def import_nagisa() -> ModuleType:
    """nagisa, imported on a thread of its own. Its DyNet library is built with fast math: loading
    it sets flush-to-zero and denormals-are-zero in the thread that loads it (the processor's
    MXCSR, one per thread), which would change the arithmetic of whatever that thread computes
    afterwards (speech, numpy, a caller's own code). The loading thread then ends; the module,
    once imported, runs correctly on any thread."""
    if "nagisa" in sys.modules:
        return importlib.import_module("nagisa")  # (None there, as when blocked, raises ImportError)
    failed: list[BaseException] = []

    def load() -> None:
        try:
            importlib.import_module("nagisa")
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            failed.append(e)

    loader = threading.Thread(target=load, name="hearth-load-nagisa")
    loader.start()
    loader.join()
    if failed:
        raise failed[0]
    return sys.modules["nagisa"]


def split_units(text: str, language: str | None) -> list[str]:
    """`text` cut into alignment units by the rule of `language` (a canonical name, or None)."""
    name = (language or "").lower()
    if name == "japanese":
        return _japanese(text)
    if name == "korean":
        return _korean(text)
    return _spaced(text)
