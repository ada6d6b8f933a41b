"""`POST /v1/audio/transcriptions`: OpenAI's transcription API over the server's Qwen3-ASR.

multipart/form-data: `file` (WAV, FLAC, MP3, OGG/Opus, M4A, WebM; any rate from 4 to 384 kHz, any
channels), `model` (any name: the server has one), `language` (a code such as "en", or a name;
default: the model tells), `prompt` (context the model may use: names, terms), `response_format`
(json, text, verbose_json, srt, vtt), `timestamp_granularities[]` (`word` needs the aligner: each
word's times; `segment`: the pieces the recording was transcribed in), `stream` (server-sent
`transcript.text.delta` events, piece by piece, then `transcript.text.done`), `temperature`
(taken, and said to be ignored when not 0: decoding is greedy, as the model is released). srt and
vtt cues are timed by word when the server has an aligner, else one cue per piece. Fields OpenAI
has that Hearth does not use are taken and named in `X-Hearth-Warning`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from hearth.errors import InputError
from hearth.listen import ListenOptions
from hearth.listen.audio_in import decode_audio
from hearth.listen.captions import srt, vtt
from hearth.listen.formats import openai_body, transcript_cues
from hearth.listen.languages import language_named
from hearth.listen.listener import Transcript
from hearth.runtime.request import Busy
from hearth.serve.hearing import Hearing, not_loaded
from hearth.serve.server_state import ApiError, ServerState, bad_request, error, state_of

__all__ = ["MAX_AUDIO_BYTES", "RESPONSE_FORMATS", "transcriptions"]

log = logging.getLogger("hearth.serve")

MAX_AUDIO_BYTES = 64 << 20  # an hour of MP3 at 128 kbit/s fits
MAX_PROMPT_CHARS = 4096
RESPONSE_FORMATS = ("json", "text", "verbose_json", "srt", "vtt")
_KNOWN = {"file", "model", "language", "prompt", "response_format", "temperature", "timestamp_granularities[]",
          "timestamp_granularities", "stream"}
_USAGE = "send multipart/form-data with the recording as `file` (and model, language, prompt, response_format)"
_MEDIA = {"json": "application/json", "verbose_json": "application/json", "text": "text/plain; charset=utf-8",
          "srt": "application/x-subrip; charset=utf-8", "vtt": "text/vtt; charset=utf-8"}


async def _limited(stream: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
    total = 0
    async for piece in stream:
        total += len(piece)
        if total > MAX_AUDIO_BYTES + 65536:
            raise error(413, f"the upload is over {MAX_AUDIO_BYTES >> 20} MB; cut the recording into parts")
        yield piece


async def _form(http: Request) -> FormData:
    if not http.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise bad_request(_USAGE, "file")
    length = http.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_AUDIO_BYTES + 65536:
        raise error(413, f"the upload is over {MAX_AUDIO_BYTES >> 20} MB; cut the recording into parts")
    try:
        return await MultiPartParser(http.headers, _limited(http.stream()), max_files=1, max_fields=32,
                                     max_part_size=MAX_PROMPT_CHARS * 4 + 1024).parse()
    except MultiPartException as e:
        raise bad_request(f"the form cannot be read ({e.message}); {_USAGE}", "file") from None


def _text(form: FormData, name: str, default: str | None = None) -> str | None:
    value = form.get(name)
    if value is None or value == "":
        return default
    if not isinstance(value, str):
        raise bad_request(f"{name} must be a text field, not a file", name)
    return value


def _options(form: FormData, hearing: Hearing, warnings: list[str]) -> tuple[str, ListenOptions, bool, bool]:
    """(response_format, the options, whether words are listed, streamed), checked."""
    assert hearing.listener is not None
    fmt = _text(form, "response_format", "json")
    if fmt not in RESPONSE_FORMATS:
        raise bad_request(f"response_format must be one of {', '.join(RESPONSE_FORMATS)}, got {fmt!r}",
                          "response_format")
    try:
        language = language_named(_text(form, "language"), hearing.listener.languages)
    except InputError as e:
        raise bad_request(str(e), "language") from None
    prompt = _text(form, "prompt", "") or ""
    if len(prompt) > MAX_PROMPT_CHARS or "<|audio_pad|>" in prompt:
        raise bad_request(f"prompt must be at most {MAX_PROMPT_CHARS} characters of text", "prompt")
    temperature = _text(form, "temperature")
    if temperature is not None:
        try:
            t = float(temperature)
        except ValueError:
            raise bad_request(f"temperature must be a number from 0 to 1, got {temperature!r}", "temperature") from None
        if not 0.0 <= t <= 1.0:
            raise bad_request(f"temperature must be a number from 0 to 1, got {temperature!r}", "temperature")
        if t:
            warnings.append("temperature is ignored: Qwen3-ASR decodes greedily")
    granularities = [g for name in ("timestamp_granularities[]", "timestamp_granularities")
                     for g in form.getlist(name)]
    if any(g not in ("word", "segment") for g in granularities):
        raise bad_request("timestamp_granularities[] takes word and segment", "timestamp_granularities[]")
    words = "word" in granularities
    if words and hearing.aligner is None:
        raise bad_request(not_loaded("aligner"), "timestamp_granularities[]")
    if words and fmt == "text":
        raise bad_request("word timestamps come with response_format json, verbose_json, srt or vtt",
                          "timestamp_granularities[]")
    stream = (_text(form, "stream", "false") or "false").lower()
    if stream not in ("true", "false"):
        raise bad_request(f"stream must be true or false, got {stream!r}", "stream")
    if stream == "true" and fmt not in ("json", "text"):
        raise bad_request("a streamed transcription gives text events: response_format json or text", "stream")
    timed = words or (fmt in ("srt", "vtt") and hearing.aligner is not None)  # cues timed by word where possible
    unknown = sorted(set(form.keys()) - _KNOWN)
    if unknown:
        warnings.append(f"not used: {', '.join(unknown)}")
    return fmt, ListenOptions(context=prompt, language=language, timestamps=timed), words, stream == "true"


async def transcriptions(http: Request) -> Response:
    state = state_of(http)
    state.authorize(http)
    state.loaded()  # 503 while the server loads
    hearing = state.hearing
    if hearing is None or hearing.listener is None:
        raise ApiError(400, not_loaded("listen"), "invalid_request_error", "model", code="model_not_loaded")
    form = await _form(http)
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise bad_request(f"the recording is missing: {_USAGE}", "file")
        warnings: list[str] = []
        fmt, options, words, streamed = _options(form, hearing, warnings)
        data = await upload.read(MAX_AUDIO_BYTES + 1)
    finally:
        await form.close()
    if len(data) > MAX_AUDIO_BYTES:
        raise error(413, f"the upload is over {MAX_AUDIO_BYTES >> 20} MB; cut the recording into parts")
    headers = {"X-Hearth-Warning": "; ".join(warnings)} if warnings else {}
    try:
        recording = await state.run(decode_audio, data)
        if streamed:
            hearing.check_room()
            pieces = hearing.pieces(recording.samples, recording.sample_rate, options)  # checked now
            return StreamingResponse(_events(state, hearing, pieces), media_type="text/event-stream",
                                     headers={**headers, "Cache-Control": "no-store"})
        transcript = await hearing.run(state.pool, hearing.transcribe, recording.samples, recording.sample_rate,
                                       options)
    except InputError as e:
        raise bad_request(str(e), "file" if e.param == "audio" else e.param) from None
    except Busy as e:
        raise ApiError(503, str(e), "server_error", code="busy",
                       headers={"Retry-After": str(max(1, round(e.retry_after_s)))}) from None
    log.info("transcribed %.1f s of audio (%s, %d piece(s))", recording.seconds, transcript.language or "?",
             len(transcript.pieces))
    return _answer(transcript, recording.seconds, fmt, words, headers)


def _answer(t: Transcript, seconds: float, fmt: str, words: bool, headers: dict[str, str]) -> Response:
    if fmt in ("json", "verbose_json"):
        return JSONResponse(openai_body(t, seconds, fmt == "verbose_json", words), headers=headers)
    if fmt == "text":
        body = t.text
    else:
        made = transcript_cues(t)
        body = vtt(made) if fmt == "vtt" else srt(made)
    return Response(body.encode(), media_type=_MEDIA[fmt], headers=headers)


async def _events(state: ServerState, hearing: Hearing, pieces: Any) -> AsyncIterator[bytes]:  # noqa: ANN401
    """Server-sent events: each piece's text as it is done, then the whole text."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()

    def work() -> None:
        try:
            for piece in pieces:
                loop.call_soon_threadsafe(queue.put_nowait, piece)
                if stop.is_set():
                    break
            loop.call_soon_threadsafe(queue.put_nowait, None)
        except Exception as e:  # noqa: BLE001 - said in the stream
            loop.call_soon_threadsafe(queue.put_nowait, e)

    task = asyncio.ensure_future(hearing.run(state.pool, work))
    task.add_done_callback(lambda t: queue.put_nowait(t.exception()) if not t.cancelled() and t.exception() else None)
    text = ""
    try:
        while (item := await queue.get()) is not None:
            if isinstance(item, Exception):
                yield _sse({"type": "error", "error": {"message": f"{type(item).__name__}: {item}"}})
                return
            text += item.text
            yield _sse({"type": "transcript.text.delta", "delta": item.text})
        yield _sse({"type": "transcript.text.done", "text": text})
    finally:
        stop.set()
        await asyncio.gather(task, return_exceptions=True)


def _sse(event: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode()
