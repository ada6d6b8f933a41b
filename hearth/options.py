"""One request's speech options: checked once where the request enters, then passed whole.

`Engine.speech_options` (which `Engine.stream`, `Engine.open`, `Engine.generate_codes` and the
scheduler's `submit` / `open` call) checks every option against the loaded checkpoint and returns a
frozen `SpeechOptions`; the scheduler keeps it on the request and hands it, whole, to the engine for
each sentence, and the engine to the frame loop. Nothing below the entry checks an option again.
A bad option raises `InputError` naming its parameter (OpenAI's `param`).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from hearth.checkpoint.sampling import DEFAULT_BUDGET, FrameBudget, SamplingOptions
from hearth.errors import InputError
from hearth.streaming.chunks import ChunkPlan
from hearth.streaming.stretch import MAX_SPEED, MIN_SPEED, check_speed
from hearth.text.normalize import PARTS, NormalizeOptions
from hearth.text.prompt import Speaker, TextMode

__all__ = ["FIELDS", "TEXT_FORMATS", "Field", "SpeechOptions", "check_normalize", "check_seed", "check_speech_options",
           "json_options", "speech_for"]

TEXT_FORMATS = ("text", "ssml")
_AS_WRITTEN = NormalizeOptions(enabled=False)


@dataclass(frozen=True)
class SpeechOptions:
    """Everything about how one request is spoken, already checked.

    voice: a built-in voice's canonical name, a cloned voice, or None (VoiceDesign). seed: the first
    sentence's sampling seed (sentence i uses seed + i); None when nothing is sampled (greedy).
    chunks: how frames are grouped into audio chunks. speed: the speaking rate (1.0 untouched),
    applied as chunks are handed to the consumer."""

    voice: Speaker
    language: str
    text_mode: TextMode
    sampling: SamplingOptions
    chunks: ChunkPlan
    instruct: str | None = None
    seed: int | None = None
    budget: FrameBudget | None = DEFAULT_BUDGET
    speed: float = 1.0
    normalize: NormalizeOptions = NormalizeOptions()
    text_format: str = "text"
    word_timestamps: bool = False  # each sentence aligned after its audio (a scheduler with an aligner)

    def as_spoken(self) -> SpeechOptions:
        """These options for text already made speakable (normalized, SSML read): as it stands."""
        if not self.normalize.enabled and self.text_format == "text":
            return self
        return replace(self, normalize=_AS_WRITTEN, text_format="text")

    def sentence(self, index: int) -> SpeechOptions:
        """The options of sentence `index` of the request: the same, sampled with seed + index."""
        if self.seed is None or index == 0:
            return self
        return replace(self, seed=(self.seed + index) % 2**64)


def check_seed(seed: object) -> int | None:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64):
        raise InputError(f"seed must be a whole number from 0 to 2**64 - 1, got {seed!r}", "seed")
    return seed  # type: ignore[return-value]


def _whole(name: str, value: object) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InputError(f"{name} must be a whole number of at least 1, got {value!r}", name)
    return value  # type: ignore[return-value]


class Checks(Protocol):
    """What the options are checked against: the loaded checkpoint's rules (an `Engine`)."""

    @property
    def default_chunk_frames(self) -> int: ...
    @property
    def default_first_chunk(self) -> int: ...
    @property
    def overlap(self) -> bool: ...

    def sampling(self, greedy: bool = False, **overrides: object) -> SamplingOptions: ...
    def check_voice(self, voice: Speaker) -> Speaker: ...
    def check_language(self, language: str) -> str: ...
    def check_text_mode(self, mode: str | None) -> TextMode: ...
    def check_instruct(self, instruct: str | None) -> str | None: ...

    @property
    def lexicon(self) -> Any: ...  # noqa: ANN401 - the server's pronunciation lexicon, or None


def check_normalize(value: object, lexicon: Any = None, voice: object = None) -> NormalizeOptions:  # noqa: ANN401
    """A request's `normalize`: true or false, the parts to leave as they are (a list of names of
    `hearth.text.normalize.PARTS`, or {part: false}), or NormalizeOptions as they are."""
    if isinstance(value, NormalizeOptions):
        return value
    name = voice if isinstance(voice, str) else None
    if value is None or value is True:
        return NormalizeOptions(lexicon=lexicon, voice=name)
    if value is False:
        return NormalizeOptions(enabled=False)
    skip: list[object]
    if isinstance(value, Mapping):
        bad = [k for k, v in value.items() if not isinstance(v, bool)]
        if bad:
            raise InputError(f"normalize {{{bad[0]!r}: ...}} must be true or false", "normalize")
        skip = [k for k, v in value.items() if v is False]
        unknown = [k for k in value if k not in PARTS]
        skip += unknown
    elif isinstance(value, (list, tuple)):
        skip = list(value)
    else:
        raise InputError(f"normalize must be true, false, a list of parts to leave as they are, or {{part: false}}; "
                         f"got {value!r}", "normalize")
    unknown = [str(k) for k in skip if not isinstance(k, str) or k not in PARTS]  # ({} is no part: 400, not 500)
    if unknown:
        raise InputError(f"unknown normalize part(s) {', '.join(unknown)}; the parts are {', '.join(PARTS)}",
                         "normalize")
    return NormalizeOptions(skip=frozenset(str(k) for k in skip), lexicon=lexicon, voice=name)


def check_word_timestamps(value: object) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InputError(f"word_timestamps must be true or false, got {value!r}", "word_timestamps")
    return value


def check_text_format(value: object) -> str:
    if value is None:
        return "text"
    if value not in TEXT_FORMATS:
        raise InputError(f"text_format must be 'text' or 'ssml', got {value!r}", "text_format")
    return str(value)


def check_speech_options(
    engine: Checks,
    voice: Speaker,
    language: str = "auto",
    *,
    instruct: str | None = None,
    text_mode: str | None = None,
    seed: int | None = None,
    greedy: bool = False,
    max_new_tokens: int | None = None,
    options: SamplingOptions | None = None,
    budget: FrameBudget | None = DEFAULT_BUDGET,
    chunk_frames: int | None = None,
    first_chunk_frames: int | None = None,
    paced: bool = False,
    speed: float = 1.0,
    normalize: object = None,
    text_format: str | None = None,
    word_timestamps: object = False,
) -> SpeechOptions:
    """Every option of one request checked against `engine`'s checkpoint (see the module). Without a
    seed, one is drawn here when anything is sampled, so `seed` always says how to hear the same
    again."""
    max_new_tokens = _whole("max_new_tokens", max_new_tokens)
    chunk_frames = _whole("chunk_frames", chunk_frames)
    first_chunk_frames = _whole("first_chunk_frames", first_chunk_frames)
    if options is None:
        options = engine.sampling(greedy=greedy, max_new_tokens=max_new_tokens)
    try:
        options.validate()
    except ValueError as e:
        raise InputError(str(e)) from e
    seed = check_seed(seed)
    if not (options.do_sample or options.sub_do_sample):
        seed = None
    elif seed is None:
        seed = secrets.randbits(63)
    try:
        speed = check_speed(speed)
    except ValueError as e:
        raise InputError(str(e), "speed") from None
    try:
        chunks = ChunkPlan(engine.default_chunk_frames if chunk_frames is None else chunk_frames,
                           engine.default_first_chunk if first_chunk_frames is None else first_chunk_frames,
                           paced=paced, hold_all=not engine.overlap)
    except (ValueError, TypeError) as e:
        raise InputError(str(e), "chunk_frames") from e
    return SpeechOptions(
        voice=engine.check_voice(voice),
        language=engine.check_language(language),
        text_mode=engine.check_text_mode(text_mode),
        sampling=options,
        chunks=chunks,
        instruct=engine.check_instruct(instruct),
        seed=seed,
        budget=budget,
        speed=speed,
        normalize=check_normalize(normalize, engine.lexicon, voice),
        text_format=check_text_format(text_format),
        word_timestamps=check_word_timestamps(word_timestamps),
    )


def speech_for(engine: Checks, voice: Speaker | object, language: str, speech: SpeechOptions | None,
               keywords: dict[str, object], aligned: bool = False) -> SpeechOptions:
    """The one place a public call's speech options are made: `speech` (already checked) as given,
    else the voice, language and keywords checked (`check_speech_options`). Both at once is a
    mistake, said so, not a merge. Word timestamps are made by a scheduler with an aligner
    (`aligned`); an engine's own calls refuse them."""
    if speech is None:
        checked = check_speech_options(engine, voice, language, **keywords)  # type: ignore[arg-type]
        return _timed_only_if(aligned, checked)
    if not isinstance(speech, SpeechOptions):
        raise InputError(f"speech must be a SpeechOptions (from engine.speech_options), got {type(speech).__name__}",
                         "speech")
    given = [*(["voice"] if voice is not None else []), *(["language"] if language != "auto" else []), *keywords]
    if given:
        raise InputError(f"speech= holds every option already; leave out {', '.join(given)} (or build the options "
                         "again with engine.speech_options)", given[0])
    return _timed_only_if(aligned, speech)


def _timed_only_if(aligned: bool, speech: SpeechOptions) -> SpeechOptions:
    if speech.word_timestamps and not aligned:
        raise InputError("word timestamps are made by a scheduler with a Qwen3-ForcedAligner: "
                         "hearth.Scheduler(engine, aligner=Aligner.load(...)).submit(text, word_timestamps=True); "
                         "an engine's own stream gives audio only", "word_timestamps")
    return speech


# -- Each request option, declared once ------------------------------------------------------------
#
# Every surface derives its handling of a request option from this table: the HTTP body and the
# WebSocket's session.config read `json` (null, and "" for text fields, mean "not given"), the
# OpenAPI document shows `schema` under that name, `hearth say` adds `flags` (in its `group` of
# flags; `hearth codes` all but the output group's), the resident commands (`hearth speak`, `chat`,
# `wyoming`) add them too where `resident`: what their command line gives is every request's (their
# player, agent or Wyoming server hands it whole to the scheduler). The engine checks the value
# (`check_speech_options`, under `keyword`). A new option is one row here, its check and its field of
# SpeechOptions above, and its use where it acts.

@dataclass(frozen=True)
class Flag:
    """One command-line flag of a field: argparse's name and keywords, and how its value becomes the
    field's (`value(args.dest)`; identity by default)."""

    name: str
    kwargs: Mapping[str, Any]
    value: Any = None  # noqa: ANN401 - a callable, or None


@dataclass(frozen=True)
class Field:
    keyword: str  # check_speech_options' keyword
    json: str  # its name in a JSON body or config (OpenAI's where it has one)
    schema: Mapping[str, Any]
    help: str
    flags: tuple[Flag, ...] = ()
    resident: bool = False  # `hearth speak`, `chat` and `wyoming` take it as every request's
    text: bool = False  # a string field: "" is taken as not given
    group: str = "generation"  # where `hearth say --help` lists its flags: voice, generation, text or output


def _given(value: object) -> bool:
    return value is not None


def _parts_list(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


FIELDS: tuple[Field, ...] = (
    Field("language", "language", {"type": "string", "default": "auto"}, "the language, or auto (each sentence by "
          "its script)", (Flag("--language", {"default": "auto", "help": "language, or auto (default)"}),), text=True,
          group="voice"),
    Field("instruct", "instructions", {"type": "string", "maxLength": 4096},
          "a style instruction (1.7B), or the voice itself (VoiceDesign, where it is required)",
          (Flag("--instruct", {"default": None, "help": "style instruction (1.7B), or the voice a VoiceDesign "
                                                        "checkpoint speaks"}),),
          resident=True, text=True, group="voice"),
    Field("seed", "seed", {"type": "integer", "minimum": 0, "maximum": 2**64 - 1},
          "sentence i is sampled with seed + i (default: random, said back)",
          (Flag("--seed", {"default": None, "metavar": "N", "type": "seed",
                           "help": "seed of the sampling generator: sentence i with seed + i (default: random)"}),),
          resident=True),
    Field("max_new_tokens", "max_new_tokens", {"type": "integer", "minimum": 1},
          "an upper bound on frames per sentence",
          (Flag("--max-new-tokens", {"default": None, "metavar": "N", "type": "count",
                                     "help": "upper bound on generated tokens a sentence (frames + 1; default: "
                                             "generation_config.json's)"}),), resident=True),
    Field("text_mode", "text_mode", {"enum": ["whole", "interleaved", "stream"]},
          "the text in the prompt (whole), or a token a frame (interleaved)",
          (Flag("--text-mode", {"choices": ("whole", "interleaved", "stream"), "default": None,
                                "help": "text in the prompt, or a token per frame (default: whole; interleaved "
                                        "when cloned)"}),), text=True),
    Field("speed", "speed", {"type": "number", "minimum": MIN_SPEED, "maximum": MAX_SPEED, "default": 1.0},
          "the speaking rate; the pitch is kept",
          (Flag("--speed", {"default": 1.0, "type": "speed",
                            "help": "speaking rate, 0.25 to 4.0, the pitch kept (default 1)"}),),
          resident=True, group="output"),
    Field("normalize", "normalize",
          {"anyOf": [{"type": "boolean"}, {"type": "array", "items": {"enum": list(PARTS)}},
                     {"type": "object", "additionalProperties": {"type": "boolean"},
                      "propertyNames": {"enum": list(PARTS)}}], "default": True},
          "say what the text means (numbers, dates, units, markdown...: docs/text.md): true (default), false, "
          "or the parts to leave as they are", (
              Flag("--no-normalize", {"action": "store_const", "const": False, "dest": "normalize",
                                      "help": "speak the text exactly as written (no numbers, dates or markdown "
                                              "read: docs/text.md)"}),
              Flag("--normalize-skip", {"default": None, "metavar": "PARTS", "dest": "normalize_skip",
                                        "help": f"parts left as written, comma-separated: {', '.join(PARTS)}"},
                   _parts_list),
          ), resident=True, group="text"),
    Field("text_format", "text_format", {"enum": list(TEXT_FORMATS), "default": "text"},
          "ssml: the text is SSML (the subset in docs/text.md)",
          (Flag("--ssml", {"action": "store_const", "const": "ssml", "dest": "text_format",
                           "help": "the text is SSML (breaks, say-as, sub, lang, voice, prosody rate, marks: "
                                   "docs/text.md)"}),), text=True, group="text"),
    Field("word_timestamps", "word_timestamps", {"type": "boolean", "default": False},
          "each sentence's words with their times and their place in the text, after its audio (needs a server "
          "started with --aligner: docs/listen.md)",
          (Flag("--captions", {"default": None, "metavar": "FILE", "dest": "captions",
                               "help": "write word timestamps of the speech to FILE: .vtt, .srt or .json (needs "
                                       "--aligner)"}, _given),), group="output"),
)


def json_options(body: Mapping[str, Any], defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The engine keywords a JSON body or config gives (absent, null and, for text, "" left out, or
    taken from `defaults`); a whole number written with a fraction (7.0) is taken as one. The values
    are checked by the engine (`check_speech_options`), whose errors name the field (`param_for`)."""
    out = dict(defaults or {})
    for f in FIELDS:
        value = body.get(f.json)
        if value is None or (f.text and isinstance(value, str) and not value):
            continue
        if isinstance(value, float) and value.is_integer() and f.schema.get("type") == "integer":
            value = int(value)
        out[f.keyword] = value
    return out


def json_name(param: str | None) -> str | None:
    """The JSON field of an engine keyword (an InputError's `param`): OpenAI's `instructions` for
    `instruct`, the others as they are."""
    by_keyword = {f.keyword: f.json for f in FIELDS}
    return by_keyword.get(param, param) if param else param
