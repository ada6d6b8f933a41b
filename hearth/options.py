"""One request's speech options: checked once where the request enters, then passed whole.

`Engine.speech_options` (which `Engine.stream`, `Engine.open`, `Engine.generate_codes` and the
scheduler's `submit` / `open` call) checks every option against the loaded checkpoint and returns a
frozen `SpeechOptions`; the scheduler keeps it on the request and hands it, whole, to the engine for
each sentence, and the engine to the frame loop. Nothing below the entry checks an option again.
A bad option raises `InputError` naming its parameter (OpenAI's `param`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from typing import Protocol

from hearth.checkpoint.sampling import DEFAULT_BUDGET, FrameBudget, SamplingOptions
from hearth.errors import InputError
from hearth.streaming.chunks import ChunkPlan
from hearth.streaming.stretch import check_speed
from hearth.text.prompt import Speaker, TextMode

__all__ = ["SpeechOptions", "check_seed", "check_speech_options", "speech_for"]


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
    )


def speech_for(engine: Checks, voice: Speaker | object, language: str, speech: SpeechOptions | None,
               keywords: dict[str, object]) -> SpeechOptions:
    """The one place a public call's speech options are made: `speech` (already checked) as given,
    else the voice, language and keywords checked (`check_speech_options`). Both at once is a
    mistake, said so, not a merge."""
    if speech is None:
        return check_speech_options(engine, voice, language, **keywords)  # type: ignore[arg-type]
    if not isinstance(speech, SpeechOptions):
        raise InputError(f"speech must be a SpeechOptions (from engine.speech_options), got {type(speech).__name__}",
                         "speech")
    given = [*(["voice"] if voice is not None else []), *(["language"] if language != "auto" else []), *keywords]
    if given:
        raise InputError(f"speech= holds every option already; leave out {', '.join(given)} (or build the options "
                         "again with engine.speech_options)", given[0])
    return speech
