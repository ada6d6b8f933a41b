"""`hearth serve`'s HTTP API: OpenAI's `POST /v1/audio/speech`, streamed, over the shared scheduler.

Translation only: a request body becomes a scheduler request, its chunks become bytes of the
asked-for format as they are decoded. Nothing here generates audio, and nothing blocking runs on
the event loop: taking a chunk from the scheduler and encoding it run on a thread pool.

Errors use OpenAI's envelope `{"error": {"message", "type", "param", "code"}}`: 400 bad input (the
message says what is allowed), 401 a missing or wrong key, 404/405 unknown routes, 413 a body over
1 MiB, 503 with `Retry-After` while the model loads or when the scheduler is full, 500 when a
request's first sentence fails (later failures end its stream early). A client that disconnects has
its generation stopped within a frame.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, WebSocket
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Route

from hearth.engine import Engine
from hearth.errors import InputError
from hearth.frames import FRAME_S
from hearth.runtime.scheduler import Busy, RequestChunk, Scheduler, SentenceFailed
from hearth.runtime.scheduler import Request as SpeechRequest
from hearth.runtime.words import SentenceWords
from hearth.serve.captioned import captioned_body, captioned_response
from hearth.serve.encoders import encoder
from hearth.serve.openapi import allowed, document
from hearth.serve.realtime import realtime_transcription
from hearth.serve.server_state import ApiError, ServerState, bad_request, state_of
from hearth.serve.speech_body import (
    MAX_BODY_BYTES,
    MAX_CLONE_BODY_BYTES,
    MAX_INPUT_CHARS,
    SpeechBody,
    param_of,
    voice_for,
)
from hearth.serve.transcription import transcriptions
from hearth.serve.voice_routes import MAX_UPLOAD_BYTES, add_voice_routes
from hearth.serve.websocket import speech_stream

__all__ = ["MAX_BODY_BYTES", "MAX_INPUT_CHARS", "ServerState", "create_app"]

log = logging.getLogger("hearth.serve")

_PAGE = Path(__file__).parent / "static" / "index.html"
_EXPOSED = ["X-Hearth-Request", "X-Hearth-Seed", "X-Hearth-Warning", "X-Request-Id", "X-Hearth-Realtime"]


def create_app(state: ServerState, *, api_key: str | None = None, cors_origins: list[str] | None = None) -> FastAPI:
    """The OpenAI-compatible app over `state`: every route below, the voice routes
    (`voice_routes`), the WebSockets (`websocket`, `realtime`), and errors in OpenAI's envelope."""
    app = FastAPI(title="Hearth", docs_url=None, redoc_url=None, openapi_url=None)
    state.api_key = api_key
    app.state.hearth = state
    if cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=cors_origins, allow_methods=["*"], allow_headers=["*"],
                           expose_headers=_EXPOSED)
    app.exception_handler(ApiError)(_api_error)
    app.exception_handler(StarletteHTTPException)(_http_error)
    app.exception_handler(ClientDisconnect)(_client_left)
    app.exception_handler(Exception)(_internal_error)
    app.add_api_route("/", _index, methods=["GET"])
    app.add_api_route("/health", _health, methods=["GET"])
    app.add_api_route("/v1/models", _models, methods=["GET"])
    app.add_api_route("/v1/audio/models", _audio_models, methods=["GET"])
    add_voice_routes(app)
    app.add_api_route("/openapi.json", _openapi, methods=["GET"])
    app.add_api_route("/metrics", _metrics, methods=["GET"])
    app.add_api_websocket_route("/v1/audio/speech/stream", _speech_ws)
    app.add_api_websocket_route("/v1/realtime", _realtime_ws)
    app.add_api_route("/v1/audio/speech", _speech, methods=["POST"])
    app.add_api_route("/v1/audio/transcriptions", transcriptions, methods=["POST"])
    app.add_api_route("/dev/captioned_speech", _captioned, methods=["POST"])
    return app


# -- errors ---------------------------------------------------------------------------------------

async def _api_error(http: Request, e: ApiError) -> JSONResponse:
    if e.status == 405:
        e.headers = _allow(http, {**e.headers, "Allow": ""})
    return e.response()


async def _http_error(http: Request, e: StarletteHTTPException) -> JSONResponse:
    kind = "not_found_error" if e.status_code == 404 else "invalid_request_error"
    return ApiError(e.status_code, str(e.detail), kind, headers=_allow(http, e.headers)).response()


def _allow(http: Request, headers: Mapping[str, str] | None) -> dict[str, str]:
    """A 405's headers, its Allow naming every method the path has in the OpenAPI document
    (Starlette's names only the first route's)."""
    headers = dict(headers or {})
    state = state_of(http)
    if "Allow" in headers and state.engine is not None:
        if not state.methods:  # the routes a checkpoint offers do not change while it serves
            state.methods.update(allowed(document(state.engine, state.model_names, MAX_INPUT_CHARS,
                                                  MAX_UPLOAD_BYTES >> 20, state.hearing)))
        for route in http.app.routes:
            if isinstance(route, Route) and route.path_regex.match(http.url.path):
                if route.path in state.methods:
                    headers["Allow"] = ", ".join(state.methods[route.path])
                break
    return headers


async def _client_left(http: Request, _: ClientDisconnect) -> Response:
    # The client went away while its body was being read: nobody to answer, nothing to log but that.
    log.info("a client left before sending its whole request (%s %s)", http.method, http.url.path)
    return Response(status_code=400)


async def _internal_error(_: Request, e: Exception) -> JSONResponse:
    log.exception("internal error")
    return ApiError(500, f"internal error: {type(e).__name__}: {e}", "server_error").response()


# -- the small routes -----------------------------------------------------------------------------

async def _index() -> Response:
    # Everything the page needs is in this one file: it works with no network beyond this server.
    return Response(_PAGE.read_bytes(), media_type="text/html; charset=utf-8", headers={"Cache-Control": "no-cache"})


async def _health(http: Request) -> JSONResponse:
    # 503 while loading and while a worker is down (a load balancer, Ray Serve's health check
    # take the replica out); the failures by stage and the restarts so far, either way.
    state = state_of(http)
    status, body = state.health()
    if state.engine is not None and state.error is None:
        config = state.engine.config
        body = {**body, "model": state.model_name, "backend": state.engine.options.backend,
                "kind": config.kind, "instructions": config.honours_instruct,
                "listen": state.hearing is not None and state.hearing.listener is not None}
    headers = {"Retry-After": "5"} if status == 503 else None
    return JSONResponse(body, status_code=status, headers=headers)


async def _models(http: Request) -> JSONResponse:
    state = state_of(http)
    state.authorize(http)  # as OpenAI's
    return JSONResponse({"object": "list", "data": [{"id": n, "object": "model", "owned_by": "hearth"}
                                                    for n in state.model_names]})


async def _audio_models(http: Request) -> JSONResponse:
    # Open WebUI's listing, which it asks for without its key: model names are no secret.
    return JSONResponse({"models": [{"id": n, "name": n} for n in state_of(http).model_names]})


async def _openapi(http: Request) -> JSONResponse:
    # For the loaded checkpoint (its voices, languages and routes): 503 while it loads.
    state = state_of(http)
    engine, _ = state.loaded()
    return JSONResponse(document(engine, state.model_names, MAX_INPUT_CHARS, MAX_UPLOAD_BYTES >> 20, state.hearing))


async def _metrics(http: Request) -> Response:
    return Response(state_of(http).metrics.render(), media_type="text/plain; version=0.0.4")


async def _speech_ws(ws: WebSocket) -> None:
    state = state_of(ws)
    await speech_stream(ws, state, state.key_ok(ws, query_ok=True))


async def _realtime_ws(ws: WebSocket) -> None:
    state = state_of(ws)
    await realtime_transcription(ws, state, state.key_ok(ws, query_ok=True))


# -- POST /v1/audio/speech ------------------------------------------------------------------------

async def _speech(http: Request) -> Response:
    state = state_of(http)
    try:
        response = await _speak(http, state)
    except ApiError as e:
        state.metrics.request(e.status)
        raise
    state.metrics.request(response.status_code)
    return response


async def _captioned(http: Request) -> Response:
    state = state_of(http)
    try:
        response = await _speak(http, state, captioned=True)
    except ApiError as e:
        state.metrics.request(e.status)
        raise
    state.metrics.request(response.status_code)
    return response


async def _read_body(http: Request, engine: Engine) -> SpeechBody:
    limit = MAX_CLONE_BODY_BYTES if engine.config.model_type == "base" else MAX_BODY_BYTES  # room for ref_audio
    length = http.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise ApiError(413, f"the body is over {limit} bytes", "invalid_request_error")
    raw = await http.body()
    if len(raw) > limit:
        raise ApiError(413, f"the body is over {limit} bytes", "invalid_request_error")
    return SpeechBody.parse(raw)


async def _submit(state: ServerState, engine: Engine, scheduler: Scheduler, body: SpeechBody) -> SpeechRequest:
    """The body as a scheduler request (its voice cloned first, off the event loop, when inline)."""
    try:
        voice = await state.run(voice_for, engine, body) if body.ref_audio else voice_for(engine, body)
        return scheduler.submit(body.input, voice, on_failure="raise", **body.options)
    except InputError as e:
        raise bad_request(str(e), param_of(e)) from None
    except Busy as e:
        raise ApiError(503, str(e), "server_error", code="busy",
                       headers={"Retry-After": str(max(1, round(e.retry_after_s)))}) from None


async def _speak(http: Request, state: ServerState, captioned: bool = False) -> Response:
    state.authorize(http)
    engine, scheduler = state.loaded()
    body = await _read_body(http, engine)
    streamed = True
    if captioned:  # Kokoro's captioned speech: return_timestamps (default true) and stream (default true)
        body, streamed = captioned_body(body)
    elif body.options.get("word_timestamps") is True and body.stream_format != "sse":
        body = body.without_words()  # (said in X-Hearth-Warning: a bare audio stream has nowhere to put them)
    t0 = time.monotonic()
    request = await _submit(state, engine, scheduler, body)
    stream = _Stream(state, request, body.response_format, engine.sample_rate)
    watcher = asyncio.create_task(_watch_disconnect(http, request))
    try:
        first = await stream.first()
    except SentenceFailed as e:
        watcher.cancel()
        raise ApiError(500, str(e), "server_error") from None
    except BaseException:
        watcher.cancel()
        request.cancel()
        raise
    if first is None and request.cancelled:  # the client left before its first audio: nobody to answer
        watcher.cancel()
        log.info("request %d: the client left before its first audio", request.id)
        return Response(status_code=499)  # (nginx's "client closed request", counted as such in /metrics)
    first_byte_s = time.monotonic() - t0
    state.metrics.first_byte(first_byte_s)
    log.info("request %d: %s, %d characters, first audio after %.2f s", request.id, body.response_format,
             len(body.input), first_byte_s)
    audio = _audio(state, stream, first, watcher, t0)
    headers = _headers(engine, scheduler, request, body)
    if captioned:
        return await captioned_response(audio, body.response_format, streamed, headers)
    if body.stream_format == "sse":
        return StreamingResponse(_sse(audio, stream, engine, body.input), media_type="text/event-stream",
                                 headers=headers)
    return StreamingResponse(audio, media_type=stream.encoder.media_type, headers=headers)  # type: ignore[arg-type]
    # (bytes only: without word_timestamps, which a bare audio stream never asks for, no words come)


def _headers(engine: Engine, scheduler: Scheduler, request: SpeechRequest, body: SpeechBody) -> dict[str, str]:
    # x-request-id as OpenAI's: SDKs expose it (`response.request_id`), LiveKit's plugin logs it.
    headers = {"X-Hearth-Request": str(request.id), "X-Request-Id": f"hearth-{request.id}",
               "Cache-Control": "no-store"}
    if request.seed is not None:  # the same request with this seed gives the same audio
        headers["X-Hearth-Seed"] = str(request.seed)
    if scheduler.rate.realtime is not None:  # below 1 the audio comes slower than it plays: buffer
        headers["X-Hearth-Realtime"] = f"{scheduler.rate.realtime:.3f}"
    if body.instructions and not engine.config.honours_instruct:
        headers["X-Hearth-Warning"] = f"instructions are ignored: the {engine.config.model_size} model does " \
                                      "not take them (1.7B does)"
    if body.words_dropped:
        headers["X-Hearth-Warning"] = "word_timestamps come with stream_format sse (or POST /dev/captioned_speech); " \
                                      "a bare audio stream carries none"
    return headers


async def _audio(state: ServerState, stream: _Stream, first: RequestChunk | None, watcher: asyncio.Task[None],
                 t0: float) -> AsyncIterator[bytes | SentenceWords]:
    """The response's bytes; at its end (or when the client leaves) the request is over."""
    request = stream.request
    try:
        async for piece in stream.pieces(first):
            yield piece
    except SentenceFailed as e:
        log.warning("request %d ended early: %s", request.id, e)
        raise
    finally:
        watcher.cancel()
        request.cancel()  # a no-op once it has ended; stops generation if the client left
        frames = sum(s.frames for s in request.sentences)
        elapsed = time.monotonic() - t0
        if request.status == "done" and frames:
            state.metrics.real_time_factor(elapsed / (frames * FRAME_S))
        log.info("request %d: %s after %d frames (%.2f s of audio) in %.2f s", request.id, request.status,
                 frames, frames * FRAME_S, elapsed)


class _Stream:
    """One response's side of a scheduler request: awaits its chunks (no thread waits for them) and
    encodes them, the compressed formats off the event loop."""

    def __init__(self, state: ServerState, request: SpeechRequest, fmt: str, sample_rate: int):
        self.state = state
        self.request = request
        self.encoder = encoder(fmt, sample_rate)
        self.inline = fmt in ("pcm", "wav")  # a copy and a byte swap: not worth a thread hop
        self.frames = 0
        # its chunks as they land (and, with word timestamps, each sentence's words after its audio);
        # the first chunk is awaited before the response starts
        self.chunks = request.aevents() if request.options.word_timestamps else aiter(request)

    async def _run(self, fn: Any, *args: Any) -> Any:
        if self.inline:
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self.state.pool, fn, *args)

    async def first(self) -> RequestChunk | None:
        first = await anext(self.chunks, None)  # returns at the first chunk, the end, or a cancel
        assert not isinstance(first, SentenceWords)  # (words come after a sentence's audio)
        return first

    async def _encode(self, chunk: RequestChunk) -> bytes:
        self.frames += chunk.frames
        return await self._run(self.encoder.encode, chunk.samples)

    async def pieces(self, first: RequestChunk | None) -> AsyncIterator[bytes | SentenceWords]:
        """Encoded bytes as chunks come (and sentences' words); the tail of the encoder at the end."""
        if first is not None:
            if data := await self._encode(first):
                yield data
            async for chunk in self.chunks:
                if isinstance(chunk, SentenceWords):
                    yield chunk
                elif data := await self._encode(chunk):
                    yield data
        if self.request.cancelled:
            return
        tail = await self._run(self.encoder.finish)
        if tail:
            yield tail


async def _watch_disconnect(http: Request, request: SpeechRequest) -> None:
    """Cancel `request` as soon as the client goes away (generation stops within a frame).

    Starlette notices a disconnect itself once a streaming response has started (for servers of
    ASGI spec < 2.4, such as uvicorn), but not while the first chunk is awaited, and for spec 2.4
    servers only at the next write; this covers both."""
    while True:
        message = await http.receive()
        if message["type"] == "http.disconnect":
            request.cancel()
            return


async def _sse(audio: AsyncIterator[bytes | SentenceWords], stream: _Stream, engine: Engine, text: str
               ) -> AsyncIterator[bytes]:
    """OpenAI's server-sent events: audio deltas (base64), each sentence's words after its audio
    (`speech.audio.timestamps`, with word_timestamps), then `speech.audio.done` with the usage."""
    async for piece in audio:
        if isinstance(piece, SentenceWords):
            event = {"type": "speech.audio.timestamps", **piece.to_json()}
        else:
            event = {"type": "speech.audio.delta", "audio": base64.b64encode(piece).decode("ascii")}
        yield f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode()
    if stream.request.cancelled:
        return
    input_tokens = len(engine.tokenizer.encode(text))
    usage = {"input_tokens": input_tokens, "output_tokens": stream.frames, "total_tokens": input_tokens + stream.frames}
    yield f"data: {json.dumps({'type': 'speech.audio.done', 'usage': usage})}\n\n".encode()
