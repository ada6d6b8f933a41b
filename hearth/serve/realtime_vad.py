"""server_vad on the realtime transcription WebSocket (`realtime`): the session's audio cut into
items by voice activity, one live transcription with `LiveOptions.vad` hearing all of it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

import numpy as np

from hearth.listen import LiveEvent
from hearth.runtime.request import Busy
from hearth.serve.live_text import LiveText
from hearth.serve.realtime_session import INPUT_RATE, Setup, error, new_id, settled

__all__ = ["Voiced"]

log = logging.getLogger("hearth.serve")


class Connection(Protocol):
    """What a `Voiced` uses of its connection (`realtime._Connection`)."""

    hearing: Any
    pool: Any
    session_id: str
    gone: bool
    previous: str | None  # the last item committed

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]: ...

    async def send(self, event: dict[str, Any]) -> None: ...


class Voiced:
    """With server_vad: one live transcription with voice activity (`LiveOptions.vad`) over the
    session's audio, fed as `_Item` feeds its own; each stretch of speech is an item, its events
    `speech_started`, deltas, `speech_stopped` with `committed`, then `completed`. Audio times count
    from the session's first audio."""

    def __init__(self, conn: Connection, setup: Setup, after: asyncio.Task[None] | None, start_ms: float):
        assert conn.hearing.listener is not None and setup.vad is not None
        self.conn = conn
        self.start_ms = start_ms  # the session's audio before this stream's
        self._session = conn.hearing.listener.live(setup.options, setup.vad, INPUT_RATE)
        self._waiting: list[np.ndarray] = []
        self._after = after
        self._running: asyncio.Task[None] | None = None
        self._turn = asyncio.Lock()  # one call into the live transcription at a time, its events sent in order
        self._items: dict[int, tuple[str, LiveText]] = {}  # segment -> its item's id and text
        self._lengths: dict[int, float] = {}  # segment -> its audio, at speech_stopped
        self._cleared = False
        self._committing = 0  # commits under way: the audio appended after one waits for it
        self.failed = False

    @property
    def dropped(self) -> bool:
        return self._cleared or self.failed or self.conn.gone

    @property
    def unheard(self) -> int:
        return sum(part.size for part in self._waiting)

    def feed(self, samples: np.ndarray) -> None:
        self._waiting.append(samples)
        if self._running is None or self._running.done():
            self._running = self.conn.spawn(self._follow())

    async def _follow(self) -> None:
        await settled(self._after)
        while self._waiting and not (self.dropped or self._committing):
            samples = np.concatenate(self._waiting)
            self._waiting = []
            try:
                await self._call(self._session.push, samples, True)
            except Busy:  # the server is full: the audio waits for the next append's turn
                self._waiting.insert(0, samples)
                return

    async def _call(self, fn: Callable[..., list[LiveEvent]], *args: Any) -> list[LiveEvent]:  # noqa: ANN401
        """`fn` in the session's turn at the model, its events sent (and returned); a failure ends
        the stream."""
        async with self._turn:
            if self.dropped:
                return []
            try:
                events = await self.conn.hearing.run(self.conn.pool, lambda: [] if self.dropped else fn(*args))
            except Busy:
                raise
            except Exception as e:  # noqa: BLE001 - this stream ends, said; the connection goes on
                log.exception("realtime session %s: voice activity transcription failed", self.conn.session_id)
                self.failed = True
                for item_id, _ in self._items.values():
                    await self._failed(item_id, e)
                await self.conn.send(error(f"transcribing the audio failed ({type(e).__name__}: {e}); the audio "
                                           "after this is heard afresh", "server_error", kind="server_error"))
                return []
            for event in events:
                await self._send(event)
            return events

    async def _finishing(self, fn: Callable[..., list[LiveEvent]], *args: Any) -> list[LiveEvent]:  # noqa: ANN401
        """A commit's or a close's call: where the server is too full to take it, the speech under
        way fails (said, as a manual commit's does) instead of waiting for a later append."""
        try:
            return await self._call(fn, *args)
        except Busy as e:
            for item_id, _ in self._items.values():
                await self._failed(item_id, e)
            self._items.clear()
            return []

    async def _failed(self, item_id: str, e: BaseException) -> None:
        await self.conn.send({"type": "conversation.item.input_audio_transcription.failed", "item_id": item_id,
                              "content_index": 0, "error": {"type": "server_error",
                                                            "code": "busy" if isinstance(e, Busy) else None,
                                                            "message": f"the transcription failed: {e}",
                                                            "param": None}})

    async def _send(self, e: LiveEvent) -> None:
        conn = self.conn
        if e.kind == "speech_started":
            self._items[e.segment] = (new_id("item"), LiveText())
            await conn.send({"type": "input_audio_buffer.speech_started", "item_id": self._items[e.segment][0],
                             "audio_start_ms": round(self.start_ms + e.offset * 1000)})
            return
        item_id, text = self._items[e.segment]
        if e.kind == "speech_stopped":
            self._lengths[e.segment] = e.audio_s
            await conn.send({"type": "input_audio_buffer.speech_stopped", "item_id": item_id,
                             "audio_end_ms": round(self.start_ms + (e.offset + e.audio_s) * 1000)})
            await conn.send({"type": "input_audio_buffer.committed", "item_id": item_id,
                             "previous_item_id": conn.previous})
            conn.previous = item_id
            return
        piece = text.update(e)
        if piece:
            await conn.send({"type": "conversation.item.input_audio_transcription.delta", "item_id": item_id,
                             "content_index": 0, "delta": piece})
        if e.kind == "final":
            del self._items[e.segment]
            seconds = self._lengths.pop(e.segment, e.audio_s)
            await conn.send({"type": "conversation.item.input_audio_transcription.completed", "item_id": item_id,
                             "content_index": 0, "transcript": text.closed,
                             "usage": {"type": "duration", "seconds": round(seconds, 3)}})

    def commit(self) -> None:
        """The client's commit, taken where it came: the audio appended before it is heard and the
        speech under way ends there, in one turn at the model (an error where no speech was under
        way, as for an empty buffer); audio appended after it waits for it."""
        before, self._waiting = self._waiting, []
        self._committing += 1
        self.conn.spawn(self._commit(before))

    async def _commit(self, before: list[np.ndarray]) -> None:
        try:
            await settled(self._running)  # (an update under way ends first; the loop stops after it)
            audio = np.concatenate(before) if before else np.zeros(0, np.int16)
            events = await self._finishing(
                lambda: (self._session.push(audio) if audio.size else []) + self._session.end_speech())
            if not any(e.kind == "speech_stopped" for e in events) and not self.dropped:
                await self.conn.send(error("Error committing input audio buffer: no speech is under way (with "
                                           "server_vad each pause commits the speech before it)",
                                           "input_audio_buffer_commit_empty"))
        finally:
            self._committing -= 1
            if self._waiting and not self._committing and (self._running is None or self._running.done()):
                self._running = self.conn.spawn(self._follow())

    async def close(self) -> None:
        """Turn detection switched off (or changed): the rest heard, the speech under way finished."""
        await settled(self._running)
        rest = np.concatenate(self._waiting) if self._waiting else np.zeros(0, np.int16)
        self._waiting = []
        await self._finishing(lambda: (self._session.push(rest) if rest.size else []) + self._session.finish())

    def clear(self) -> None:
        self._cleared = True  # (an update running now ends in its time, unsent)
