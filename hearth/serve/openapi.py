"""`GET /openapi.json`: the server's own OpenAPI 3.1 document, describing the real bodies.

Written out rather than derived from the routes: the endpoints read raw bodies (to give OpenAI's
error envelope, stream, and cap sizes), so FastAPI cannot see their shapes. The document is built
for the loaded checkpoint: its voices and aliases, its languages, and the voice routes only where
they work (Base; elsewhere they answer 405). A 405's `Allow` lists the methods documented here.
The WebSocket's messages are in `components.schemas` (OpenAPI has no WebSocket operations) and
named by the `x-websocket` extension. tests/test_schema.py runs schemathesis against it: every
answer must match it, and no input may bring a 5xx or a hang.
"""

from __future__ import annotations

from typing import Any

from hearth.engine import Engine
from hearth.options import FIELDS
from hearth.serve.encoders import FORMATS, MEDIA_TYPES
from hearth.serve.openapi_listen import captioned_path, sentence_words, transcription_path
from hearth.serve.transcription import MAX_AUDIO_BYTES

__all__ = ["allowed", "document"]

_JSON = "application/json"


def _error_response(description: str) -> dict[str, Any]:
    return {"description": description, "content": {_JSON: {"schema": {"$ref": "#/components/schemas/Error"}}}}


_ERRORS = {
    "400": _error_response("bad input: the message says what is allowed, `param` names the field"),
    "401": _error_response("a missing or wrong API key (with --api-key)"),
    "413": _error_response("the body is too large"),
    "500": _error_response("the model could not be loaded, or the request's first sentence failed"),
    "503": {**_error_response("the model is loading, or the server is full (see Retry-After)"),
            "headers": {"Retry-After": {"schema": {"type": "string"}}}},
}


def _errors(*codes: str) -> dict[str, Any]:
    return {code: _ERRORS[code] for code in codes}


def _absent_allowed(schema: dict[str, Any], empty: bool = False) -> dict[str, Any]:
    """An optional field: null (and, with `empty`, "") is taken as leaving it out."""
    return {"anyOf": [schema, {"type": "null"}, *([{"const": ""}] if empty else [])]}


def _option_schema(f: Any, aligned: bool) -> dict[str, Any]:  # noqa: ANN401
    """A request option's schema; word timestamps only true on a server with an aligner."""
    schema = {**f.schema, "description": f.help}
    if f.keyword == "word_timestamps" and not aligned:
        schema = {"const": False, "description": f.help}
    return schema


def _option_properties(config: Any, max_input: int, aligned: bool) -> dict[str, Any]:  # noqa: ANN401
    """The request options (hearth.options.FIELDS) by their JSON names: null (and "" for text) leaves
    one out; the language's choices are the checkpoint's."""
    out = {}
    for f in FIELDS:
        schema = _option_schema(f, aligned)
        if f.keyword == "language":
            schema["enum"] = list(config.languages)
            schema.pop("type", None)
        if f.keyword == "instruct":
            schema["maxLength"] = max_input
        out[f.json] = _absent_allowed(schema, empty=f.text)
    return out


# What a speech request's input must hold. JSON Schema's patterns are ECMA-262's, whose \w is ASCII: a
# letter or digit of any script is a Unicode property (the server's test: `sentences.is_speakable`,
# general category L or N).
SPEAKABLE_PATTERN = "[\\p{L}\\p{N}]"


def _speech_body(engine: Engine, max_input: int, aligned: bool) -> dict[str, Any]:
    config = engine.config
    kind = config.model_type
    names = sorted(set(engine.voices) | set(engine.voice_aliases)) if kind != "voice_design" else []
    voice_name: dict[str, Any] = {"type": "string", "minLength": 1}
    if kind == "custom_voice" and names:
        voice_name = {"type": "string", "enum": names}  # any case is taken; these are the names
    text = {"type": "string", "minLength": 1, "maxLength": max_input}
    properties: dict[str, Any] = {
        "model": {"description": "any name (any value): the server speaks with its one model"},
        "input": {**text, "pattern": SPEAKABLE_PATTERN, "description": "the text to speak (it must hold a letter or "
                  "digit, in any script); spoken sentence by sentence"},
        "voice": {"oneOf": [voice_name, {"type": "object", "properties": {"id": voice_name}, "required": ["id"]}],
                  "description": "a voice or an alias (GET /v1/audio/voices); ignored by VoiceDesign"},
        "response_format": _absent_allowed({"enum": list(FORMATS), "default": "mp3"}, empty=True),
        "stream_format": _absent_allowed({"enum": ["audio", "sse"], "default": "audio"}, empty=True),
        **_option_properties(config, max_input, aligned),
        "task_type": _absent_allowed({"enum": [config.kind]}),
    }
    required = ["input", "voice"] if kind != "voice_design" else ["input", "instructions"]
    if kind == "base":
        properties |= {
            "ref_audio": {"type": "string", "pattern": "^data:[^,]*;base64,",
                          "description": "a reference recording to clone inline, as a base64 data URL"},
            "ref_text": {"type": "string", "description": "what ref_audio says (in-context cloning)"},
            "x_vector_only_mode": {"type": "boolean"},
        }
    return {"type": "object", "properties": properties, "required": required}


def _websocket_messages(aligned: bool) -> dict[str, Any]:
    def message(kind: str, properties: dict[str, Any] | None = None, required: list[str] | None = None
                ) -> dict[str, Any]:
        return {"type": "object", "properties": {"type": {"const": kind}, **(properties or {})},
                "required": ["type", *(required or [])]}

    string, number, integer = {"type": "string"}, {"type": "number"}, {"type": "integer"}
    return {
        "WsSessionConfig": message("session.config", {
            "voice": string, "response_format": {"enum": ["pcm", "wav"]}, "model": string, "stream_format": string,
            **{f.json: _option_schema(f, aligned) for f in FIELDS}}),
        "WsInputText": message("input.text", {"text": string}, ["text"]),
        "WsInputDone": message("input.done"),
        "WsInputCancel": message("input.cancel"),
        "WsAudioStart": message("audio.start", {"sentence_index": integer, "sentence_text": string,
                                                "format": string, "sample_rate": integer, "realtime": number}),
        "WsAudioDone": message("audio.done", {"sentence_index": integer, "sentence_text": string}),
        "WsTimestamps": message("timestamps", sentence_words(), ["sentence_index", "words"]),
        "WsSessionDone": message("session.done", {"total_sentences": integer}),
        "WsSessionCancelled": message("session.cancelled", {"audio_s_sent": number, "text_consumed": string}),
        "WsError": message("error", {"message": string, "code": string}, ["message"]),
    }


def _speech_audio() -> dict[str, Any]:
    """The speech route's response content: each audio format, and the server-sent events."""
    binary = {"schema": {"type": "string", "format": "binary"}}
    audio: dict[str, Any] = {media: binary for media in MEDIA_TYPES.values()}
    usage = {"type": "object", "required": ["input_tokens", "output_tokens", "total_tokens"],
             "properties": {name: {"type": "integer", "minimum": 0}
                            for name in ("input_tokens", "output_tokens", "total_tokens")}}
    audio["text/event-stream"] = {  # each event (OpenAPI 3.1: `schema` is an event)
        "schema": {"type": "object", "required": ["data"], "properties": {"data": {
            "type": "string", "contentMediaType": "application/json", "contentSchema": {"oneOf": [
                {"type": "object", "required": ["type", "audio"], "properties": {
                    "type": {"const": "speech.audio.delta"}, "audio": {"type": "string", "contentEncoding": "base64"}}},
                {"type": "object", "required": ["type", "sentence_index", "words"], "properties": {
                    "type": {"const": "speech.audio.timestamps"}, **sentence_words()}},
                {"type": "object", "required": ["type", "usage"], "properties": {
                    "type": {"const": "speech.audio.done"}, "usage": usage}}]}}}},
        "description": "stream_format sse: speech.audio.delta events (the audio in response_format, base64), "
                       "with word_timestamps a speech.audio.timestamps event after each sentence, then "
                       "speech.audio.done with the usage (output_tokens: frames)"}
    return audio


def _model_lists(model_names: list[str]) -> dict[str, Any]:
    """The two model listings: Open WebUI's and OpenAI's."""
    return {
        "/v1/audio/models": {"get": {
            "summary": "Model names, in Open WebUI's shape",
            "responses": {"200": {"description": "models", "content": {_JSON: {"schema": {
                "type": "object", "required": ["models"], "properties": {"models": {"type": "array", "items": {
                    "type": "object", "required": ["id"], "properties": {"id": {"enum": model_names},
                                                                        "name": {"type": "string"}}}}}}}}}},
        }},
        "/v1/models": {"get": {
            "summary": "Model names, as OpenAI lists them",
            "responses": {"200": {"description": "models", "content": {_JSON: {"schema": {
                "type": "object", "required": ["object", "data"], "properties": {
                    "object": {"const": "list"}, "data": {"type": "array", "items": {
                        "type": "object", "required": ["id", "object"], "properties": {
                            "id": {"enum": model_names}, "object": {"const": "model"},
                            "owned_by": {"type": "string"}}}}}}}}},
                **_errors("401")},
        }},
    }


def document(engine: Engine, model_names: list[str], max_input: int, max_upload_mb: int,
             hearing: Any = None) -> dict[str, Any]:  # noqa: ANN401 - a `serve.hearing.Hearing`, or None
    """The OpenAPI document of a server running `engine` (and the listening models of `hearing`)."""
    audio = _speech_audio()
    speech_headers = {name: {"schema": {"type": "string"}}
                      for name in ("X-Hearth-Request", "X-Request-Id", "X-Hearth-Seed", "X-Hearth-Warning",
                                   "X-Hearth-Realtime")}
    voice_entry = {"type": "object", "required": ["id", "name"], "properties": {
        "id": {"type": "string"}, "name": {"type": "string"},
        "languages": {"type": "array", "items": {"type": "string"}}, "dialect": {"type": "string"},
        "alias_of": {"type": "string"}, "cloned": {"type": "string"}}}
    paths: dict[str, Any] = {
        "/v1/audio/speech": {"post": {
            "summary": "Speak a text (OpenAI's speech API, streamed)",
            "requestBody": {"required": True, "content": {_JSON: {"schema": {"$ref": "#/components/schemas/Speech"}}}},
            "responses": {"200": {"description": "the audio, sent as it is made", "content": audio,
                                  "headers": speech_headers},
                          **_errors("400", "401", "413", "500", "503")},
        }},
        "/v1/audio/voices": {"get": {
            "summary": "The voices and their aliases (stored voices only with the key)",
            "responses": {"200": {"description": "voices", "content": {_JSON: {"schema": {
                "type": "object", "required": ["voices", "uploaded_voices"], "properties": {
                    "voices": {"type": "array", "items": voice_entry},
                    "uploaded_voices": {"type": "array", "items": {"type": "object"}}}}}}},
                **_errors("500", "503")},
        }},
        **_model_lists(model_names),
        "/health": {"get": {
            "summary": "ok once the model is loaded",
            "responses": {status: {"description": text, "content": {_JSON: {"schema": {
                "type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}}}}}
                for status, text in (("200", "ready"), ("500", "loading failed"), ("503", "loading"))},
        }},
        "/metrics": {"get": {
            "summary": "Prometheus text format",
            "responses": {"200": {"description": "metrics", "content": {"text/plain": {"schema": {"type": "string"}}}}},
        }},
    }
    if engine.config.model_type == "base":  # (elsewhere they answer 405, saying a Base checkpoint is needed)
        _voice_store_routes(paths, max_upload_mb)
    aligned = hearing is not None and hearing.aligner is not None
    if hearing is not None and hearing.listener is not None:  # (elsewhere: 400, saying how to start with it)
        paths["/v1/audio/transcriptions"] = transcription_path(_errors("400", "401", "413", "500", "503"),
                                                               hearing.listener.languages, MAX_AUDIO_BYTES >> 20)
    if aligned:
        paths["/dev/captioned_speech"] = captioned_path(_errors("400", "401", "413", "500", "503"))
    return _finish(engine, paths, max_input, aligned)


def _voice_store_routes(paths: dict[str, Any], max_upload_mb: int) -> None:
    """A Base checkpoint's routes to upload and delete stored voices."""
    paths["/v1/audio/voices"]["post"] = {
        "summary": "Store a cloned voice (vLLM-Omni's upload; a Base checkpoint only, else 400)",
        "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
            "type": "object", "required": ["name", "audio_sample"], "properties": {
                "name": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"},
                "audio_sample": {"type": "string", "format": "binary",
                                 "description": f"WAV, FLAC or OGG, 3-10 s of speech, at most {max_upload_mb} MB"},
                "ref_text": {"type": "string"}, "consent": {"type": "string"},
                "x_vector_only_mode": {"type": "string", "enum": ["true", "false"]}}}}}},
        "responses": {"200": {"description": "stored", "content": {_JSON: {"schema": {"type": "object"}}}},
                      **_errors("400", "401", "413", "503")},
    }
    paths["/v1/audio/voices/{name}"] = {"delete": {
        "summary": "Delete a stored voice",
        "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "deleted", "content": {_JSON: {"schema": {"type": "object"}}}},
                      "404": _error_response("no such stored voice"), **_errors("400", "401", "503")},
    }}


def allowed(document: dict[str, Any]) -> dict[str, list[str]]:
    """The methods `document` gives each path (a route's template)."""
    return {path: sorted(method.upper() for method in operations) for path, operations in document["paths"].items()}


def _finish(engine: Engine, paths: dict[str, Any], max_input: int, aligned: bool) -> dict[str, Any]:
    schemas = {
        "Speech": _speech_body(engine, max_input, aligned),
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {
            "type": "object", "required": ["message", "type", "param", "code"], "properties": {
                "message": {"type": "string"}, "type": {"type": "string"},
                "param": {"type": ["string", "null"]}, "code": {"type": ["string", "null"]}}}}},
        **_websocket_messages(aligned),
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "Hearth", "version": "1", "description": "On-device speech: OpenAI's speech API, "
                 f"vLLM-Omni's extensions, a {engine.config.kind} checkpoint."},
        "paths": paths,
        "components": {"schemas": schemas},
        "x-websocket": {"/v1/audio/speech/stream": {
            "client": ["WsSessionConfig", "WsInputText", "WsInputDone", "WsInputCancel"],
            "server": ["WsAudioStart", "binary audio frames", "WsAudioDone", "WsTimestamps", "WsSessionDone",
                       "WsSessionCancelled", "WsError"]}},
    }
