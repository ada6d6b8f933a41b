"""`POST /v1/audio/speech`'s body, checked, and the voice it asks for: OpenAI's fields plus
vLLM-Omni's names for Qwen3-TTS (task_type, and an inline clone: ref_audio, ref_text)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, replace
from typing import Any

from hearth.engine import Engine
from hearth.errors import InputError
from hearth.options import json_name, json_options
from hearth.serve import jsonbody
from hearth.serve.encoders import FORMATS
from hearth.serve.server_state import bad_request as _bad
from hearth.text.prompt import ClonedVoice, Speaker
from hearth.voices.cloning import read_reference

__all__ = ["MAX_BODY_BYTES", "MAX_CLONE_BODY_BYTES", "MAX_INPUT_CHARS", "SpeechBody", "param_of", "voice_for"]

MAX_INPUT_CHARS = 4096  # OpenAI's limit on `input` (and `instructions`)
MAX_BODY_BYTES = 1 << 20
MAX_CLONE_BODY_BYTES = 14 << 20  # a Base model's: a 10 MB reference recording in base64, inline


@dataclass(frozen=True)
class SpeechBody:
    """`POST /v1/audio/speech`, checked: OpenAI's fields plus vLLM-Omni's names for Qwen3-TTS."""

    input: str
    voice: str
    response_format: str
    stream_format: str
    options: dict[str, Any]  # the request options (hearth.options.FIELDS), as the engine's keywords
    task_type: str | None = None
    ref_audio: str | None = None  # vLLM-Omni's inline clone (Base): a base64 data URL
    ref_text: str | None = None
    x_vector_only: bool | None = None
    raw: dict[str, Any] | None = None  # the body as sent (a route's own fields: /dev/captioned_speech's)
    words_dropped: bool = False  # word_timestamps asked where the answer cannot carry them

    @classmethod
    def parse(cls, raw: bytes) -> SpeechBody:
        try:
            body = jsonbody.loads(raw)
        except jsonbody.TooDeep as e:
            raise _bad(str(e)) from None
        except (ValueError, UnicodeDecodeError):
            raise _bad("the body must be a JSON object: {\"model\": ..., \"input\": ..., \"voice\": ...}") from None
        if not isinstance(body, dict):
            raise _bad("the body must be a JSON object: {\"model\": ..., \"input\": ..., \"voice\": ...}")
        text = body.get("input")
        if not isinstance(text, str) or not text.strip():
            raise _bad("input must be a non-empty string: the text to speak", "input")
        if len(text) > MAX_INPUT_CHARS:
            raise _bad(f"input is {len(text)} characters; the limit is {MAX_INPUT_CHARS}", "input")
        ref_audio, ref_text, x_vector_only = body.get("ref_audio"), body.get("ref_text"), body.get("x_vector_only_mode")
        if ref_audio is not None and (not isinstance(ref_audio, str) or not ref_audio.startswith("data:")):
            raise _bad("ref_audio must be a base64 data URL (data:audio/wav;base64,...); Hearth fetches no URLs: "
                       "send the recording itself, or upload it once (POST /v1/audio/voices)", "ref_audio")
        if ref_text is not None and not isinstance(ref_text, str):
            raise _bad("ref_text must be a string: what ref_audio says", "ref_text")
        if x_vector_only is not None and not isinstance(x_vector_only, bool):
            raise _bad("x_vector_only_mode must be true or false", "x_vector_only_mode")
        if ref_audio is None and (ref_text is not None or x_vector_only is not None):
            raise _bad("ref_text and x_vector_only_mode describe ref_audio, which is missing", "ref_audio")
        task_type = body.get("task_type")
        if task_type is not None and (not isinstance(task_type, str) or task_type not in TASK_KINDS):
            raise _bad(f"task_type must be one of {', '.join(TASK_KINDS)}, got {task_type!r}", "task_type")
        voice = body.get("voice")
        if isinstance(voice, dict):
            voice = voice.get("id")
        if ref_audio is not None and not voice:
            voice = "cloned"
        if not isinstance(voice, str) or not voice.strip():
            raise _bad("voice must be a voice name (see GET /v1/audio/voices) or {\"id\": name}", "voice")
        fmt = given(body, "response_format", "mp3")
        if fmt not in FORMATS:
            raise _bad(f"response_format must be one of {', '.join(FORMATS)}, got {fmt!r}", "response_format")
        stream_format = given(body, "stream_format", "audio")
        if stream_format not in ("audio", "sse"):
            raise _bad(f"stream_format must be 'audio' or 'sse', got {stream_format!r}", "stream_format")
        options = json_options(body)  # checked by the scheduler, as the engine checks every request's
        instructions = options.get("instruct")
        if instructions is not None and (not isinstance(instructions, str) or len(instructions) > MAX_INPUT_CHARS):
            raise _bad(f"instructions must be a string of at most {MAX_INPUT_CHARS} characters", "instructions")
        return cls(text, voice, fmt, stream_format, options, task_type, ref_audio, ref_text, x_vector_only, body)

    def without_words(self) -> SpeechBody:
        """This body with its word timestamps left out (and said to be)."""
        options = {k: v for k, v in self.options.items() if k != "word_timestamps"}
        return replace(self, options=options, words_dropped=True)

    @property
    def instructions(self) -> str | None:
        return self.options.get("instruct") or None


TASK_KINDS = {"CustomVoice": "custom_voice", "Base": "base", "VoiceDesign": "voice_design"}


def given(body: dict[str, Any], key: str, default: Any) -> Any:  # noqa: ANN401 - checked where it is used
    """An optional field: null or "" leave it out (clients send both for "not set"); anything else
    is checked where it is used."""
    value = body.get(key)
    return default if value is None or (isinstance(value, str) and not value) else value


def inline_clone(engine: Engine, body: SpeechBody) -> ClonedVoice:
    """vLLM-Omni's inline clone: `ref_audio` (a data URL), in context with `ref_text`, else (or
    with x_vector_only_mode) from the speaker embedding alone. Runs both encoders: a voice used
    more than once is better uploaded."""
    assert body.ref_audio is not None
    header, _, payload = body.ref_audio.partition(",")
    if ";base64" not in header:
        raise _bad("ref_audio must be base64 data: data:audio/wav;base64,...", "ref_audio")
    try:
        data = base64.b64decode(payload, validate=True)
    except ValueError:
        raise _bad("ref_audio is not valid base64", "ref_audio") from None
    samples, rate = read_reference(data)
    x_vector_only = body.x_vector_only if body.x_vector_only is not None else not (body.ref_text or "").strip()
    return engine.clone_voice(samples, rate, body.ref_text, x_vector_only=x_vector_only)


def voice_for(engine: Engine, body: SpeechBody) -> Speaker:
    """The voice to ask the engine for. A VoiceDesign model has none (the instructions describe the
    voice), yet OpenAI's clients always send one: it is ignored there."""
    kind = engine.config.model_type
    if body.task_type is not None and TASK_KINDS[body.task_type] != kind:
        raise _bad(f"task_type {body.task_type} needs a {body.task_type} checkpoint; this server runs a "
                   f"{engine.config.kind} one", "task_type")
    if body.ref_audio is not None:
        if kind != "base":
            raise _bad(f"ref_audio (cloning a voice) needs a Base checkpoint; this server runs a {engine.config.kind} "
                       f"one, with the voices {', '.join(engine.voices) or 'its instructions describe'}", "ref_audio")
        return inline_clone(engine, body)
    return engine.voice_rules.resolve(body.voice, design_voice="ignore")  # (VoiceDesign: its instruction checked
    # with the other options, `VoiceRules.check_instruct`)


def param_of(e: InputError) -> str:
    """The request field an engine error is about, by its JSON name (the text when none is named)."""
    return "input" if not e.param or e.param == "text" else json_name(e.param) or e.param
