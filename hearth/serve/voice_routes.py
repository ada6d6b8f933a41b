"""`hearth serve`'s voice endpoints: list, upload (clone) and delete voices, as vLLM-Omni names them.

    GET    /v1/audio/voices          the voices, built-in or stored for this checkpoint
    POST   /v1/audio/voices          multipart: name, audio_sample (a file), ref_text (its transcript)
    DELETE /v1/audio/voices/{name}

An upload clones the voice once (speaker embedding, and with a transcript the reference's codes)
and stores it as a profile, the same as `hearth voice add`: from then on it is a voice name like
any other, here, in `hearth say` and in `hearth wyoming`. vLLM-Omni's limits hold: a file of at
most 10 MB, names unique (case does not count), and without a transcript the clone is made from
the speaker embedding alone, as vLLM-Omni does for uploads. Uploads run one at a time, off the
event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from hearth.engine import Engine
from hearth.errors import InputError
from hearth.serve.server_state import ServerState, bad_request, error, state_of
from hearth.voices.cloning import VoiceStore, read_reference

__all__ = ["MAX_UPLOAD_BYTES", "add_voice_routes"]

log = logging.getLogger("hearth.serve")

MAX_UPLOAD_BYTES = 10 * 1024 * 1024  # vLLM-Omni's limit on the audio file
_FORM_OVERHEAD = 64 * 1024  # the other fields and the multipart framing
_USAGE = ("send multipart/form-data with the fields name, audio_sample (the reference recording) and ref_text (what "
          "it says), e.g. curl -F name=me -F audio_sample=@ref.wav -F 'ref_text=Hello there.' "
          "http://HOST/v1/audio/voices")


def _truthy(value: Any, field: str) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0", "no", "off"):
        return False
    raise InputError(f"{field} must be true or false, got {value!r}")


def _prime(engine: Engine, name: str) -> None:
    try:
        engine.prime_voice(name)
    except Exception:  # noqa: BLE001 - the voice's first request primes it instead
        log.exception("priming the vocoder for voice %r failed", name)


def voice_entries(engine: Engine) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """GET /v1/audio/voices's two lists: every voice as {id, name, languages, ...} (Open WebUI reads
    these), then each alias as {id, name, alias_of, ...}; and the stored voices as vLLM-Omni
    describes uploads."""
    listed, uploaded = _voice_entries(engine)
    by_id = {entry["id"]: entry for entry in listed}
    for alias, target in sorted(engine.voice_aliases.items()):
        voice = by_id.get(target)
        if voice is not None and alias not in by_id:
            listed.append({**voice, "id": alias, "name": f"{alias} ({voice['name']})", "alias_of": target})
    return listed, uploaded


def _voice_entries(engine: Engine) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    languages = [lang for lang in engine.languages if lang != "auto"]
    if engine.config.model_type != "base":
        dialects = engine.config.talker.speaker_dialects
        listed = []
        for v in engine.voices:
            entry: dict[str, Any] = {"id": v, "name": v.replace("_", " ").title(), "languages": languages}
            if dialects.get(v):
                entry["dialect"] = dialects[v]
            listed.append(entry)
        return listed, []
    listed, uploaded = [], []
    store = engine.cloner.store
    for name in engine.voices:
        try:
            profile = store.load(name)
        except InputError:  # removed or damaged since it was listed
            continue
        mode = "in-context" if profile.voice.in_context else "x-vector"
        listed.append({"id": name, "name": name, "languages": languages, "cloned": mode})
        uploaded.append({"name": name, "consent": profile.consent or "", "created_at": profile.created_at,
                         "ref_text": profile.transcript or "", "mode": mode,
                         "reference_s": round(profile.reference_s, 3)})
    return listed, uploaded


def add_voice_routes(app: FastAPI) -> None:
    """The voice routes on `app` (whose state is a `ServerState`)."""
    app.add_api_route("/v1/audio/voices", _voices, methods=["GET"])
    app.add_api_route("/v1/audio/voices", _upload, methods=["POST"])
    app.add_api_route("/v1/audio/voices/{name}", _delete, methods=["DELETE"])


def _base(engine: Engine, what: str) -> None:
    # 405: the method is not allowed on this server's resource (its OpenAPI document lists
    # these routes on Base servers only), with what to do instead.
    if engine.config.model_type != "base":
        voices = ", ".join(engine.voices) or "described in the instructions"
        raise error(405, f"{what} needs a Base checkpoint (e.g. Qwen/Qwen3-TTS-12Hz-0.6B-Base); this server "
                         f"runs a {engine.config.kind} one, whose voices are: {voices}")


async def _voices(http: Request) -> JSONResponse:
    # Open WebUI lists voices without its key. Without the key the answer holds what anyone who
    # reaches the server could learn from the model's card: the built-in voices and their
    # aliases. Stored (cloned) voices are the user's own: listed only with the key.
    state = state_of(http)
    engine, _ = state.loaded()
    listed, uploaded = await state.run(voice_entries, engine)
    if not state.key_ok(http):
        listed, uploaded = [entry for entry in listed if "cloned" not in entry], []
    return JSONResponse({"voices": listed, "uploaded_voices": uploaded})


def _too_large() -> Exception:
    return error(413, f"the upload is over the {MAX_UPLOAD_BYTES // (1 << 20)} MB limit for a reference "
                      "recording; 3 to 10 s of speech is enough")


async def _limited(stream: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
    total = 0
    async for piece in stream:
        total += len(piece)
        if total > MAX_UPLOAD_BYTES + _FORM_OVERHEAD:
            raise _too_large()
        yield piece


async def _upload(http: Request) -> JSONResponse:
    state = state_of(http)
    state.authorize(http)
    engine, _ = state.loaded()
    _base(engine, "uploading a voice")
    if not http.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise bad_request(_USAGE)
    length = http.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_UPLOAD_BYTES + _FORM_OVERHEAD:
        raise _too_large()
    try:
        form = await MultiPartParser(http.headers, _limited(http.stream()), max_files=2, max_fields=16,
                                     max_part_size=_FORM_OVERHEAD).parse()
    except MultiPartException as e:
        raise bad_request(f"the form cannot be read ({e.message}); {_USAGE}") from None
    try:
        return await _clone_upload(state, engine, form)
    finally:
        await form.close()


def _form_fields(form: Any) -> tuple[str, UploadFile, str | None, str | None, bool]:  # noqa: ANN401
    """The upload's name, file, transcript, consent and mode, checked."""
    name, file = form.get("name"), form.get("audio_sample") or form.get("audio")
    text, consent = form.get("ref_text") or form.get("text"), form.get("consent")
    if not isinstance(name, str) or not name.strip():
        raise bad_request(f"name is missing: {_USAGE}", "name")
    if not isinstance(file, UploadFile):
        raise bad_request(f"audio_sample is missing or not a file: {_USAGE}", "audio_sample")
    if text is not None and not isinstance(text, str) or not isinstance(consent, str | None):
        raise bad_request("ref_text and consent must be text fields, not files", "ref_text")
    try:
        name = VoiceStore.check_name(name)
        x_vector_only = _truthy(form.get("x_vector_only_mode") or form.get("x_vector_only"), "x_vector_only_mode")
    except InputError as e:
        raise bad_request(str(e), "name") from None
    text = text.strip() if text else None
    if x_vector_only is None:
        x_vector_only = not text  # no transcript: the speaker embedding alone, as vLLM-Omni's uploads
    return name, file, text, consent, x_vector_only


async def _clone_upload(state: ServerState, engine: Engine, form: Any) -> JSONResponse:  # noqa: ANN401
    name, file, text, consent, x_vector_only = _form_fields(form)
    data = await file.read()
    if len(data) > MAX_UPLOAD_BYTES:
        raise _too_large()
    if not data:
        raise bad_request("audio_sample is empty", "audio_sample")
    async with state.uploading:  # one at a time: each runs two encoders on the CPU
        store = engine.cloner.store
        if store.path(name).exists():
            other = "" if name in engine.voices else " (made with another checkpoint)"
            raise bad_request(f"Voice '{name}' already exists{other}; delete it first (DELETE /v1/audio/voices/"
                              f"{name}) or choose another name", "name")

        def clone() -> Any:  # noqa: ANN401 - a VoiceProfile
            samples, rate = read_reference(data)
            return engine.add_voice(name, samples, rate, text, x_vector_only=x_vector_only, consent=consent)

        try:
            profile = await state.run(clone)
        except InputError as e:
            raise bad_request(str(e), "audio_sample" if "audio" in str(e) else "ref_text") from None
    if profile.voice.in_context:  # its reference decoded now, not on its first request
        state.priming.add(asyncio.create_task(state.run(_prime, engine, profile.name)))
        for task in [t for t in state.priming if t.done()]:
            state.priming.discard(task)
    voice = {"name": profile.name, "consent": profile.consent or "", "created_at": profile.created_at,
             "mime_type": file.content_type or "application/octet-stream", "file_size": len(data),
             "ref_text": profile.transcript or "", "mode": "x-vector" if x_vector_only else "in-context",
             "reference_s": round(profile.reference_s, 3)}
    return JSONResponse({"success": True, "voice": voice})


async def _delete(name: str, http: Request) -> JSONResponse:
    state = state_of(http)
    state.authorize(http)
    engine, _ = state.loaded()
    _base(engine, "deleting a voice")
    key = name.strip().lower()
    async with state.uploading:
        if key not in await state.run(lambda: engine.voices):
            raise error(404, f"Voice '{name}' not found; the stored voices: {', '.join(engine.voices) or 'none'}",
                        "name")
        await state.run(engine.cloner.store.remove, key)
    return JSONResponse({"success": True, "message": f"Voice '{name}' deleted successfully"})
