"""Say what the text means: the text front end. "21.5 °C" becomes "twenty-one point five degrees
Celsius", "7:30 pm" "seven thirty P M", an LLM's markdown its words; in ten languages, with a span
map from every spoken word back to the characters it came from.

    normalize("It's 21.5 °C.", "english").text   -> "It's twenty-one point five degrees Celsius."

The steps: markup out (markdown, HTML, emoji: `markup`), full-width forms folded (`width`), the
language of each sentence (the request's, or by its script), then the rules (`rules`) said in that
language (`languages/`), with a pronunciation lexicon's respellings first (`lexicon`). The result
speaks the same when normalized again: it holds no digits or symbols a rule would read.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hearth.text.normalize.language import LANGUAGES, Language, Rule  # noqa: F401 - (Rule: for the lexicon's type)
from hearth.text.normalize.mapped import Mapped
from hearth.text.normalize.markup import strip_emoji, strip_html, strip_markdown
from hearth.text.normalize.rules import say_plain
from hearth.text.normalize.say_as import say_interpreted
from hearth.text.normalize.spans import VERBATIM, Normalized, Span, Spoken, Word
from hearth.text.normalize.ssml import SayAs
from hearth.text.normalize.width import fold_width

if TYPE_CHECKING:
    from hearth.text.normalize.lexicon import Lexicon

__all__ = ["LANGUAGES", "PARTS", "Normalized", "NormalizeOptions", "Span", "Word", "language", "language_of",
           "normalize"]

# The parts a request can turn off, and the rules each covers.
PARTS: dict[str, tuple[str, ...]] = {
    "markdown": (), "html": (), "emoji": (),
    "numbers": ("number", "ordinal", "range", "year", "fraction"), "currency": ("currency",),
    "units": ("measure",), "dates": ("date",), "times": ("time",), "phones": ("phone",),
    "addresses": ("url", "email"), "abbreviations": ("abbreviation", "initialism", "symbol"), "lexicon": ("lexicon",),
}


@dataclass(frozen=True)
class NormalizeOptions:
    """What the front end does for one request: on by default, `enabled=False` off altogether,
    `skip` the parts left as they are (names of PARTS), `lexicon` respellings said first."""

    enabled: bool = True
    skip: frozenset[str] = field(default_factory=frozenset)
    lexicon: Lexicon | None = None
    voice: str | None = None  # whose respellings of the lexicon apply besides everyone's

    def __post_init__(self) -> None:
        unknown = sorted(set(self.skip) - set(PARTS))
        if unknown:
            raise ValueError(f"unknown normalizer part(s) {', '.join(unknown)}; the parts are {', '.join(PARTS)}")

    def allows(self, kind: str) -> bool:
        """Whether the rules of `kind` ("number", "date", ...) run."""
        return not any(kind in PARTS[part] for part in self.skip)

    def allows_part(self, part: str) -> bool:
        return part not in self.skip

    def without(self, *parts: str) -> NormalizeOptions:
        return dataclasses.replace(self, skip=self.skip | frozenset(parts))


_LOADED: dict[str, Language] = {}


def language(name: str) -> Language:
    """The language `name` (the prompt's name, "english", or its code, "en")."""
    if name not in LANGUAGES:
        by_code = {code: full for full, (code, _) in LANGUAGES.items()}
        if name not in by_code:
            raise ValueError(f"no text rules for the language {name!r}; the languages are {', '.join(LANGUAGES)}")
        name = by_code[name]
    if name not in _LOADED:
        code, cls = LANGUAGES[name]
        _LOADED[name] = getattr(importlib.import_module(f"hearth.text.normalize.languages.{code}"), cls)()
    return _LOADED[name]


_KANA = re.compile(r"[\u3040-\u30ff]")
_LETTER = re.compile(r"[^\W\d_]")
_SCRIPTS = (
    (re.compile(r"[\u3040-\u30ff]"), "japanese"),
    (re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]"), "korean"),
    (re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"), "chinese"),
    (re.compile(r"[\u0400-\u04ff]"), "russian"),
)


def first_letters_language(sentence: str, final: bool = True) -> str | None:
    """The language "auto" gives a sentence: its first letter's script says it (kana Japanese,
    hangul Korean, Cyrillic Russian, Latin and the rest English, since the script cannot tell
    English from German: a request that knows says so); a sentence that starts with Han characters
    is Japanese if kana follow anywhere in it, else Chinese. None: no letter yet, or (not `final`)
    Han characters without kana so far, which the rest of the sentence may still decide."""
    first = _LETTER.search(sentence)
    if first is None:
        return None
    for pattern, name in _SCRIPTS:
        if pattern.match(first.group()):
            if name == "chinese":
                if _KANA.search(sentence, first.start()):
                    return "japanese"
                return "chinese" if final else None
            return name
    return "english"


def language_of(sentence: str) -> str:
    """The language "auto" gives a whole sentence (English where it has no letters)."""
    return first_letters_language(sentence) or "english"


# Where "auto" decides again: after a sentence's end (a full stop and a space, CJK ends, new lines).
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")


_SPACES = re.compile(r"[ \t]{2,}|\t")


def normalize(text: str, language_name: str = "auto", options: NormalizeOptions | None = None) -> Normalized:
    """`text` as it will be spoken in `language_name` ("auto": each sentence by its script), and the
    span map back to `text`. Raises ValueError for a language without rules."""
    return normalize_span(text, 0, len(text), language_name, options)


def clean_markup(text: str, options: NormalizeOptions) -> Mapped:
    """`text` with what the options take out (emoji, HTML, markdown) taken out."""
    clean = Mapped(text)
    if options.allows_part("emoji"):
        clean = strip_emoji(clean)
    if options.allows_part("html"):
        clean = strip_html(clean)
    if options.allows_part("markdown"):
        clean = strip_markdown(clean)
    clean = fold_width(clean)  # "１２．５％" -> "12.5%", "℃" -> "°C": what the rules read
    # Runs of spaces left where markup or emoji stood ("your coat 🧥 now") made one: the text reads
    # the same whether it comes whole or cut into sentences (which the sentence splitter joins so).
    return clean.sub(_SPACES, lambda m: [" "]) if "  " in clean.text or "\t" in clean.text else clean


def normalize_span(text: str, start: int, end: int, language_name: str = "auto",
                   options: NormalizeOptions | None = None) -> Normalized:
    """text[start:end] as it will be spoken, read in the context of all of `text` (what stands before
    `start`, and in "auto" the rest of each sentence's text for its language); spans over `text`.
    For text that arrives in pieces (`LiveNormalizer`), whose cuts no rule reads across."""
    options = options or NormalizeOptions()
    if not options.enabled:
        return Normalized(text, text[start:end], (Span(0, end - start, start, end),) if end > start else ())
    clean = clean_markup(text, options)
    lo = next((i for i, s in enumerate(clean.starts) if s >= start), len(clean))
    hi = next((i for i, s in enumerate(clean.starts) if s >= end), len(clean)) if end < len(text) else len(clean)
    return normalize_mapped(text, clean, lo, hi, language_name, options)


def normalize_mapped(source: str, clean: Mapped, lo: int, hi: int, language_name: str,
                     options: NormalizeOptions, say_as: Sequence[SayAs] = ()) -> Normalized:
    """clean.text[lo:hi] said (`clean` is `source` rewritten, each character knowing its origin),
    with `say_as` spans (SSML) read as they say instead of by the rules."""
    spoken = Spoken(clean.text)
    lexicon = options.lexicon if options.lexicon is not None and options.allows_part("lexicon") else None

    def say(a: int, b: int, name: str) -> None:
        lang = language(name)
        extra = lexicon.rules(lang.name, options.voice) if lexicon is not None else []
        pos = a
        for span in say_as:
            if span.end <= pos or span.start >= b:
                continue
            say_plain(spoken, pos, max(pos, span.start), lang, options.allows, extra)
            s, e = max(pos, span.start), min(b, span.end)
            said = say_interpreted(lang, clean.text[s:e], span.interpret_as, span.format)
            spoken.said(said, s, e, f"say-as:{span.interpret_as}") if said else spoken.verbatim(s, e)
            pos = e
        say_plain(spoken, pos, b, lang, options.allows, extra)

    if language_name != "auto":
        say(lo, hi, language_name)
    else:
        for a, b, name in _language_runs(clean.text):
            if b > lo and a < hi:
                say(max(a, lo), min(b, hi), name)
    return _to_original(source, clean, spoken.build())


def sentence_starts(text: str) -> list[int]:
    """Where "auto" decides a sentence's language anew."""
    return [m.end() for m in _SENTENCE_END.finditer(text)]


def _language_runs(text: str) -> list[tuple[int, int, str]]:
    """[start, end, language) runs of consecutive sentences that "auto" reads in one language."""
    runs: list[tuple[int, int, str]] = []
    pos, previous = 0, "english"
    for cut in [*(m.end() for m in _SENTENCE_END.finditer(text)), len(text)]:
        if cut <= pos:
            continue
        name = first_letters_language(text[pos:cut]) or previous
        if runs and runs[-1][2] == name:
            runs[-1] = (runs[-1][0], cut, name)
        else:
            runs.append((pos, cut, name))
        pos, previous = cut, name
    return runs


def _to_original(source: str, clean: Mapped, said: Normalized) -> Normalized:
    """The spans of `said` (over the cleaned text) made spans over the original `source`."""
    spans: list[Span] = []
    for span in said.spans:
        if span.kind != VERBATIM:
            lo, hi = clean.origin(span.source_start, span.source_end)
            spans.append(Span(span.start, span.end, lo, hi, span.kind))
            continue
        i = span.source_start
        while i < span.source_end:  # runs of characters that are the original's own, one to one
            j = i + 1
            if clean.is_verbatim(i):
                while (j < span.source_end and clean.is_verbatim(j) and clean.starts[j] == clean.starts[j - 1] + 1):
                    j += 1
                kind = VERBATIM
            else:
                while j < span.source_end and (clean.starts[j], clean.ends[j]) == (clean.starts[i], clean.ends[i]):
                    j += 1
                kind = "added" if clean.starts[i] == clean.ends[i] else "markup"
            lo, hi = clean.origin(i, j)
            out = span.start + i - span.source_start
            spans.append(Span(out, out + j - i, lo, hi, kind))
            i = j
    return Normalized(source, said.text, tuple(spans))
