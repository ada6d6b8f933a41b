"""The session of the realtime transcription WebSocket (`realtime`): `session.update` and the beta
`transcription_session.update` checked whole (an update with anything refused changes nothing), and
the session as `session.created` / `session.updated` / `transcription_session.updated` show it
(the openai SDK's `RealtimeTranscriptionSessionCreateRequest`, and the beta `TranscriptionSession`
without its `client_secret`, which an update over the WebSocket does not carry).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hearth.errors import InputError
from hearth.listen import ListenOptions
from hearth.listen.languages import language_named
from hearth.serve.transcription import MAX_PROMPT_CHARS

__all__ = ["INPUT_RATE", "Refused", "Setup", "beta_setup", "error", "ga_setup"]

INPUT_RATE = 24000  # OpenAI's pcm16 and audio/pcm: 16-bit little-endian mono at 24 kHz, the only rate
_NO_VAD = ("turn detection ({}) is not available on this server yet: send turn_detection null and commit "
           "each utterance yourself (input_audio_buffer.commit); the session is unchanged")


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

    def ga(self, session_id: str) -> dict[str, Any]:
        return {"type": "transcription", "object": "realtime.transcription_session", "id": session_id,
                "audio": {"input": {"format": {"type": "audio/pcm", "rate": INPUT_RATE},
                                    "transcription": self._transcription(), "turn_detection": None,
                                    "noise_reduction": None}},
                "include": None}

    def beta(self, session_id: str) -> dict[str, Any]:
        return {"object": "realtime.transcription_session", "id": session_id, "input_audio_format": "pcm16",
                "input_audio_transcription": self._transcription(), "turn_detection": None,
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


def _turn_detection(value: Any, param: str) -> None:  # noqa: ANN401 - JSON
    if value is None:
        return
    kind = _object(value, param).get("type")
    if kind in ("server_vad", "semantic_vad"):
        raise Refused(_NO_VAD.format(kind), "turn_detection_not_available", param)
    raise Refused(f"{param}.type must be server_vad or semantic_vad (neither is available yet) or the whole "
                  "turn_detection null", param=f"{param}.type")


def _transcription(value: Any, param: str, setup: Setup, languages: tuple[str, ...]) -> Setup:  # noqa: ANN401
    """`transcription` (or the beta `input_audio_transcription`): model, language, prompt."""
    if value is None:  # ("null to turn it off": this server always transcribes, with the defaults)
        return Setup()
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
    return Setup(model, language or None, prompt, ListenOptions(context=prompt, language=named))


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
    _turn_detection(given.get("turn_detection"), "session.audio.input.turn_detection")
    if "transcription" not in given:
        return setup
    return _transcription(given["transcription"], "session.audio.input.transcription", setup, languages)


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
    _turn_detection(s.get("turn_detection"), "session.turn_detection")
    if "input_audio_transcription" not in s:
        return setup
    return _transcription(s["input_audio_transcription"], "session.input_audio_transcription", setup, languages)
