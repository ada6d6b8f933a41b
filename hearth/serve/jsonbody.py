"""JSON from clients, with its nesting bounded before it is parsed.

Python's parser recurses once per level of nesting: a body of a few hundred kilobytes of `[[[[...`
(well under any size limit) ends in a RecursionError deep inside it, which a server would answer
with a 500, or with a dropped connection. Every message the servers read (HTTP bodies, WebSocket
messages, Wyoming event headers and data) is measured first and refused, as bad input, when it
nests deeper than `MAX_DEPTH`; the check runs at C speed (regular expressions and numpy), so
it costs a well-formed message nothing worth measuring.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

__all__ = ["MAX_DEPTH", "TooDeep", "depth", "loads"]

MAX_DEPTH = 32  # every message of the protocols served nests at most 4 deep

_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)  # (possessive: linear on any input)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = np.zeros(256, dtype=np.int8)
_STEP[list(b"[{")] = 1
_STEP[list(b"]}")] = -1


class TooDeep(ValueError):
    """A JSON text nests deeper than allowed."""


def depth(raw: bytes | str) -> int:
    """How deep `raw`'s arrays and objects nest (brackets inside strings not counted). Exact for
    valid JSON; for anything else a bound that `json.loads` would not get past anyway."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") <= 1:
        return min(1, data.count(b"[") + data.count(b"{"))
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    return int(np.cumsum(_STEP[np.frombuffer(brackets, dtype=np.uint8)], dtype=np.int64).max())


def loads(raw: bytes | str, max_depth: int = MAX_DEPTH) -> Any:  # noqa: ANN401 - JSON
    """`json.loads`, refusing (TooDeep, a ValueError) a text that nests deeper than `max_depth`."""
    if depth(raw) > max_depth:
        raise TooDeep(f"the JSON nests deeper than {max_depth} levels; the messages this server takes nest at most 4")
    return json.loads(raw)
