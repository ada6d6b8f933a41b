"""The session of the realtime transcription WebSocket (`realtime`): `session.update` and the beta
`transcription_session.update` checked whole (an update with anything refused changes nothing), and
the session as `session.created` / `session.updated` / `transcription_session.updated` show it
(the openai SDK's `RealtimeTranscriptionSessionCreateRequest`, and the beta `TranscriptionSession`
without its `client_secret`, which an update over the WebSocket does not carry).
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field, replace
from typing import Any

from hearth.errors import InputError
from hearth.listen import ListenOptions, LiveOptions
from hearth.listen.languages import language_named
from hearth.serve.transcription import MAX_PROMPT_CHARS

__all__ = ["INPUT_RATE", "SERVER_VAD", "Refused", "Setup", "beta_setup", "error", "ga_setup", "new_id", "settled"]

INPUT_RATE = 24000  # OpenAI's pcm16 and audio/pcm: 16-bit little-endian mono at 24 kHz, the only rate
_NO_SEMANTIC = ("semantic_vad is not available on this server: use server_vad (Silero VAD: a pause of "
                "silence_duration_ms ends a turn) or turn_detection null; the session is unchanged")
# OpenAI's server_vad defaults: threshold 0.5, prefix_padding_ms 300, silence_duration_ms 500.
SERVER_VAD = LiveOptions(vad=True, vad_threshold=0.5, padding_s=0.3, silence_s=0.5)


def new_id(kind: str) -> str:
    return f"{kind}_{secrets.token_hex(10)}"  # (OpenAI's ids: a kind and 20 or so letters and digits)


async def settled(task: asyncio.Task[None] | None) -> None:
    if task is not None:
        await asyncio.wait([task])  # (not gather: being cancelled here must not cancel `task`)


class Refused(Exception):
    """A client event refused: said in an `error` event, and the connection goes on."""

    def __init__(self, message: str, code: str = "invalid_value", param: str | None = None):
        super().__init__(message)
        self.message, self.code, self.param = message, code, param


def error(message: str, code: str, param: str | None = None, event_id: str | None = None,
          kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "code": code, "message": message, "param": param,
                                       "event_id": event_id}}


@dataclass(frozen=True)
class Setup:
    """The session as the client set it: what `session.updated` shows, and the next item's options."""

    model: str | None = None  # any name: the server has one model
    language: str | None = None  # as the client gave it ("en"), shown so
    prompt: str = ""
    options: ListenOptions = field(default_factory=ListenOptions)
    vad: LiveOptions | None = None  # server_vad's settings (None: turn detection off, the client commits)

    def turn_detection(self) -> dict[str, Any] | None:
        if self.vad is None:
            return None
        return {"type": "server_vad", "threshold": self.vad.vad_threshold,
                "prefix_padding_ms": round(self.vad.padding_s * 1000),
                "silence_duration_ms": round(self.vad.silence_s * 1000)}

    def ga(self, session_id: str) -> dict[str, Any]:
        return {"type": "transcription", "object": "realtime.transcription_session", "id": session_id,
                "audio": {"input": {"format": {"type": "audio/pcm", "rate": INPUT_RATE},
                                    "transcription": self._transcription(),
                                    "turn_detection": self.turn_detection(),
                                    "noise_reduction": None}},
                "include": None}

    def beta(self, session_id: str) -> dict[str, Any]:
        return {"object": "realtime.transcription_session", "id": session_id, "input_audio_format": "pcm16",
                "input_audio_transcription": self._transcription(), "turn_detection": self.turn_detection(),
                "input_audio_noise_reduction": None, "include": None, "modalities": ["text"]}

    def _transcription(self) -> dict[str, Any]:
        return {"model": self.model, "language": self.language, "prompt": self.prompt}


def _object(value: Any, param: str) -> dict[str, Any]:  # noqa: ANN401 - JSON
    if not isinstance(value, dict):
        raise Refused(f"{param} must be an object", param=param)
    return value


def _known(value: dict[str, Any], known: tuple[str, ...], param: str) -> None:
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise Refused(f"unknown parameter(s) {', '.join(f'{param}.{k}' for k in unknown)}; this server takes "
                      f"{', '.join(known)}", "unknown_parameter", f"{param}.{unknown[0]}")


def _turn_detection(value: Any, param: str) -> LiveOptions | None:  # noqa: ANN401 - JSON
    """`turn_detection`: null (off) or server_vad with its settings (OpenAI's defaults where not given)."""
    if value is None:
        return None
    t = _object(value, param)
    kind = t.get("type")
    if kind == "semantic_vad":
        raise Refused(_NO_SEMANTIC, "turn_detection_not_available", param)
    if kind != "server_vad":
        raise Refused(f"{param}.type must be server_vad (semantic_vad is not available here), or the whole "
                      "turn_detection null", param=f"{param}.type")
    _known(t, ("type", "threshold", "prefix_padding_ms", "silence_duration_ms", "create_response",
               "interrupt_response", "idle_timeout_ms"), param)
    for name in ("create_response", "interrupt_response"):  # (taken: a transcription session makes no responses)
        if t.get(name) is not None and not isinstance(t[name], bool):
            raise Refused(f"{param}.{name} must be true or false", param=f"{param}.{name}")
    if t.get("idle_timeout_ms") is not None:
        raise Refused(f"{param}.idle_timeout_ms: a transcription session makes no responses to time out; send "
                      "null", param=f"{param}.idle_timeout_ms")
    threshold = t.get("threshold")
    if threshold is None:
        threshold = SERVER_VAD.vad_threshold
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 < threshold < 1.0:
        raise Refused(f"{param}.threshold must be a number above 0 and below 1", param=f"{param}.threshold")
    ms = {}
    for name, low, default in (("prefix_padding_ms", 0, SERVER_VAD.padding_s),
                               ("silence_duration_ms", 32, SERVER_VAD.silence_s)):
        given = t.get(name)
        if given is None:
            given = round(default * 1000)
        if isinstance(given, bool) or not isinstance(given, int) or not low <= given <= 10_000:
            raise Refused(f"{param}.{name} must be a whole number of milliseconds from {low} to 10000",
                          param=f"{param}.{name}")
        ms[name] = given
    return LiveOptions(vad=True, vad_threshold=float(threshold), padding_s=ms["prefix_padding_ms"] / 1000,
                       silence_s=ms["silence_duration_ms"] / 1000)


def _transcription(value: Any, param: str, setup: Setup, languages: tuple[str, ...]) -> Setup:  # noqa: ANN401
    """`transcription` (or the beta `input_audio_transcription`): model, language, prompt."""
    if value is None:  # ("null to turn it off": this server always transcribes, with the defaults)
        return Setup(vad=setup.vad)
    t = _object(value, param)
    _known(t, ("model", "language", "prompt"), param)
    model, language, prompt = t.get("model", setup.model), t.get("language", setup.language), \
        t.get("prompt", setup.prompt)
    for name, given in (("model", model), ("language", language), ("prompt", prompt)):
        if given is not None and not isinstance(given, str):
            raise Refused(f"{param}.{name} must be a string", param=f"{param}.{name}")
    prompt = prompt or ""
    if len(prompt) > MAX_PROMPT_CHARS or "<|audio_pad|>" in prompt:
        raise Refused(f"{param}.prompt must be at most {MAX_PROMPT_CHARS} characters of text",
                      param=f"{param}.prompt")
    try:
        named = language_named(language, languages)
    except InputError as e:
        raise Refused(str(e), param=f"{param}.language") from None
    return Setup(model, language or None, prompt, ListenOptions(context=prompt, language=named), setup.vad)


def ga_setup(session: Any, setup: Setup, languages: tuple[str, ...]) -> Setup:  # noqa: ANN401 - JSON
    """`session.update`'s session (a transcription session), checked whole: the new setup."""
    s = _object(session, "session")
    if s.get("type") != "transcription":
        raise Refused("this server transcribes only: session.type must be \"transcription\" (connect with "
                      "?intent=transcription)", param="session.type")
    _known(s, ("type", "audio", "include"), "session")
    if s.get("include"):
        raise Refused("include: logprobs are not given by this server", param="session.include")
    audio = _object(s.get("audio") or {}, "session.audio")
    _known(audio, ("input",), "session.audio")
    given = _object(audio.get("input") or {}, "session.audio.input")
    _known(given, ("format", "transcription", "turn_detection", "noise_reduction"), "session.audio.input")
    if given.get("format") is not None:
        fmt = _object(given["format"], "session.audio.input.format")
        if fmt.get("type", "audio/pcm") != "audio/pcm" or fmt.get("rate", INPUT_RATE) != INPUT_RATE:
            raise Refused(f"session.audio.input.format: this server takes audio/pcm at {INPUT_RATE} Hz (16-bit "
                          f"mono), not {fmt.get('type')} at {fmt.get('rate')}", param="session.audio.input.format")
    return _listening(given, "session.audio.input", "transcription", setup, languages)


def beta_setup(session: Any, setup: Setup, languages: tuple[str, ...]) -> Setup:  # noqa: ANN401 - JSON
    """`transcription_session.update`'s session (the beta form), checked whole: the new setup."""
    s = _object(session, "session")
    _known(s, ("input_audio_format", "input_audio_transcription", "turn_detection", "input_audio_noise_reduction",
               "include", "modalities", "client_secret"), "session")
    if s.get("include"):
        raise Refused("include: logprobs are not given by this server", param="session.include")
    if s.get("input_audio_format", "pcm16") not in ("pcm16", None):
        raise Refused(f"session.input_audio_format: this server takes pcm16 (16-bit mono at {INPUT_RATE} Hz), "
                      f"not {s['input_audio_format']!r}", param="session.input_audio_format")
    return _listening(s, "session", "input_audio_transcription", setup, languages)


def _listening(given: dict[str, Any], param: str, key: str, setup: Setup, languages: tuple[str, ...]) -> Setup:
    """The setup with `given`'s turn_detection and transcription (under `key`), where given."""
    if "turn_detection" in given:
        setup = replace(setup, vad=_turn_detection(given["turn_detection"], f"{param}.turn_detection"))
    if key not in given:
        return setup
    return _transcription(given[key], f"{param}.{key}", setup, languages)
