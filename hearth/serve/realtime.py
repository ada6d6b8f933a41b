"""`hearth serve`'s WebSocket `/v1/realtime?intent=transcription`: OpenAI's realtime transcription
over the server's Qwen3-ASR, the text following the audio as it comes.

The events are OpenAI's (the openai SDK's `openai.types.realtime`, and the older forms of
`openai.types.beta.realtime`); every server event has an `event_id`:

    server: session.created {session}                                          (at once)
    client: session.update {session: {type: "transcription", audio: {input: {format: {type:
              "audio/pcm", rate: 24000}, transcription: {model, language, prompt}, turn_detection:
              null or {type: "server_vad", threshold, prefix_padding_ms, silence_duration_ms},
              noise_reduction}}}}                         -> session.updated {session}
            transcription_session.update {session: {input_audio_format: "pcm16",
              input_audio_transcription: {model, language, prompt}, turn_detection}}
                                                          -> transcription_session.updated {session}
            input_audio_buffer.append {audio: base64 of 16-bit PCM, 24 kHz, mono}
                 -> conversation.item.input_audio_transcription.delta {item_id, content_index, delta}
            input_audio_buffer.commit -> input_audio_buffer.committed {item_id, previous_item_id},
                 the last deltas, conversation.item.input_audio_transcription.completed {item_id,
                 content_index, transcript, usage}   (or ....failed {item_id, error})
            input_audio_buffer.clear  -> input_audio_buffer.cleared
    server: error {error: {type, code, message, param, event_id}}: the event was refused, and the
            connection goes on (a connection refused, for its key, its intent or a server without
            a listening model, gets one `error` and is closed)

The buffer's audio is heard while it comes: a live transcription (`hearth.listen.live`, the
defaults: an update every 2 s of audio) is fed off the event loop one update at a time, in its turn
at the model (`Hearing.run`), as Wyoming's streaming transcripts are (`wyoming_asr.LiveChunks`):
audio that comes meanwhile waits, and of the chunks it completes only the last is heard. Deltas
carry kept text only (`live_text`), so they are never taken back. At the commit the rest is heard
and the live transcription finishes: its final text is the transcript, which the deltas joined
spell whenever it goes on from them. The next append starts a new item, heard afresh, whose events
follow the last item's. A `session.update` applies from the next item (an item's options are fixed at
its first audio). `language` is a code ("en")
or a name, `prompt` the model's context.

With `server_vad` the server cuts the audio into items itself (`realtime_vad.Voiced`): one live
transcription with voice activity (`LiveOptions.vad`: Silero VAD, OpenAI's defaults threshold
0.5, prefix_padding_ms 300, silence_duration_ms 500) hears the session's audio, and each stretch of
speech is an item: `input_audio_buffer.speech_started {item_id, audio_start_ms}` (the padding
included), deltas, then after silence_duration_ms of quiet `input_audio_buffer.speech_stopped
{item_id, audio_end_ms}` (the quiet included), `committed`, the last delta and `completed`. The
final was heard 96 ms into the quiet, so it comes about silence_duration_ms after the last word.
Silence is never transcribed. A commit ends the speech under way (an error when none is); a clear
drops it unsent; turning turn detection off or changing it finishes the speech under way first.
Not here: `semantic_vad` (an error, the session unchanged), G.711 audio, logprobs;
`create_response` and `interrupt_response` are taken and mean nothing here (no responses);
`noise_reduction` is taken and not applied (the session says null).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from fastapi import WebSocket, WebSocketDisconnect

from hearth.errors import InputError
from hearth.listen import ListenOptions, LiveEvent, LiveOptions
from hearth.runtime.request import Busy
from hearth.serve import jsonbody
from hearth.serve.hearing import Hearing, not_loaded
from hearth.serve.live_text import LiveText
from hearth.serve.realtime_session import INPUT_RATE, Refused, Setup, beta_setup, error, ga_setup, new_id, settled
from hearth.serve.realtime_vad import Voiced

__all__ = ["INPUT_RATE", "MAX_BUFFER_SECONDS", "realtime_transcription"]

log = logging.getLogger("hearth.serve")

MAX_BUFFER_SECONDS = 1800.0  # one item's audio, as one Wyoming exchange's
MIN_COMMIT_SECONDS = 0.1  # OpenAI's: "Expected at least 100ms of audio"
_CLIENT_EVENTS = ("session.update", "transcription_session.update", "input_audio_buffer.append",
                  "input_audio_buffer.commit", "input_audio_buffer.clear")


# -- an item: one input audio buffer, heard while it comes ---------------------------------------

class _Item:
    """One input audio buffer: its audio heard by a live transcription as it comes (see the module),
    then, committed, finished into its transcript; or cleared, and nothing more heard or sent."""

    def __init__(self, conn: _Connection, options: ListenOptions, after: asyncio.Task[None] | None):
        assert conn.hearing.listener is not None
        self.conn = conn
        self.id = new_id("item")
        self.samples = 0  # appended, at INPUT_RATE
        self._session = conn.hearing.listener.live(options, LiveOptions(), INPUT_RATE)
        self._text = LiveText()
        self._waiting: list[np.ndarray] = []  # int16 audio not yet given to the live transcription
        self._after = after  # the last item's transcription: this item's events come after its
        self._running: asyncio.Task[None] | None = None
        self._committed = False  # no update starts after the commit but the last
        self._cleared = False
        self._failure: BaseException | None = None
        self._heard = 0  # updates heard

    @property
    def dropped(self) -> bool:
        return self._cleared or self.conn.gone

    @property
    def unheard(self) -> int:
        return sum(part.size for part in self._waiting)

    def feed(self, samples: np.ndarray) -> None:
        self._waiting.append(samples)
        self.samples += samples.size
        if self._running is None or self._running.done():
            self._running = self.conn.spawn(self._follow())

    async def _follow(self) -> None:
        await settled(self._after)
        while self._waiting and not (self._committed or self.dropped or self._failure):
            samples = np.concatenate(self._waiting)
            self._waiting = []
            try:
                events = await self._hear(self._session.push, samples, True)
            except Busy:  # the server is full: the audio waits for the next append's turn, or the commit's
                self._waiting.insert(0, samples)
                return
            except Exception as e:  # noqa: BLE001 - the item fails (said at its commit), the connection goes on
                log.exception("realtime item %s: an update failed", self.id)
                self._failure = e
                return
            await self._deltas(events)

    async def _hear(self, fn: Callable[..., list[LiveEvent]], *args: Any) -> list[LiveEvent]:  # noqa: ANN401
        def unless_dropped() -> list[LiveEvent]:  # (a turn that comes after the client left does nothing)
            return [] if self.dropped else fn(*args)

        if self.dropped:
            return []
        return await self.conn.hearing.run(self.conn.pool, unless_dropped)

    async def _deltas(self, events: list[LiveEvent]) -> None:
        for event in events:
            self._heard += event.kind == "partial"
            piece = self._text.update(event)
            if piece and not self.dropped:
                await self.conn.send({"type": "conversation.item.input_audio_transcription.delta",
                                      "item_id": self.id, "content_index": 0, "delta": piece})

    def clear(self) -> None:
        self._cleared = True  # (an update running now ends in its time, unheard)

    def commit(self) -> asyncio.Task[None]:
        self._committed = True
        return self.conn.spawn(self._transcribe())

    def _finish(self, rest: np.ndarray) -> list[LiveEvent]:
        return (self._session.push(rest, True) if rest.size else []) + self._session.finish()

    async def _transcribe(self) -> None:
        """After the commit: the rest heard, the live transcription's final, the last delta, `completed`."""
        t0 = time.monotonic()
        await settled(self._after)
        await settled(self._running)
        rest = np.concatenate(self._waiting) if self._waiting else np.zeros(0, np.int16)
        self._waiting = []
        self.conn.behind.discard(self)  # (its audio is no longer waiting)
        try:
            if self._failure is not None:
                raise self._failure
            events = await self._hear(self._finish, rest)
        except Exception as e:  # noqa: BLE001 - the item fails, the connection goes on
            if not isinstance(e, (Busy, InputError)):
                log.exception("realtime item %s: its transcription failed", self.id)
            await self.conn.send({"type": "conversation.item.input_audio_transcription.failed", "item_id": self.id,
                                  "content_index": 0,
                                  "error": {"type": "server_error", "code": "busy" if isinstance(e, Busy) else None,
                                            "message": f"the transcription failed: {e}", "param": None}})
            return
        if self.dropped:
            return
        await self._deltas(events)
        await self.conn.send({"type": "conversation.item.input_audio_transcription.completed", "item_id": self.id,
                              "content_index": 0, "transcript": self._text.closed,
                              "usage": {"type": "duration", "seconds": round(self.samples / INPUT_RATE, 3)}})
        chunks = int(self.samples / INPUT_RATE / self._session.live.chunk_s)
        log.info("realtime item %s: %.1f s of audio, %d of its %d updates heard, transcribed %.2f s after the "
                 "commit", self.id, self.samples / INPUT_RATE, self._heard, chunks, time.monotonic() - t0)


# -- the connection -------------------------------------------------------------------------------

class _Connection:
    """One client's session: its setup, the item being appended to, the tasks hearing its items."""

    def __init__(self, ws: WebSocket, hearing: Hearing, pool: Any):  # noqa: ANN401
        self.ws, self.hearing, self.pool = ws, hearing, pool
        self.session_id = new_id("sess")
        self.setup = Setup()
        self.item: _Item | None = None  # the buffer being appended to
        self.voiced: Voiced | None = None  # with server_vad: the audio's live transcription
        self.appended = 0  # samples of the session's audio, at INPUT_RATE
        self.previous: str | None = None  # the last item committed
        self.last: asyncio.Task[None] | None = None  # its transcription
        self.behind: set[_Item] = set()  # the items committed and not yet transcribed
        self.tasks: set[asyncio.Task[None]] = set()
        self.gone = False
        self._odd = b""  # a byte of a sample split between two appends

    def spawn(self, work: Any) -> asyncio.Task[None]:  # noqa: ANN401 - a coroutine
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def send(self, event: dict[str, Any]) -> None:
        if self.gone:
            return
        try:
            await self.ws.send_json({"type": event["type"], "event_id": new_id("event"), **event})
        except (WebSocketDisconnect, RuntimeError, OSError):  # the client went away mid-send
            self.gone = True

    async def idle(self, seconds: float) -> None:
        """No event for `seconds`: the speech under way (server_vad) finished and sent, then an
        `error` that says why, and the close (1000: the session ended, nothing went wrong)."""
        if self.voiced is not None:
            await self.voiced.close()
        await self.send(error(f"the session sent nothing for {seconds:g} s and has been closed (the server's "
                              "--idle-timeout); connect again to go on", "session_idle_timeout"))
        log.info("realtime session %s: idle for %g s, closed", self.session_id, seconds)
        with contextlib.suppress(RuntimeError, OSError):  # (the client may be gone by now)
            await self.ws.close(code=1000)

    async def close(self) -> None:
        """The client went away: nothing more is heard; an update running now is awaited."""
        self.gone = True
        if self.tasks:
            running = len(self.tasks)
            await asyncio.wait(list(self.tasks))
            log.info("realtime session %s: the client went away; its %d task(s) have ended", self.session_id,
                     running)

    async def handle(self, text: str | None) -> None:
        """One client event, answered (an `error` for one refused)."""
        event_id = None
        try:
            event = _parse(text)
            event_id = event.get("event_id") if isinstance(event.get("event_id"), str) else None
            await self._dispatch(event)
        except Refused as e:
            await self.send(error(e.message, e.code, e.param, event_id))
        except Exception as e:  # noqa: BLE001 - a bug met by one event is said, the connection goes on
            log.exception("realtime: handling an event failed")
            await self.send(error(f"the server failed handling this event ({type(e).__name__}: {e})",
                                  "server_error", event_id=event_id, kind="server_error"))

    async def _dispatch(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        languages = self.hearing.listener.languages if self.hearing.listener is not None else ()
        if kind == "session.update":
            self._set(ga_setup(event.get("session"), self.setup, languages))
            await self.send({"type": "session.updated", "session": self.setup.ga(self.session_id)})
        elif kind == "transcription_session.update":
            self._set(beta_setup(event.get("session"), self.setup, languages))
            await self.send({"type": "transcription_session.updated", "session": self.setup.beta(self.session_id)})
        elif kind == "input_audio_buffer.append":
            self._append(event.get("audio"))
        elif kind == "input_audio_buffer.commit":
            await self._commit()
        elif kind == "input_audio_buffer.clear":
            if self.item is not None:
                self.item.clear()
            if self.voiced is not None:
                self.voiced.clear()
            self.item, self.voiced, self._odd = None, None, b""
            await self.send({"type": "input_audio_buffer.cleared"})
        else:
            raise Refused(f"unknown event type {kind!r}: this server transcribes only, and takes "
                          f"{', '.join(_CLIENT_EVENTS)}", param="type")

    def _set(self, setup: Setup) -> None:
        """A new setup: with turn detection changed, the audio's live transcription so far is finished
        (its speech under way transcribed) and the next audio starts another, or none."""
        if self.voiced is not None and setup.vad != self.setup.vad:
            self.last = self.spawn(self.voiced.close())
            self.voiced = None
        self.setup = setup

    def _append(self, audio: Any) -> None:  # noqa: ANN401 - JSON
        if not isinstance(audio, str):
            raise Refused("input_audio_buffer.append needs \"audio\": base64 of 16-bit PCM at 24 kHz, mono",
                          "missing_required_parameter", "audio")
        try:
            data = self._odd + base64.b64decode(audio, validate=True)
        except (binascii.Error, ValueError):
            raise Refused("input_audio_buffer.append: \"audio\" is not base64", param="audio") from None
        n = len(data) // 2
        held = self.item.samples if self.item is not None else 0
        if held + n > MAX_BUFFER_SECONDS * INPUT_RATE:
            raise Refused(f"the input audio buffer holds at most {MAX_BUFFER_SECONDS / 60:.0f} minutes of audio: "
                          "commit it (or clear it), then append", "input_audio_buffer_too_large", "audio")
        behind = sum(i.unheard for i in self.behind) + (self.voiced.unheard if self.voiced is not None else 0)
        if behind + n > MAX_BUFFER_SECONDS * INPUT_RATE:  # (memory: one buffer's)
            raise Refused(f"the server is {MAX_BUFFER_SECONDS / 60:.0f} minutes of audio behind this session: wait "
                          "for the transcripts of the items committed, then append", "input_audio_buffer_too_large",
                          "audio")
        self._odd = data[2 * n :]
        if not n:
            return
        samples = np.frombuffer(data[: 2 * n], "<i2")
        if self.item is None and self.setup.vad is not None:  # (a buffer begun before keeps its audio)
            if self.voiced is None or self.voiced.dropped:
                self.voiced = Voiced(self, self.setup, self.last, self.appended / INPUT_RATE * 1000)
            self.voiced.feed(samples)
        else:
            if self.item is None:
                self.item = _Item(self, self.setup.options, self.last)
            self.item.feed(samples)
        self.appended += n

    async def _commit(self) -> None:
        if self.item is None and self.voiced is not None:  # server_vad: the speech under way ends now
            self.voiced.commit()
            return
        item = self.item
        held = item.samples if item is not None else 0
        if item is None or held < MIN_COMMIT_SECONDS * INPUT_RATE:
            raise Refused("Error committing input audio buffer: buffer too small. Expected at least 100ms of "
                          f"audio, but buffer only has {held / INPUT_RATE * 1000:.2f}ms of audio.",
                          "input_audio_buffer_commit_empty")
        self.item, self._odd = None, b""
        await self.send({"type": "input_audio_buffer.committed", "item_id": item.id,
                         "previous_item_id": self.previous})
        self.behind.add(item)
        self.previous, self.last = item.id, item.commit()


def _parse(text: str | None) -> dict[str, Any]:
    if text is None:
        raise Refused("send JSON text messages; audio goes base64 in input_audio_buffer.append", "invalid_json")
    try:
        event = jsonbody.loads(text)
    except jsonbody.TooDeep as e:
        raise Refused(str(e), "invalid_json") from None
    except ValueError:
        raise Refused("an event is not valid JSON; send objects such as {\"type\": \"input_audio_buffer.commit\"}",
                      "invalid_json") from None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise Refused("each event must be a JSON object with a \"type\"", "missing_required_parameter", "type")
    return event


def _refusal(ws: WebSocket, state: Any, api_key_ok: bool) -> tuple[dict[str, Any], int] | None:  # noqa: ANN401
    """The error event and close code of a connection that is refused, or None."""
    if not api_key_ok:
        return error("a valid API key is required: send 'Authorization: Bearer <key>' (or ?api_key=<key> from a "
                     "browser)", "invalid_api_key"), 1008
    intent, model = ws.query_params.get("intent"), ws.query_params.get("model")
    if intent != "transcription":
        given = f"intent={intent!r}" if intent else f"model={model!r}" if model else "no intent"
        return error(f"this server transcribes only: connect to /v1/realtime?intent=transcription (got {given}); "
                     "realtime conversations are not served here", "invalid_intent", "intent"), 1008
    if state.error is not None:
        return error(f"the model could not be loaded: {state.error}", "server_error", kind="server_error"), 1011
    if state.engine is None:
        return error("the model is still loading; try again in a few seconds", "loading", kind="server_error"), 1013
    if state.hearing is None or state.hearing.listener is None:
        return error(not_loaded("listen"), "model_not_loaded", "model"), 1008
    return None


async def realtime_transcription(ws: WebSocket, state: Any, api_key_ok: bool) -> None:  # noqa: ANN401
    """Serve one WebSocket connection until the client closes it."""
    offered = ws.scope.get("subprotocols") or []
    await ws.accept(subprotocol="realtime" if "realtime" in offered else None)  # (a browser offers "realtime")
    refused = _refusal(ws, state, api_key_ok)
    if refused is not None:
        event, code = refused
        await ws.send_json({"type": "error", "event_id": new_id("event"), **event})
        await ws.close(code=code)
        return
    conn = _Connection(ws, state.hearing, state.pool)
    await conn.send({"type": "session.created", "session": conn.setup.ga(conn.session_id)})
    try:
        while True:
            try:
                message = await asyncio.wait_for(ws.receive(), state.idle_s)
            except TimeoutError:
                await conn.idle(state.idle_s)
                return
            if message["type"] == "websocket.disconnect":
                return
            await conn.handle(message.get("text"))
    except WebSocketDisconnect:
        pass
    finally:
        await conn.close()
