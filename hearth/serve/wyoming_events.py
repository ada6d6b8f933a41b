"""Reading Wyoming events off a connection, defensively: a malformed or oversized event is
reported (`Malformed`) and skipped where the stream can be read on, never trusted."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from wyoming.event import Event

from hearth.serve import jsonbody

__all__ = ["MAX_BODY", "MAX_HEADER", "Malformed", "read_event"]

MAX_HEADER = 64 * 1024  # bytes in an event's JSON line
MAX_BODY = 1024 * 1024  # bytes of an event's extra data or payload


@dataclass(frozen=True)
class Malformed:
    """A line that is not an event: what is wrong, and whether the stream can be read further."""

    message: str
    fatal: bool  # the stream cannot be read further (lengths unknown)


async def read_event(reader: asyncio.StreamReader) -> Event | Malformed | None:
    """The next event; None at the end of the stream."""
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial.strip():
            return None
        line = e.partial
    except asyncio.LimitOverrunError as e:
        consumed = e.consumed
        while True:  # skip the rest of the line; the next one may be a good event
            try:
                await reader.readexactly(consumed)
                await reader.readuntil(b"\n")
                break
            except asyncio.LimitOverrunError as more:
                consumed = more.consumed
            except asyncio.IncompleteReadError:
                return None
        return Malformed(f"an event header is longer than {MAX_HEADER} bytes", fatal=False)
    if not line.strip():
        return Malformed("an empty line is not an event", fatal=False)
    try:
        header = jsonbody.loads(line)
    except jsonbody.TooDeep as e:
        return Malformed(str(e), fatal=False)
    except ValueError:
        return Malformed("malformed JSON: each event is one JSON object on one line", fatal=False)
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        return Malformed('an event is a JSON object with a string "type"', fatal=False)
    lengths = []
    for name in ("data_length", "payload_length"):
        n = header.get(name) or 0
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_BODY:
            return Malformed(f"{name} must be a whole number from 0 to {MAX_BODY}", fatal=True)
        lengths.append(n)
    data = header.get("data") or {}
    if not isinstance(data, dict):
        return Malformed('"data" must be a JSON object', fatal=lengths == [0, 0])
    try:
        if lengths[0]:
            extra = jsonbody.loads(await reader.readexactly(lengths[0]))
            if not isinstance(extra, dict):
                return Malformed("an event's extra data must be a JSON object", fatal=False)
            data = {**data, **extra}
        payload = await reader.readexactly(lengths[1]) if lengths[1] else None
    except asyncio.IncompleteReadError:
        return None
    except jsonbody.TooDeep as e:
        return Malformed(f"an event's extra data: {e}", fatal=False)
    except ValueError:
        return Malformed("an event's extra data is not valid JSON", fatal=False)
    return Event(type=header["type"], data=data, payload=payload)
