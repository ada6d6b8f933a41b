"""`POST /dev/captioned_speech`: Kokoro-FastAPI's captioned speech, its audio with word timestamps.

The body is OpenAI's speech body (`hearth.serve.speech_body`) plus Kokoro's `return_timestamps`
(default true: needs the server's aligner) and `stream` (default true). Streamed, the answer is one
JSON object a line (`application/x-ndjson`): `{"audio": base64 of the next piece of the audio in
response_format, "audio_format", "timestamps": []}` as the audio is made, and after each sentence a
line whose `audio` is empty and whose `timestamps` are that sentence's words. Not streamed: one
object, the whole file in `audio` and every word in `timestamps`. A word is `{word, start_time,
end_time}` (seconds from the start of the audio) with Hearth's `source_start`, `source_end` (its
characters in `input`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from fastapi.responses import JSONResponse, Response, StreamingResponse

from hearth.runtime.words import SentenceWords
from hearth.serve.server_state import bad_request
from hearth.serve.speech_body import SpeechBody

__all__ = ["captioned_body", "captioned_response"]


def captioned_body(body: SpeechBody) -> tuple[SpeechBody, bool]:
    """(the body with word_timestamps as return_timestamps says, whether the answer is streamed)."""
    raw = body.raw or {}
    wanted, streamed = raw.get("return_timestamps", True), raw.get("stream", True)
    for name, value in (("return_timestamps", wanted), ("stream", streamed)):
        if value is not None and not isinstance(value, bool):
            raise bad_request(f"{name} must be true or false, got {value!r}", name)
    words = body.options.get("word_timestamps", wanted if wanted is not None else True)  # (checked by the scheduler)
    return replace(body, options={**body.options, "word_timestamps": words}), streamed is not False


def _line(audio: bytes, fmt: str, words: list[dict[str, Any]]) -> bytes:
    return (json.dumps({"audio": base64.b64encode(audio).decode("ascii"), "audio_format": fmt, "timestamps": words},
                       ensure_ascii=False) + "\n").encode()


async def captioned_response(audio: AsyncIterator[bytes | SentenceWords], fmt: str, streamed: bool,
                             headers: dict[str, str]) -> Response:
    if streamed:
        return StreamingResponse(_lines(audio, fmt), media_type="application/x-ndjson", headers=headers)
    data, words = bytearray(), []
    async for piece in audio:
        if isinstance(piece, SentenceWords):
            words += [w.to_json() for w in piece.words]
        else:
            data += piece
    return JSONResponse({"audio": base64.b64encode(bytes(data)).decode("ascii"), "audio_format": fmt,
                         "timestamps": words}, headers=headers)


async def _lines(audio: AsyncIterator[bytes | SentenceWords], fmt: str) -> AsyncIterator[bytes]:
    async for piece in audio:
        if isinstance(piece, SentenceWords):
            yield _line(b"", fmt, [w.to_json() for w in piece.words])
        else:
            yield _line(piece, fmt, [])
