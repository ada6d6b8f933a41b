"""The SSML subset Hearth speaks, read into parts: a stretch of the document spoken with one voice,
language and rate, the silence before it, and its marks.

Supported (SSML 1.1 names):
- `<speak>` (the root; `xml:lang` its language), `<p>` and `<s>` (a paragraph or sentence: said as
  a sentence of its own), `<break time="500ms|2s" strength="none|x-weak|weak|medium|strong|x-strong">`
  (a silence of that length: 0, 0.1, 0.25, 0.5, 0.75 and 1.0 s by strength; at most 10 s),
- `<say-as interpret-as="...">`: characters (spell-out), cardinal (number), ordinal, digits, date
  (format mdy, dmy, ymd, md, dm, ym, my, y, m, d, by its order), time, telephone, currency (an
  amount with its symbol or ISO code),
- `<sub alias="...">` (the alias is said), `<lang xml:lang="de-DE">` (the language of a span),
  `<voice name="ryan">` (another voice for a span), `<prosody rate="slow|120%|1.2">` (the speed;
  pitch and volume are not supported and are refused), `<mark name="...">` (kept, with its place in
  the spoken text, for timestamps),
- `<emphasis>` and `<phoneme>`: their text is spoken as it is (Qwen3-TTS takes no emphasis or
  phonemes); `<audio>`: its fallback text is spoken (Hearth plays no files).

Anything else, and malformed markup, is refused with an error that names the line and column.
"""

from __future__ import annotations

import re
import xml.parsers.expat
from dataclasses import dataclass, field

from hearth.text.normalize.language import LANGUAGES, language_name
from hearth.text.normalize.mapped import Mapped

__all__ = ["BREAK_STRENGTHS", "MAX_BREAK_S", "SayAs", "SsmlError", "SsmlPart", "parse_ssml"]

MAX_BREAK_S = 10.0
BREAK_STRENGTHS = {"none": 0.0, "x-weak": 0.1, "weak": 0.25, "medium": 0.5, "strong": 0.75, "x-strong": 1.0}
_RATES = {"x-slow": 0.5, "slow": 0.75, "medium": 1.0, "default": 1.0, "fast": 1.25, "x-fast": 1.5}
_INTERPRET = {"characters", "spell-out", "cardinal", "number", "ordinal", "digits", "date", "time", "telephone",
              "currency"}
_SPOKEN_AS_IS = {"emphasis", "phoneme", "audio", "desc"}
_KNOWN = {"speak", "p", "s", "break", "say-as", "sub", "lang", "voice", "prosody", "mark"} | _SPOKEN_AS_IS


class SsmlError(ValueError):
    """Markup Hearth cannot speak: the message names the line and column, and what to do."""


@dataclass(frozen=True)
class SayAs:
    """[start, end) of a part's text is to be read as `interpret_as` (with `format`)."""

    start: int
    end: int
    interpret_as: str
    format: str | None = None


@dataclass
class SsmlPart:
    """A stretch spoken one way: its text (with each character's place in the document), the voice,
    language and speed it is spoken with (None: the request's), the silence before it, its say-as
    spans and its marks (name, offset into `text`)."""

    text: Mapped
    voice: str | None = None
    language: str | None = None
    speed: float | None = None
    pause_before_s: float = 0.0
    say_as: list[SayAs] = field(default_factory=list)
    marks: list[tuple[str, int]] = field(default_factory=list)


@dataclass(frozen=True)
class _Context:
    voice: str | None = None
    language: str | None = None
    speed: float | None = None
    say_as: tuple[str, str | None] | None = None
    alias: str | None = None


def _where(parser: xml.parsers.expat.XMLParserType) -> str:
    return f"line {parser.CurrentLineNumber}, column {parser.CurrentColumnNumber + 1}"


def _language(value: str, where: str) -> str:
    name = language_name(value)
    if name not in LANGUAGES:
        codes = ", ".join(sorted(code for code, _ in LANGUAGES.values()))
        raise SsmlError(f"xml:lang {value!r} at {where}: Hearth speaks {codes}")
    return name


def _seconds(value: str, where: str) -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s)\s*", value)
    if not m:
        raise SsmlError(f"break time {value!r} at {where}: give it as 500ms or 1.5s")
    seconds = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
    if seconds > MAX_BREAK_S:
        raise SsmlError(f"break time {value!r} at {where}: at most {MAX_BREAK_S:g} s")
    return seconds


def _rate(value: str, where: str) -> float:
    value = value.strip()
    if value in _RATES:
        return _RATES[value]
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(%?)", value)
    if not m:
        raise SsmlError(f"prosody rate {value!r} at {where}: x-slow, slow, medium, fast, x-fast, a percentage "
                        "(120%) or a factor (1.2)")
    rate = float(m.group(1)) / (100 if m.group(2) else 1)
    if not 0.25 <= rate <= 4.0:
        raise SsmlError(f"prosody rate {value!r} at {where}: from 25% to 400%")
    return rate


class _Reader:
    """expat's events -> parts."""

    def __init__(self, source: str):
        self.source = source
        self.parser = xml.parsers.expat.ParserCreate()
        self.parser.StartElementHandler = self.start
        self.parser.EndElementHandler = self.end
        self.parser.CharacterDataHandler = self.text
        self.parser.ordered_attributes = False
        self.stack: list[tuple[str, _Context]] = []
        self.parts: list[SsmlPart] = []
        self.pending_pause = 0.0
        self.pending_marks: list[str] = []
        # Character offsets of the source by the parser's byte index (expat counts UTF-8 bytes).
        encoded = source.encode("utf-8")
        self._offsets = {}
        b = 0
        for i, ch in enumerate(source):
            self._offsets[b] = i
            b += len(ch.encode("utf-8"))
        self._offsets[len(encoded)] = len(source)

    def offset(self) -> int:
        return self._offsets.get(self.parser.CurrentByteIndex, len(self.source))

    @property
    def context(self) -> _Context:
        return self.stack[-1][1] if self.stack else _Context()

    def start(self, name: str, attrs: dict[str, str]) -> None:
        where = _where(self.parser)
        if not self.stack and name != "speak":
            raise SsmlError(f"the document must be one <speak> element; it starts with <{name}> at {where}")
        if name not in _KNOWN:
            raise SsmlError(f"<{name}> at {where} is not in the SSML Hearth speaks: speak, p, s, break, say-as, sub, "
                            "lang, voice, prosody, mark (and emphasis, phoneme, audio, spoken as plain text)")
        ctx = self.context
        lang = attrs.get("xml:lang")
        if lang is not None and name in ("speak", "lang", "p", "s", "voice"):
            ctx = _Context(ctx.voice, _language(lang, where), ctx.speed, ctx.say_as, ctx.alias)
        elif name == "lang":
            raise SsmlError(f"<lang> at {where} needs xml:lang")
        if name == "voice":
            voice = attrs.get("name")
            if not voice:
                raise SsmlError(f"<voice> at {where} needs a name (a voice of GET /v1/audio/voices)")
            ctx = _Context(voice, ctx.language, ctx.speed, ctx.say_as, ctx.alias)
        elif name == "prosody":
            unsupported = sorted(set(attrs) - {"rate"})
            if unsupported:
                raise SsmlError(f"<prosody {' '.join(unsupported)}> at {where}: only rate is supported")
            ctx = _Context(ctx.voice, ctx.language, _rate(attrs["rate"], where) if "rate" in attrs else ctx.speed,
                           ctx.say_as, ctx.alias)
        elif name == "say-as":
            kind = attrs.get("interpret-as", "")
            if kind not in _INTERPRET:
                raise SsmlError(f"say-as interpret-as={kind!r} at {where}: one of {', '.join(sorted(_INTERPRET))}")
            ctx = _Context(ctx.voice, ctx.language, ctx.speed, (kind, attrs.get("format")), ctx.alias)
        elif name == "sub":
            if "alias" not in attrs:
                raise SsmlError(f"<sub> at {where} needs alias=\"what to say\"")
            alias, at = attrs["alias"], self.offset()
            self._append(Mapped(alias, [at] * len(alias), [at] * len(alias)), ctx)  # said in place of its text
            ctx = _Context(ctx.voice, ctx.language, ctx.speed, ctx.say_as, alias)
        elif name == "break":
            if "time" in attrs:
                self.pending_pause += _seconds(attrs["time"], where)
            else:
                strength = attrs.get("strength", "medium")
                if strength not in BREAK_STRENGTHS:
                    raise SsmlError(f"break strength {strength!r} at {where}: one of {', '.join(BREAK_STRENGTHS)}")
                self.pending_pause += BREAK_STRENGTHS[strength]
        elif name == "mark":
            if not attrs.get("name"):
                raise SsmlError(f"<mark> at {where} needs a name")
            self.pending_marks.append(attrs["name"])
        if name in ("p", "s"):
            self._sentence_end()  # what stood before it ends there
        self.stack.append((name, ctx))

    def end(self, name: str) -> None:
        self.stack.pop()
        if name in ("p", "s"):
            self._sentence_end()

    def _sentence_end(self) -> None:
        """The end of <p> or <s>: a sentence ends here (a full stop where there is no end mark)."""
        if self.parts and self.parts[-1].text.text.strip():
            part = self.parts[-1]
            stripped = part.text.text.rstrip()
            at = self.offset()
            add = ("" if stripped[-1] in ".!?;。！？；…" else ".") + ("\n" if self.stack and self.stack[-1][0] != "s"
                                                                      else " ")
            part.text = Mapped(part.text.text + add, part.text.starts + [at] * len(add),
                               part.text.ends + [at] * len(add))

    def text(self, data: str) -> None:
        ctx = self.context
        at = self.offset()
        if ctx.alias is not None:
            return  # a <sub>'s own text: its alias was said instead
        raw = self.source[at:at + len(data)]
        if raw == data and not raw.startswith("&"):  # as written, each character its own (a bare & is a reference)
            chunk = Mapped(data, list(range(at, at + len(data))), list(range(at + 1, at + len(data) + 1)))
        else:  # an entity or a character reference: the characters stand for the whole reference
            end = self.source.find(";", at) + 1 or at + 1
            chunk = Mapped(data, [at] * len(data), [end] * len(data))
        self._append(chunk, ctx)

    def _append(self, chunk: Mapped, ctx: _Context) -> None:
        last = self.parts[-1] if self.parts else None
        same = last is not None and (last.voice, last.language, last.speed) == (ctx.voice, ctx.language, ctx.speed)
        if not same or self.pending_pause > 0 and last is not None and last.text.text.strip():
            last = SsmlPart(Mapped("", [], []), ctx.voice, ctx.language, ctx.speed, self.pending_pause)
            self.parts.append(last)
            self.pending_pause = 0.0
        assert last is not None
        base = len(last.text.text)
        last.marks += [(name, base) for name in self.pending_marks]
        self.pending_marks = []
        if ctx.say_as is not None:
            kind, fmt = ctx.say_as
            if last.say_as and last.say_as[-1].end == base and last.say_as[-1].interpret_as == kind:
                last.say_as[-1] = SayAs(last.say_as[-1].start, base + len(chunk.text), kind, fmt)
            else:
                last.say_as.append(SayAs(base, base + len(chunk.text), kind, fmt))
        last.text = Mapped(last.text.text + chunk.text, last.text.starts + chunk.starts, last.text.ends + chunk.ends)


def parse_ssml(document: str) -> list[SsmlPart]:
    """The parts of an SSML document. Raises SsmlError for markup Hearth cannot speak."""
    if not document.lstrip().startswith("<"):
        raise SsmlError("SSML is one <speak> element and this text starts with no markup: wrap it in "
                        "<speak>...</speak>, or send it as plain text (text_format plain)")
    reader = _Reader(document)
    try:
        reader.parser.Parse(document.encode("utf-8"), True)
    except xml.parsers.expat.ExpatError as e:
        raise SsmlError(f"the SSML is not well-formed: {xml.parsers.expat.ErrorString(e.code)} at line {e.lineno}, "
                        f"column {e.offset + 1}") from None
    if reader.pending_marks and reader.parts:  # marks after the last words: at the end of what was said
        last = reader.parts[-1]
        last.marks += [(name, len(last.text.text)) for name in reader.pending_marks]
    parts: list[SsmlPart] = []
    carried = 0.0  # the silence before a part with nothing to say goes before the next one
    for part in reader.parts:
        if part.text.text.strip() or part.marks:
            part.pause_before_s += carried
            parts.append(part)
            carried = 0.0
        else:
            carried += part.pause_before_s
    carried += reader.pending_pause
    if carried and parts:  # a break at the very end: silence after the last part
        parts.append(SsmlPart(Mapped("", [], []), pause_before_s=min(carried, MAX_BREAK_S)))
    if not any(p.text.text.strip() for p in parts):
        raise SsmlError("the SSML has nothing to speak")
    return parts
