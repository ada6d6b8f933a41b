"""Captions from timed words: cues of a few words (WebVTT, SubRip), each showing the text the
words stand for as it is written (punctuation and numbers kept), not the words' bare spelling.

A cue gathers words of one group (a sentence, a piece) until its text would pass `MAX_CHARS`
characters or it would last more than `MAX_SECONDS`; it runs from its first word's start to its
last word's end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Cue", "TimedSpan", "cues", "srt", "vtt"]

MAX_CHARS = 42  # a subtitle line's usual limit
MAX_SECONDS = 7.0


@dataclass(frozen=True)
class TimedSpan:
    """Characters [start, end) of a text, said from `t0` to `t1` seconds; `group` a sentence or piece."""

    start: int
    end: int
    t0: float
    t1: float
    group: int = 0


@dataclass(frozen=True)
class Cue:
    start: float
    end: float
    text: str


def _merged(spans: Sequence[TimedSpan]) -> list[TimedSpan]:
    """Words that stand for the same characters ("21.5 °C" said as five words) as one span."""
    out: list[TimedSpan] = []
    for s in spans:
        if out and (s.start, s.end, s.group) == (out[-1].start, out[-1].end, out[-1].group):
            out[-1] = TimedSpan(s.start, s.end, out[-1].t0, max(out[-1].t1, s.t1), s.group)
        else:
            out.append(s)
    return out


def cues(spans: Sequence[TimedSpan], text: str, max_chars: int = MAX_CHARS, max_seconds: float = MAX_SECONDS
         ) -> list[Cue]:
    """The cues of `spans` (in order) over `text`."""
    out: list[Cue] = []
    group: list[TimedSpan] = []

    def shown(items: list[TimedSpan]) -> str:
        end = max(s.end for s in items)
        while end < len(text) and not text[end].isspace() and not text[end].isalnum():
            end += 1  # the punctuation that closes the last word ("Berlin." "you?")
        return " ".join(text[items[0].start : end].split())

    def close() -> None:
        if group and (words := shown(group)):
            out.append(Cue(group[0].t0, max(group[-1].t1, group[0].t0), words))
        group.clear()

    for span in _merged(spans):
        if group and (span.group != group[0].group or len(shown([*group, span])) > max_chars
                      or span.t1 - group[0].t0 > max_seconds):
            close()
        group.append(span)
    close()
    return out


def _stamp(seconds: float, separator: str) -> str:
    ms = int(round(max(seconds, 0.0) * 1000))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{separator}{ms:03d}"


def vtt(items: Sequence[Cue]) -> str:
    """A WebVTT file."""
    blocks = [f"{_stamp(c.start, '.')} --> {_stamp(c.end, '.')}\n{c.text}" for c in items]
    return "WEBVTT\n\n" + "".join(b + "\n\n" for b in blocks)


def srt(items: Sequence[Cue]) -> str:
    """A SubRip file."""
    return "".join(f"{i}\n{_stamp(c.start, ',')} --> {_stamp(c.end, ',')}\n{c.text}\n\n"
                   for i, c in enumerate(items, 1))
