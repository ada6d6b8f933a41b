"""Word timestamps of Hearth's own speech: what a request's consumer receives, and where each word
stands in the request's own text.

A request asked with `word_timestamps` has each sentence aligned once its audio is out
(`hearth.runtime.word_timer`): the sentence's audio against the sentence as it was spoken. The
aligner's units (words; each CJK character) are then found, in order, in the spoken text of the
request's part they belong to, and the span map (`hearth.text.normalize.spans`) carries them back
to the characters of the request's text they came from: "21.5 °C" spoken as "twenty-one point five
degrees Celsius" gives five words that all point at "21.5 °C". Times count from the start of the
request's audio (a pause before a sentence and its speed included). Nothing is estimated: every
time is the aligner's.
"""

from __future__ import annotations

from dataclasses import dataclass

from hearth.listen.placing import UnitPlacer
from hearth.text.normalize.spans import Normalized, Span

__all__ = ["SentenceWords", "SpokenMap", "TimedWord", "as_written"]

SpokenMap = UnitPlacer  # where a request's sentences stand in its spoken text (`hearth.listen.placing`)


@dataclass(frozen=True)
class TimedWord:
    """A spoken word (the aligner's unit), when it is said, and the request's text it came from."""

    word: str
    start_time: float  # seconds from the start of the request's audio
    end_time: float
    source_start: int  # [source_start, source_end): characters of the request's text
    source_end: int
    sentence: int

    def to_json(self) -> dict[str, object]:
        return {"word": self.word, "start_time": self.start_time, "end_time": self.end_time,
                "source_start": self.source_start, "source_end": self.source_end}


@dataclass(frozen=True)
class SentenceWords:
    """A request's event after a sentence's audio: its words, once aligned (`error` says why there
    are none: the aligner failed or was too far behind)."""

    sentence: int
    offset: float  # where the sentence's audio starts in the request's, seconds
    duration: float  # its length, seconds
    words: tuple[TimedWord, ...]
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"sentence_index": self.sentence, "offset": self.offset,
                                  "duration": self.duration, "words": [w.to_json() for w in self.words]}
        if self.error is not None:
            out["error"] = self.error
        return out


def as_written(text: str) -> Normalized:
    """Text spoken as it stands: every character maps to itself."""
    return Normalized(text, text, (Span(0, len(text), 0, len(text)),))
