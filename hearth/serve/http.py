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
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
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
from hearth.serve import jsonbody
from hearth.serve.encoders import FORMATS, encoder
from hearth.serve.metrics import Metrics
from hearth.serve.openapi import allowed, document
from hearth.serve.shared_engine import SharedEngine
from hearth.serve.voice_routes import MAX_UPLOAD_BYTES, add_voice_routes
from hearth.serve.websocket import speech_stream
from hearth.text.prompt import ClonedVoice, Speaker
from hearth.voices.cloning import read_reference

__all__ = ["MAX_BODY_BYTES", "MAX_INPUT_CHARS", "ServerState", "create_app"]

log = logging.getLogger("hearth.serve")

MAX_INPUT_CHARS = 4096  # OpenAI's limit on `input` (and `instructions`)
MAX_BODY_BYTES = 1 << 20
MAX_CLONE_BODY_BYTES = 14 << 20  # a Base model's: a 10 MB reference recording in base64, inline
_BUSY_RETRY_S = 2


@dataclass(kw_only=True)
class ServerState(SharedEngine):
    """What the endpoints share: the resident engine and scheduler, the model's name, the metrics."""

    model_name: str = "hearth"
    metrics: Metrics = field(init=False)

    def __post_init__(self) -> None:
        self.metrics = Metrics(lambda: self.scheduler.counts() if self.scheduler is not None else {},
                               lambda: self.scheduler.health_report() if self.scheduler is not None else {})


class ApiError(Exception):
    def __init__(self, status: int, message: str, kind: str, param: str | None = None, code: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.param, self.code = status, message, kind, param, code
        self.headers = headers or {}

    def response(self) -> JSONResponse:
        body = {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}
        return JSONResponse(body, status_code=self.status, headers=self.headers)


def _bad(message: str, param: str | None = None) -> ApiError:
    return ApiError(400, message, "invalid_request_error", param)


@dataclass(frozen=True)
class SpeechBody:
    """`POST /v1/audio/speech`, checked: OpenAI's fields plus vLLM-Omni's names for Qwen3-TTS."""

    input: str
    voice: str
    response_format: str
    stream_format: str
    instructions: str | None
    language: Any
    seed: Any
    max_new_tokens: Any
    text_mode: Any
    speed: Any = 1.0
    task_type: str | None = None
    ref_audio: str | None = None  # vLLM-Omni's inline clone (Base): a base64 data URL
    ref_text: str | None = None
    x_vector_only: bool | None = None

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
        if task_type is not None and (not isinstance(task_type, str) or task_type not in _TASK_KINDS):
            raise _bad(f"task_type must be one of {', '.join(_TASK_KINDS)}, got {task_type!r}", "task_type")
        voice = body.get("voice")
        if isinstance(voice, dict):
            voice = voice.get("id")
        if ref_audio is not None and not voice:
            voice = "cloned"
        if not isinstance(voice, str) or not voice.strip():
            raise _bad("voice must be a voice name (see GET /v1/audio/voices) or {\"id\": name}", "voice")
        fmt = _given(body, "response_format", "mp3")
        if fmt not in FORMATS:
            raise _bad(f"response_format must be one of {', '.join(FORMATS)}, got {fmt!r}", "response_format")
        stream_format = _given(body, "stream_format", "audio")
        if stream_format not in ("audio", "sse"):
            raise _bad(f"stream_format must be 'audio' or 'sse', got {stream_format!r}", "stream_format")
        speed = body.get("speed")  # checked by the scheduler, as are language, seed, max_new_tokens and text_mode
        instructions = body.get("instructions")
        if instructions is not None and (not isinstance(instructions, str) or len(instructions) > MAX_INPUT_CHARS):
            raise _bad(f"instructions must be a string of at most {MAX_INPUT_CHARS} characters", "instructions")
        return cls(text, voice, fmt, stream_format, instructions or None, _given(body, "language", "auto"),
                   _whole(body.get("seed")), _whole(body.get("max_new_tokens")), _given(body, "text_mode", None),
                   1.0 if speed is None else speed, task_type, ref_audio, ref_text, x_vector_only)


_TASK_KINDS = {"CustomVoice": "custom_voice", "Base": "base", "VoiceDesign": "voice_design"}


def _whole(value: Any) -> Any:  # noqa: ANN401 - checked where it is used
    """A whole number JSON wrote with a fraction (7.0, as JavaScript and JSON Schema allow) as an int."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _given(body: dict[str, Any], key: str, default: Any) -> Any:  # noqa: ANN401 - checked where it is used
    """An optional field: null or "" leave it out (clients send both for "not set"); anything else
    is checked where it is used."""
    value = body.get(key)
    return default if value is None or (isinstance(value, str) and not value) else value


def _inline_clone(engine: Engine, body: SpeechBody) -> ClonedVoice:
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


def _voice_for(engine: Engine, body: SpeechBody) -> Speaker:
    """The voice to ask the engine for. A VoiceDesign model has none (the instructions describe the
    voice), yet OpenAI's clients always send one: it is ignored there."""
    kind = engine.config.model_type
    if body.task_type is not None and _TASK_KINDS[body.task_type] != kind:
        raise _bad(f"task_type {body.task_type} needs a {body.task_type} checkpoint; this server runs a "
                   f"{engine.config.kind} one", "task_type")
    if body.ref_audio is not None:
        if kind != "base":
            raise _bad(f"ref_audio (cloning a voice) needs a Base checkpoint; this server runs a {engine.config.kind} "
                       f"one, with the voices {', '.join(engine.voices) or 'its instructions describe'}", "ref_audio")
        return _inline_clone(engine, body)
    if kind == "voice_design" and not body.instructions:
        raise _bad(f"a {engine.config.kind} model speaks the voice its instructions describe: send instructions, "
                   "e.g. \"A warm, calm woman's voice, speaking slowly\"", "instructions")
    return engine.voice_rules.resolve(body.voice, design_voice="ignore")


_PARAMS = {"text": "input", "instruct": "instructions"}  # the engine's names of OpenAI's fields


def _param_of(e: InputError) -> str:
    """The request field an engine error is about, by OpenAI's names (the text when none is named)."""
    return _PARAMS.get(e.param, e.param) if e.param else "input"


class _Stream:
    """One response's side of a scheduler request: awaits its chunks (no thread waits for them) and
    encodes them, the compressed formats off the event loop."""

    def __init__(self, state: ServerState, request: SpeechRequest, fmt: str, sample_rate: int):
        self.state = state
        self.request = request
        self.encoder = encoder(fmt, sample_rate)
        self.inline = fmt in ("pcm", "wav")  # a copy and a byte swap: not worth a thread hop
        self.frames = 0
        self.chunks = aiter(request)  # its chunks as they land; the first is awaited before the response starts

    async def _run(self, fn: Any, *args: Any) -> Any:
        if self.inline:
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self.state.pool, fn, *args)

    async def first(self) -> RequestChunk | None:
        return await anext(self.chunks, None)  # returns at the first chunk, the end, or a cancel

    async def _encode(self, chunk: RequestChunk) -> bytes:
        self.frames += chunk.frames
        return await self._run(self.encoder.encode, chunk.samples)

    async def pieces(self, first: RequestChunk | None) -> AsyncIterator[bytes]:
        """Encoded bytes as chunks come; the tail of the encoder at the end."""
        if first is not None:
            if data := await self._encode(first):
                yield data
            async for chunk in self.chunks:
                if data := await self._encode(chunk):
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


def create_app(state: ServerState, *, api_key: str | None = None, cors_origins: list[str] | None = None) -> FastAPI:
    app = FastAPI(title="Hearth", docs_url=None, redoc_url=None, openapi_url=None)
    if cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=cors_origins, allow_methods=["*"], allow_headers=["*"],
                           expose_headers=["X-Hearth-Request", "X-Hearth-Seed", "X-Hearth-Warning", "X-Request-Id",
                                           "X-Hearth-Realtime"])

    @app.exception_handler(ApiError)
    async def api_error(http: Request, e: ApiError) -> JSONResponse:
        if e.status == 405:
            e.headers = allow(http, {**e.headers, "Allow": ""})
        return e.response()

    @app.exception_handler(StarletteHTTPException)
    async def http_error(http: Request, e: StarletteHTTPException) -> JSONResponse:
        kind = "not_found_error" if e.status_code == 404 else "invalid_request_error"
        return ApiError(e.status_code, str(e.detail), kind, headers=allow(http, e.headers)).response()

    methods: dict[str, list[str]] = {}  # path -> the methods the OpenAPI document gives it (once loaded)

    def allow(http: Request, headers: Mapping[str, str] | None) -> dict[str, str]:
        """A 405's headers, its Allow naming every method the path has in the OpenAPI document
        (Starlette's names only the first route's)."""
        headers = dict(headers or {})
        if "Allow" in headers and state.engine is not None:
            if not methods:  # the routes a checkpoint offers do not change while it serves
                methods.update(allowed(document(state.engine, model_names, MAX_INPUT_CHARS, MAX_UPLOAD_BYTES >> 20)))
            for route in app.routes:
                if isinstance(route, Route) and route.path_regex.match(http.url.path):
                    if route.path in methods:
                        headers["Allow"] = ", ".join(methods[route.path])
                    break
        return headers

    @app.exception_handler(ClientDisconnect)
    async def client_left(http: Request, _: ClientDisconnect) -> Response:
        # The client went away while its body was being read: nobody to answer, nothing to log but that.
        log.info("a client left before sending its whole request (%s %s)", http.method, http.url.path)
        return Response(status_code=400)

    @app.exception_handler(Exception)
    async def internal_error(_: Request, e: Exception) -> JSONResponse:
        log.exception("internal error")
        return ApiError(500, f"internal error: {type(e).__name__}: {e}", "server_error").response()

    def key_ok(http: Request | WebSocket, query_ok: bool = False) -> bool:
        if api_key is None:
            return True
        given = http.headers.get("authorization", "")
        token = given[7:] if given.lower().startswith("bearer ") else ""
        if not token and query_ok:  # a browser's WebSocket cannot send headers
            token = http.query_params.get("api_key", "")
        return hmac.compare_digest(token.encode(), api_key.encode())

    def authorize(http: Request) -> None:
        if not key_ok(http):
            raise ApiError(401, "a valid API key is required: send 'Authorization: Bearer <key>'",
                           "authentication_error", code="invalid_api_key")

    def loaded() -> tuple[Engine, Scheduler]:
        if state.error is not None:
            raise ApiError(500, f"the model could not be loaded: {state.error}", "server_error")
        if state.engine is None or state.scheduler is None:
            raise ApiError(503, "the model is still loading; try again in a few seconds", "server_error",
                           code="loading", headers={"Retry-After": "5"})
        return state.engine, state.scheduler

    page = (Path(__file__).parent / "static" / "index.html").read_bytes()

    @app.get("/")
    async def index() -> Response:
        # Everything the page needs is in this one file: it works with no network beyond this server.
        return Response(page, media_type="text/html; charset=utf-8", headers={"Cache-Control": "no-cache"})

    @app.get("/health")
    async def health() -> JSONResponse:
        # 503 while loading and while a worker is down (a load balancer, Ray Serve's health check
        # take the replica out); the failures by stage and the restarts so far, either way.
        status, body = state.health()
        if state.engine is not None and state.error is None:
            config = state.engine.config
            body = {**body, "model": state.model_name, "backend": state.engine.options.backend,
                    "kind": config.kind, "instructions": config.honours_instruct}
        headers = {"Retry-After": "5"} if status == 503 else None
        return JSONResponse(body, status_code=status, headers=headers)

    model_names = ["tts-1", "tts-1-hd", "gpt-4o-mini-tts", state.model_name]  # each speaks with this model

    @app.get("/v1/models")
    async def models(http: Request) -> JSONResponse:
        authorize(http)  # as OpenAI's
        return JSONResponse({"object": "list", "data": [{"id": n, "object": "model", "owned_by": "hearth"}
                                                        for n in model_names]})

    @app.get("/v1/audio/models")
    async def audio_models() -> JSONResponse:
        # Open WebUI's listing, which it asks for without its key: model names are no secret.
        return JSONResponse({"models": [{"id": n, "name": n} for n in model_names]})

    def make_error(status: int, message: str, param: str | None = None) -> ApiError:
        kind = {404: "not_found_error", 413: "invalid_request_error"}.get(status, "invalid_request_error")
        return ApiError(status, message, kind if status < 500 else "server_error", param)

    async def run(fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(state.pool, fn, *args)

    add_voice_routes(app, authorize=authorize, key_ok=key_ok, loaded=loaded, error=make_error, run=run)

    @app.get("/openapi.json")
    async def openapi() -> JSONResponse:
        # For the loaded checkpoint (its voices, languages and routes): 503 while it loads.
        engine, _ = loaded()
        return JSONResponse(document(engine, model_names, MAX_INPUT_CHARS, MAX_UPLOAD_BYTES >> 20))

    @app.get("/metrics")
    async def metrics() -> Response:
        return Response(state.metrics.render(), media_type="text/plain; version=0.0.4")

    @app.websocket("/v1/audio/speech/stream")
    async def speech_ws(ws: WebSocket) -> None:
        await speech_stream(ws, state, key_ok(ws, query_ok=True))

    @app.post("/v1/audio/speech")
    async def speech(http: Request) -> Response:
        try:
            response = await _speech(http)
        except ApiError as e:
            state.metrics.request(e.status)
            raise
        state.metrics.request(response.status_code)
        return response

    async def _speech(http: Request) -> Response:
        authorize(http)
        engine, scheduler = loaded()
        limit = MAX_CLONE_BODY_BYTES if engine.config.model_type == "base" else MAX_BODY_BYTES  # room for ref_audio
        length = http.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            raise ApiError(413, f"the body is over {limit} bytes", "invalid_request_error")
        raw = await http.body()
        if len(raw) > limit:
            raise ApiError(413, f"the body is over {limit} bytes", "invalid_request_error")
        body = SpeechBody.parse(raw)
        t0 = time.monotonic()
        try:
            voice = await run(_voice_for, engine, body) if body.ref_audio else _voice_for(engine, body)
            request = scheduler.submit(body.input, voice, body.language, seed=body.seed,
                                       instruct=body.instructions, text_mode=body.text_mode,
                                       max_new_tokens=body.max_new_tokens, on_failure="raise", speed=body.speed)
        except InputError as e:
            raise _bad(str(e), _param_of(e)) from None
        except Busy as e:
            raise ApiError(503, str(e), "server_error", code="busy",
                           headers={"Retry-After": str(max(1, round(e.retry_after_s)))}) from None
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
        first_byte_s = time.monotonic() - t0
        state.metrics.first_byte(first_byte_s)
        log.info("request %d: %s, %d characters, first audio after %.2f s", request.id, body.response_format,
                 len(body.input), first_byte_s)

        async def audio() -> AsyncIterator[bytes]:
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

        if body.stream_format == "sse":
            return StreamingResponse(_sse(audio(), stream, engine, body.input), media_type="text/event-stream",
                                     headers=headers)
        return StreamingResponse(audio(), media_type=stream.encoder.media_type, headers=headers)

    return app


async def _sse(audio: AsyncIterator[bytes], stream: _Stream, engine: Engine, text: str) -> AsyncIterator[bytes]:
    """OpenAI's server-sent events: audio deltas (base64), then `speech.audio.done` with the usage."""
    async for piece in audio:
        event = {"type": "speech.audio.delta", "audio": base64.b64encode(piece).decode("ascii")}
        yield f"data: {json.dumps(event)}\n\n".encode()
    if stream.request.cancelled:
        return
    input_tokens = len(engine.tokenizer.encode(text))
    usage = {"input_tokens": input_tokens, "output_tokens": stream.frames, "total_tokens": input_tokens + stream.frames}
    yield f"data: {json.dumps({'type': 'speech.audio.done', 'usage': usage})}\n\n".encode()
