"""A transcript in the shapes its surfaces give: words with their times and their place in the
text, OpenAI's `json` and `verbose_json` bodies, and captions (WebVTT, SubRip).

Nothing here is estimated: a segment is a piece of the recording as it was transcribed (its start
and end are the piece's), a word's times are the aligner's, and without an aligner there are no
word times at all. OpenAI's per-segment scores (avg_logprob, compression_ratio, no_speech_prob)
are left out rather than made up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hearth.listen.captions import Cue, TimedSpan, cues
from hearth.listen.listener import Transcript
from hearth.listen.placing import UnitPlacer, Unmapped

__all__ = ["Word", "openai_body", "transcript_cues", "transcript_words"]


@dataclass(frozen=True)
class Word:
    word: str  # the aligner's unit (punctuation left out)
    start: float  # seconds from the recording's start
    end: float
    text_start: int  # [text_start, text_end): its place in the transcript's text
    text_end: int
    piece: int

    def to_json(self) -> dict[str, Any]:
        return {"word": self.word, "start": self.start, "end": self.end, "text_start": self.text_start,
                "text_end": self.text_end}


def transcript_words(t: Transcript) -> list[Word] | None:
    """Every aligned unit with its place in `t.text` (None: transcribed without timestamps)."""
    if t.units is None:
        return None
    placer, out, at = UnitPlacer(), [], 0
    for i, piece in enumerate(t.pieces):
        units = piece.units or ()
        places = placer.locate(i, Unmapped(piece.text), [u.text for u in units])
        out += [Word(u.text, u.start, u.end, at + a, at + b, i) for u, (a, b) in zip(units, places, strict=True)]
        at += len(piece.text)
    return out


def transcript_cues(t: Transcript) -> list[Cue]:
    """Captions: cues of a few words where the words are timed, else one cue per piece."""
    words = transcript_words(t)
    if words is not None:
        return cues([TimedSpan(w.text_start, w.text_end, w.start, w.end, w.piece) for w in words], t.text)
    return [Cue(p.offset, round(p.offset + p.duration, 3), " ".join(p.text.split())) for p in t.pieces
            if p.text.strip()]


def openai_body(t: Transcript, duration: float, verbose: bool, with_words: bool) -> dict[str, Any]:
    """OpenAI's transcription body: `json` ({"text"}, and "words" when asked) or `verbose_json`
    (task, language in lower case, duration, segments, words when asked)."""
    words = transcript_words(t) if with_words else None
    listed = [{"word": w.word, "start": w.start, "end": w.end} for w in words or ()]
    if not verbose:
        return {"text": t.text, **({"words": listed} if with_words else {})}
    segments, at = [], 0
    for i, p in enumerate(t.pieces):
        segments.append({"id": i, "seek": int(round(p.offset * 100)), "start": p.offset,
                         "end": round(p.offset + p.duration, 3), "text": p.text, "tokens": list(p.token_ids),
                         "temperature": 0.0})
        at += len(p.text)
    return {"task": "transcribe", "language": t.language.lower(), "duration": round(duration, 3), "text": t.text,
            "segments": segments, **({"words": listed} if with_words else {})}
