"""The OpenAPI document's parts for listening: `POST /v1/audio/transcriptions` (a server started
with --listen) and `POST /dev/captioned_speech` (with --aligner), and the word timestamps' shapes."""

from __future__ import annotations

from typing import Any

from hearth.listen.languages import CODES

__all__ = ["captioned_path", "sentence_words", "transcription_path", "word"]

_JSON = "application/json"


def word() -> dict[str, Any]:
    number, index = {"type": "number", "minimum": 0}, {"type": "integer", "minimum": 0}
    return {"type": "object", "required": ["word", "start_time", "end_time", "source_start", "source_end"],
            "properties": {"word": {"type": "string"}, "start_time": number, "end_time": number,
                           "source_start": index, "source_end": index}}


def sentence_words() -> dict[str, Any]:
    """A sentence's words, after its audio (SSE `speech.audio.timestamps`, the WebSocket's `timestamps`)."""
    number = {"type": "number", "minimum": 0}
    return {"sentence_index": {"type": "integer", "minimum": 0}, "offset": number, "duration": number,
            "words": {"type": "array", "items": word()}, "error": {"type": "string"}}


def transcription_path(errors: dict[str, Any], languages: tuple[str, ...], max_mb: int) -> dict[str, Any]:
    codes = sorted({CODES[name] for name in languages if name in CODES})
    text = {"type": "string"}
    segment = {"type": "object", "required": ["id", "start", "end", "text"], "properties": {
        "id": {"type": "integer"}, "seek": {"type": "integer"}, "start": {"type": "number"}, "end": {"type": "number"},
        "text": text, "tokens": {"type": "array", "items": {"type": "integer"}}, "temperature": {"type": "number"}}}
    timed = {"type": "array", "items": {"type": "object", "required": ["word", "start", "end"], "properties": {
        "word": text, "start": {"type": "number"}, "end": {"type": "number"}}}}
    body = {"type": "object", "required": ["text"], "properties": {
        "text": text, "task": text, "language": text, "duration": {"type": "number"},
        "segments": {"type": "array", "items": segment}, "words": timed}}
    event = {"type": "object", "required": ["data"], "properties": {"data": {
        "type": "string", "contentMediaType": "application/json", "contentSchema": {"type": "object",
                                                                                   "required": ["type"]}}}}
    form = {"type": "object", "required": ["file"], "properties": {
        "file": {"type": "string", "format": "binary",
                 "description": f"the recording: WAV, FLAC, MP3, OGG/Opus, M4A or WebM, at most {max_mb} MB"},
        "model": {**text, "description": "any name: the server has one listening model"},
        "language": {**text, "description": f"a code ({', '.join(codes)}) or a name; default: the model tells"},
        "prompt": {**text, "maxLength": 4096, "description": "context: names, terms, the topic"},
        "response_format": {"enum": ["json", "text", "verbose_json", "srt", "vtt"], "default": "json"},
        "timestamp_granularities[]": {"type": "array", "items": {"enum": ["word", "segment"]},
                                      "description": "word: each word's times (with --aligner)"},
        "temperature": {"type": "number", "minimum": 0, "maximum": 1,
                        "description": "taken; decoding is greedy (X-Hearth-Warning when not 0)"},
        "stream": {"enum": ["true", "false"], "description": "server-sent events, piece by piece"}}}
    return {"post": {
        "summary": "Transcribe a recording (OpenAI's transcription API; Qwen3-ASR)",
        "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": form}}},
        "responses": {"200": {"description": "the transcript", "content": {
            _JSON: {"schema": body}, "text/plain": {"schema": text}, "text/vtt": {"schema": text},
            "application/x-subrip": {"schema": text}, "text/event-stream": {"schema": event}},
            "headers": {"X-Hearth-Warning": {"schema": text}}}, **errors}}}


def captioned_path(errors: dict[str, Any]) -> dict[str, Any]:
    line = {"type": "object", "required": ["audio", "audio_format", "timestamps"], "properties": {
        "audio": {"type": "string", "contentEncoding": "base64"}, "audio_format": {"type": "string"},
        "timestamps": {"type": "array", "items": word()}}}
    return {"post": {
        "summary": "Speak a text with word timestamps (Kokoro-FastAPI's captioned speech)",
        "requestBody": {"required": True, "content": {_JSON: {"schema": {"allOf": [
            {"$ref": "#/components/schemas/Speech"},
            {"type": "object", "properties": {"return_timestamps": {"type": "boolean", "default": True},
                                              "stream": {"type": "boolean", "default": True}}}]}}}},
        "responses": {"200": {"description": "stream true: one JSON object a line (audio pieces, then each "
                                             "sentence's words); false: one object", "content": {
            "application/x-ndjson": {"schema": {"type": "string"}}, _JSON: {"schema": line}}},
            **errors}}}
