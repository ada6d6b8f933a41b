"""The text of a live transcription as append-only pieces: the realtime WebSocket's deltas
(`realtime`), Wyoming's `transcript-chunk`s (`wyoming_asr`).

A piece once sent cannot be taken back, and a live update's text may still change past
`LiveEvent.stable`. So only kept text is sent: a partial's first `stable` characters, a final's
whole text (its segment is closed), each after the texts of the segments closed before it (joined
with nothing between, as a recording's pieces are: `Transcript.joined`). A piece goes out only
where the kept text goes on from what was sent, so the pieces joined are always the start of the
text kept so far; text that does not go on from them (a later answer that cut a repetition short)
is not sent.
"""

from __future__ import annotations

from hearth.listen import LiveEvent

__all__ = ["LiveText"]


class LiveText:
    """What one live transcription has sent, and the piece each update adds to it."""

    def __init__(self) -> None:
        self.sent = ""  # the pieces sent so far, joined
        self.closed = ""  # the finals of the segments closed so far, joined: the transcript once finished

    def update(self, event: LiveEvent) -> str:
        """The piece `event` adds ("" when it adds none)."""
        if event.kind == "final":
            self.closed += event.text
            return self.complete(self.closed)
        return self.complete(self.closed + event.text[: event.stable])

    def complete(self, text: str) -> str:
        """What `text` adds to the pieces sent, when it goes on from them ("" otherwise), counted as sent."""
        if len(text) <= len(self.sent) or not text.startswith(self.sent):
            return ""
        piece, self.sent = text[len(self.sent) :], text
        return piece
