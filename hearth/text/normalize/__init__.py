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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hearth.text.normalize.language import Language, Rule
from hearth.text.normalize.mapped import Mapped
from hearth.text.normalize.markup import strip_emoji, strip_html, strip_markdown
from hearth.text.normalize.rules import say_plain
from hearth.text.normalize.spans import VERBATIM, Normalized, Span, Spoken, Word
from hearth.text.normalize.width import fold_width

if TYPE_CHECKING:
    from hearth.text.normalize.lexicon import Lexicon

__all__ = ["LANGUAGES", "PARTS", "Normalized", "NormalizeOptions", "Span", "Word", "language", "language_of",
           "normalize"]

# The languages, by the prompt's name: their module and class in hearth/text/normalize/languages/.
LANGUAGES = {
    "english": ("en", "English"), "chinese": ("zh", "Chinese"), "japanese": ("ja", "Japanese"),
    "korean": ("ko", "Korean"), "german": ("de", "German"), "french": ("fr", "French"),
    "russian": ("ru", "Russian"), "portuguese": ("pt", "Portuguese"), "spanish": ("es", "Spanish"),
    "italian": ("it", "Italian"),
}
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
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")


def language_of(sentence: str) -> str:
    """The language a sentence's script says ("auto"): kana Japanese, hangul Korean, Han characters
    Chinese, Cyrillic Russian, and English for the Latin script (which cannot tell English from
    German or Spanish: a request that knows says so)."""
    if _KANA.search(sentence):
        return "japanese"
    if _HANGUL.search(sentence):
        return "korean"
    if _HAN.search(sentence):
        return "chinese"
    if _CYRILLIC.search(sentence):
        return "russian"
    return "english"


# Where "auto" decides again: after a sentence's end (a full stop and a space, CJK ends, new lines).
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")


def normalize(text: str, language_name: str = "auto", options: NormalizeOptions | None = None) -> Normalized:
    """`text` as it will be spoken in `language_name` ("auto": each sentence by its script), and the
    span map back to `text`. Raises ValueError for a language without rules."""
    options = options or NormalizeOptions()
    if not options.enabled:
        return Normalized(text, text, (Span(0, len(text), 0, len(text)),) if text else ())
    clean = Mapped(text)
    if options.allows_part("emoji"):
        clean = strip_emoji(clean)
    if options.allows_part("html"):
        clean = strip_html(clean)
    if options.allows_part("markdown"):
        clean = strip_markdown(clean)
    clean = fold_width(clean)  # "１２．５％" -> "12.5%", "℃" -> "°C": what the rules read
    spoken = Spoken(clean.text)
    lexicon = options.lexicon if options.lexicon is not None and options.allows_part("lexicon") else None

    def extra(name: str) -> list[Rule]:
        return lexicon.rules(name, options.voice) if lexicon is not None else []

    if language_name == "auto":
        pos, previous = 0, "english"
        for cut in [*(m.end() for m in _SENTENCE_END.finditer(clean.text)), len(clean.text)]:
            if cut <= pos:
                continue
            piece = clean.text[pos:cut]
            name = language_of(piece) if re.search(r"[^\W\d_]", piece) else previous
            say_plain(spoken, pos, cut, language(name), options.allows, extra(name))
            pos, previous = cut, name
    else:
        lang = language(language_name)
        say_plain(spoken, 0, len(clean), lang, options.allows, extra(lang.name))
    return _to_original(text, clean, spoken.build())


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
