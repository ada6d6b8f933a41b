"""Text that arrives in pieces (`Scheduler.open`): where each piece goes.

A `TextFeed` splits an open request's text into sentences as it comes (`SentenceSplitter`: the same
sentences as the whole text would give). Spoken as it is written (interleaved), a sentence starts
before it ends: as soon as its first words are certain (`partial`), and then every later piece of
it goes to that running sentence (`LiveSentence`) instead of starting a new one. Both are guarded
by the scheduler's lock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from hearth.errors import InputError
from hearth.reliability import faults
from hearth.runtime.request import SentenceResult
from hearth.streaming.live import LiveUtterance
from hearth.text.normalize.live import LiveNormalizer
from hearth.text.sentences import SentenceSplitter, is_speakable

__all__ = ["LiveSentence", "TextFeed"]

log = logging.getLogger(__name__)


class LiveSentence:
    """A sentence started before its end: the text its live utterance has taken in so far. Its
    utterance is None when it failed to open (the text it was owed is then dropped with it). Text
    the utterance refuses (or any failure pushing it) fails this sentence alone, through `fail`:
    the request goes on with the next sentence, and its other text is not refused for it."""

    def __init__(self, sentence: SentenceResult, stopped: Callable[[], bool],
                 fail: Callable[[BaseException], None] | None = None):
        self.sentence = sentence
        self.utterance: LiveUtterance | None = None
        self.fed = ""  # text pushed into the utterance so far
        self._stopped = stopped
        self._fail = fail

    def grew(self, start: str) -> None:
        """The sentence is known to begin with `start` (it only grows)."""
        if len(start) > len(self.fed) and start.startswith(self.fed):
            self._push(start[len(self.fed) :])
            self.fed = start
            self.sentence.text = start

    def complete(self, text: str) -> None:
        """The sentence's whole text: the rest is pushed and the utterance's text ends."""
        self.sentence.text = text
        if not text.startswith(self.fed):  # cannot happen (`pending` is never taken back); be loud
            log.error("sentence %r does not continue the text already spoken (%r)", text, self.fed)
        else:
            self._push(text[len(self.fed) :])
        self.fed = text
        if self.utterance is not None and not self._stopped():
            try:
                self.utterance.end()
            except Exception as e:  # noqa: BLE001 - this sentence fails, the request goes on
                self._failed(e)

    def _push(self, text: str) -> None:
        if text and self.utterance is not None and not self._stopped():
            try:
                self.utterance.push(text)
            except Exception as e:  # noqa: BLE001 - as above
                self._failed(e)

    def _failed(self, error: BaseException) -> None:
        log.warning("sentence %d failed taking in its text: %s", self.sentence.index + 1, error)
        faults.tag(error, "text_feed")
        if self._fail is None:
            raise error
        self._fail(error)


class TextFeed:
    """An open request's text so far. `live`: its sentences start before they end (interleaved,
    and a voice whose prompt does not need the whole sentence)."""

    def __init__(self, live: bool, max_chars: int, normalizer: LiveNormalizer | None = None):
        self.live = live
        self.max_chars = max_chars
        self.normalizer = normalizer  # the text front end for text in pieces (None: spoken as written)
        self.partial = ""  # the certain start of the sentence being written (live only)
        self.owed: LiveSentence | None = None  # the running sentence the next text belongs to
        self._splitter = SentenceSplitter()
        self._chars = 0
        self._ended = False

    def push(self, text: str) -> list[str]:
        """More text: the sentences it completed that are still to start (a sentence already
        running as it is written takes its own rest)."""
        if self._chars + len(text) > self.max_chars:
            raise InputError(f"one request takes at most {self.max_chars:,} characters; end this one and "
                             "open another", "text")
        self._chars += len(text)
        said = text if self.normalizer is None else self.normalizer.push(text)
        return self._route(self._splitter.push(said))

    def end(self) -> list[str]:
        """No more text: the sentences still to start."""
        self._ended = True
        rest = self._splitter.push(self.normalizer.end()) if self.normalizer is not None else []
        return self._route(rest + self._splitter.finish())

    def startable(self) -> bool:
        """Whether the sentence being written may start now (its first words are certain)."""
        return self.owed is None and is_speakable(self.partial)

    def _route(self, sentences: list[str]) -> list[str]:
        if sentences and self.owed is not None:  # the first completes the sentence already started
            self.owed.complete(sentences.pop(0))
            self.owed = None
        if self.live and not self._ended:
            self.partial = self._splitter.pending()
            if self.owed is not None:
                self.owed.grew(self.partial)
        else:
            self.partial = ""
            if self.owed is not None:  # cannot happen (what `pending` promised comes); end it anyway
                self.owed.complete(self.owed.fed)
                self.owed = None
        return sentences
