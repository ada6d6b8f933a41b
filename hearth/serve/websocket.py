"""`hearth serve`'s WebSocket `/v1/audio/speech/stream`: text in as it is written, audio out as it is made.

The messages are vLLM-Omni's for Qwen3-TTS (JSON text frames, fields at the top level):

    client: {"type": "session.config", "voice": ..., "language", "seed", "max_new_tokens",
             "response_format": "pcm"|"wav", "instructions", "text_mode",
             "speed": 0.25-4.0}                                              (first)
            {"type": "input.text", "text": "..."}                            (any number)
            {"type": "input.done"}                                           (then session.done)
            {"type": "input.cancel"}                                         (barge-in)
    server: {"type": "audio.start", "sentence_index", "sentence_text", "format", "sample_rate",
             "realtime"?: seconds of audio the server makes per second lately (below 1: buffer)}
            binary frames of the sentence's audio as they are decoded
            {"type": "audio.done", "sentence_index", "sentence_text"}
            {"type": "timestamps", "sentence_index", "offset", "duration", "words": [{word, start_time,
             end_time, source_start, source_end}]}   (word_timestamps: after the sentence's audio)
            {"type": "session.done", "total_sentences"}
            {"type": "session.cancelled", "audio_s_sent", "text_consumed"}
            {"type": "error", "message", "code"?}

Unlike vLLM-Omni, a sentence's audio starts before the sentence is complete: by default a session
uses the interleaved text mode, where the model takes in text as it speaks (`Scheduler.open`), so
`sentence_text` in `audio.start` is the part known then (`audio.done` has all of it). `wav` sends
each sentence as a streamed WAV (its first binary frame starts with the header). `input.cancel`
stops generation within a frame; `session.cancelled` then says how much audio was sent and the
text the model had taken in by the last frame sent (for an agent's history). After `session.done`
or `session.cancelled` the connection can carry another session. Bad input gets an `error` message
and the connection stays open; a connection that closes cancels its session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect

from hearth.errors import InputError
from hearth.options import FIELDS, json_name, json_options
from hearth.runtime.request import RequestChunk
from hearth.runtime.scheduler import MAX_REQUEST_CHARS, Busy, SentenceFailed
from hearth.runtime.scheduler import Request as SpeechRequest
from hearth.runtime.words import SentenceWords
from hearth.serve import jsonbody
from hearth.serve.encoders import encoder

__all__ = ["speech_stream"]

log = logging.getLogger("hearth.serve")

_FORMATS = ("pcm", "wav")
_OWN_FIELDS = {"type", "voice", "response_format", "model", "stream_format"}  # the config's own fields


def _config_fields() -> set[str]:
    """What a session.config may hold: its own fields and the request options (hearth.options.FIELDS,
    by their JSON names)."""
    return _OWN_FIELDS | {f.json for f in FIELDS}


class _Session:
    """One configured session: its scheduler request, and the task that sends its audio."""

    def __init__(self, ws: WebSocket, request: SpeechRequest | _SsmlDocument, fmt: str, sample_rate: int):
        self.ws = ws
        self.request = request
        self.fmt = fmt
        self.sample_rate = sample_rate
        self.samples_sent = 0
        self.frames_sent: dict[int, int] = {}  # sentence -> frames sent
        self.client_cancelled = False
        self.failure: BaseException | None = None  # why the request ended early (the session says so)
        self.task = asyncio.create_task(self._send())

    @property
    def finished(self) -> bool:
        return self.task.done()

    async def _send(self) -> None:
        try:
            await self._send_all()
        except (WebSocketDisconnect, RuntimeError, OSError) as e:  # the client went away mid-send
            log.info("websocket session %d: the client went away (%s)", self.request.id, type(e).__name__)
            self.request.cancel()

    async def _send_all(self) -> None:
        request, ws = self.request, self.ws
        pcm = encoder("pcm", self.sample_rate)
        current: int | None = None
        wav = None
        reported = 0  # sentences whose failure, if any, has been told
        try:
            async for chunk in request.aevents():  # awaited: no thread waits for it
                if isinstance(chunk, SentenceWords):  # times from the start of the session's audio
                    await ws.send_json({"type": "timestamps", **chunk.to_json()})
                    continue
                reported = await self._report_failures(reported, chunk.sentence)
                if chunk.sentence != current:
                    current = chunk.sentence
                    wav = encoder("wav", self.sample_rate) if self.fmt == "wav" else None
                    rate = self.realtime()
                    await ws.send_json({"type": "audio.start", "sentence_index": current,
                                        "sentence_text": request.sentences[current].text, "format": self.fmt,
                                        "sample_rate": self.sample_rate,
                                        **({"realtime": round(rate, 3)} if rate is not None else {})})
                data = (wav or pcm).encode(chunk.samples)
                if data:
                    await ws.send_bytes(data)
                self.samples_sent += len(chunk.samples)
                self.frames_sent[current] = self.frames_sent.get(current, 0) + chunk.frames
                if chunk.sentence_end:
                    await ws.send_json({"type": "audio.done", "sentence_index": current,
                                        "sentence_text": request.sentences[current].text})
                    current = None
        except SentenceFailed as e:  # on_failure="raise": the request ended with a sentence's error
            log.warning("websocket session %d: ended by a failure: %s", request.id, e)
            self.failure = e
        if request.cancelled:
            if self.client_cancelled:
                await ws.send_json({"type": "session.cancelled",
                                    "audio_s_sent": round(self.samples_sent / self.sample_rate, 3),
                                    "text_consumed": self.text_consumed()})
            return
        await self._report_failures(reported, len(request.sentences))
        if self.failure is not None:
            await ws.send_json({"type": "error", "code": "session_failed",
                                "message": f"the session ended early: {self.failure}"})
        await ws.send_json({"type": "session.done", "total_sentences": len(request.sentences)})

    async def _report_failures(self, reported: int, upto: int) -> int:
        for s in self.request.sentences[reported:upto]:
            if s.status == "failed":
                await self.ws.send_json({"type": "error", "code": "sentence_failed",
                                         "message": f"sentence {s.index} ({s.text!r}) failed and was skipped: "
                                                    f"{s.error}"})
        return max(reported, upto)

    def realtime(self) -> float | None:
        """Seconds of audio the server makes per second, lately (below 1: buffer before playing)."""
        scheduler = self.request.scheduler
        return scheduler.rate.realtime if scheduler is not None else None

    def text_consumed(self) -> str:
        """The text the model had taken in by the last frame sent, sentence by sentence."""
        parts = [self.request.text_taken(i, frames) for i, frames in sorted(self.frames_sent.items())]
        return " ".join(p for p in parts if p)


class _SsmlDocument:
    """A session whose text is SSML (text_format "ssml"): its input.text is collected and, at
    input.done, submitted whole (a document is read whole: its parts may change voice and pause);
    from then on it is that request."""

    def __init__(self, scheduler: Any, voice: Any, options: dict[str, Any]):  # noqa: ANN401
        self.scheduler, self.voice, self.options = scheduler, voice, options
        self.text = ""
        self.request: SpeechRequest | None = None
        self.id = 0
        self._given = asyncio.Event()  # set once submitted, or cancelled before

    def push(self, text: str) -> None:
        if self.request is not None:
            raise InputError("the SSML document was submitted at input.done; configure a new session for another")
        if len(self.text) + len(text) > MAX_REQUEST_CHARS:
            raise InputError(f"an SSML document takes at most {MAX_REQUEST_CHARS:,} characters")
        self.text += text

    def end(self) -> None:
        if self.request is None and not self._given.is_set():
            self.request = self.scheduler.submit(self.text, self.voice, **self.options)
            self.id = self.request.id
            self._given.set()

    def cancel(self) -> None:
        if self.request is not None:
            self.request.cancel()
        self._given.set()

    @property
    def finished(self) -> bool:
        return self.request.finished if self.request is not None else self._given.is_set()

    @property
    def cancelled(self) -> bool:
        return self.request.cancelled if self.request is not None else self._given.is_set()

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401 - the submitted request's, once there is one
        if self.request is None:
            return [] if name == "sentences" else None
        return getattr(self.request, name)

    async def aevents(self) -> AsyncIterator[RequestChunk | SentenceWords]:
        await self._given.wait()
        if self.request is not None:
            async for event in self.request.aevents():
                yield event


def _parse(raw: str | None) -> dict[str, Any]:
    if raw is None:
        raise InputError("send JSON text messages ({\"type\": \"session.config\", ...}); binary frames are not taken")
    try:
        message = jsonbody.loads(raw)
    except jsonbody.TooDeep as e:
        raise InputError(str(e)) from None
    except ValueError:
        raise InputError("a message is not valid JSON; send objects such as {\"type\": \"input.text\", "
                         "\"text\": \"...\"}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise InputError("each message must be a JSON object with a \"type\"")
    return message


async def speech_stream(ws: WebSocket, state: Any, api_key_ok: bool) -> None:
    """Serve one WebSocket connection until the client closes it."""
    await ws.accept()
    if not api_key_ok:
        await ws.send_json({"type": "error", "code": "invalid_api_key",
                            "message": "a valid API key is required: send 'Authorization: Bearer <key>' "
                                       "(or ?api_key=<key> from a browser)"})
        await ws.close(code=1008)
        return
    session: _Session | None = None

    async def error(message: str, code: str | None = None) -> None:
        body = {"type": "error", "message": message}
        if code:
            body["code"] = code
        await ws.send_json(body)

    try:
        while True:
            raw = await ws.receive()
            if raw["type"] == "websocket.disconnect":
                return
            try:
                message = _parse(raw.get("text"))
            except InputError as e:
                await error(str(e))
                continue
            try:
                session = await _handle(ws, state, message, session, error)
            except WebSocketDisconnect:
                raise
            except Exception as e:  # noqa: BLE001 - a bug met by this session ends its request, not the connection
                log.exception("websocket: handling a %s message failed", message["type"])
                if session is not None:
                    session.request.cancel()
                await error(f"the server failed handling this message ({type(e).__name__}: {e}); the session's "
                            "request was cancelled: configure a new session", "server_error")
    except WebSocketDisconnect:
        pass
    finally:
        if session is not None:
            if not session.request.finished:
                log.info("websocket session %d: cancelled, the client went away", session.request.id)
            session.request.cancel()  # a no-op once it has ended
            session.task.cancel()


async def _handle(ws: WebSocket, state: Any, message: dict[str, Any], session: _Session | None,
                  error: Any) -> _Session | None:  # noqa: ANN401
    """One message of the client's; the session from now on."""
    kind = message["type"]
    if kind == "session.config":
        if session is not None and not session.finished:
            await error("a session is already open: send input.done (and wait for session.done) or "
                        "input.cancel before configuring another")
            return session
        return await _configure(ws, state, message, error)
    if kind in ("input.text", "input.done", "input.cancel"):
        if session is None or session.finished:
            await error(f"{kind} needs an open session: send session.config first")
            return session
        request = session.request
        if kind == "input.text":
            text = message.get("text")
            if not isinstance(text, str):
                await error("input.text needs \"text\": a string")
                return session
            try:
                request.push(text)
            except InputError as e:
                await error(str(e))
        elif kind == "input.done":
            try:
                request.end()
            except InputError as e:  # an SSML document that cannot be spoken: said, and the session ends
                await error(str(e))
                request.cancel()
        else:
            session.client_cancelled = True
            request.cancel()  # generation stops within a frame; the sender then says so
            log.info("websocket session %d: cancelled by the client", request.id)
    else:
        await error(f"unknown message type {kind!r}; use session.config, input.text, input.done or "
                    "input.cancel")
    return session


async def _configure(ws: WebSocket, state: Any, message: dict[str, Any], error: Any) -> _Session | None:
    if state.error is not None:
        await error(f"the model could not be loaded: {state.error}", "server_error")
        return None
    if state.engine is None or state.scheduler is None:
        await error("the model is still loading; try again in a few seconds", "loading")
        return None
    known = _config_fields()
    unknown = sorted(set(message) - known)
    if unknown:
        await error(f"unknown session.config field(s) {', '.join(unknown)}; known: "
                    f"{', '.join(sorted(known - {'type'}))}")
        return None
    voice = message.get("voice")
    if isinstance(voice, dict):
        voice = voice.get("id")
    design = state.engine.config.model_type == "voice_design"
    if not design and (not isinstance(voice, str) or not voice.strip()):  # the field is required
        await error(f"session.config needs a \"voice\"; choose one of: {', '.join(state.engine.voices)}")
        return None
    fmt = message.get("response_format") or "pcm"
    if fmt not in _FORMATS:
        await error(f"response_format must be 'pcm' or 'wav' on this endpoint, got {fmt!r}")
        return None
    options = json_options(message, {"text_mode": "interleaved"})  # text as it is written, by default
    try:
        voice = state.engine.voice_rules.resolve(voice, design_voice="ignore")
        if options.get("text_format") == "ssml":  # a document is read whole: its text comes, then input.done
            return _Session(ws, _SsmlDocument(state.scheduler, voice, options), fmt, state.engine.sample_rate)
        request = state.scheduler.open(voice, **options)
    except InputError as e:
        await error(str(e) if not e.param else f"{json_name(e.param)}: {e}")
        return None
    except Busy as e:
        await error(f"{e} (retry after about {max(1, round(e.retry_after_s))} s)", "busy")
        return None
    log.info("websocket session %d: %s, %s, seed %s", request.id, request.voice, request.language, request.seed)
    return _Session(ws, request, fmt, state.engine.sample_rate)
