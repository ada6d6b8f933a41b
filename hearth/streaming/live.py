"""Speaking while the text is still being written: the interleaved text mode fed as text arrives.

In the interleaved mode (the official `non_streaming_mode=False`) the prompt holds the first text
token and each generated frame takes in the next one. A live utterance starts as soon as its first
text token is committed (`LiveText`) and, when a frame needs a token that has not arrived, waits
for it instead of feeding padding, so the model sees exactly the sequence it sees with the whole
text, and the codes are the whole-text interleaved codes for the same seed.

One subtlety makes that exact. CPU matrix kernels round a row differently depending on the batch
it is computed in (here batches of fewer than a dozen rows take other code paths than large ones;
on some CPUs every batch size rounds its own way). The compiled backends therefore project the
trailing text in aligned blocks of a fixed size, padded (`embed_trailing`, `trailing_block`): a
row then depends only on its token and its place in its block, so a live utterance computes each
row as soon as its token is committed, exactly as the whole text would. The torch reference projects
as the official model does, in one batch; for it `BatchInvariance` measures, once per engine, from
which batch size every row equals its value in a large batch (and which rows of smaller batches
do), and a live row is used only when the final batch, whatever text is still to come, is certain
to give the same row; otherwise (the text so far is very short) it waits for more text or for the
end, and then computes the rows exactly as the official model does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hearth.checkpoint.config import ModelConfig
from hearth.checkpoint.tokenizer import TextTokenizer
from hearth.errors import InputError
from hearth.reliability import faults
from hearth.streaming.audio_stream import AudioStream
from hearth.streaming.chunks import AudioChunk
from hearth.text.prompt import Embedder, LiveText, Prompt, Speaker, embed_prompt

__all__ = ["BatchInvariance", "LiveEmbeds", "LiveUtterance"]

_PAD_TO = 64  # live rows are computed in batches of at least this many rows


@dataclass(frozen=True)
class BatchInvariance:
    """When a row of the text projection equals its value in a large batch.

    Every row of a batch of `threshold` or more rows does; in a smaller batch of m rows, rows
    k < block * (m // block) do (`block` 0: none). `threshold` None: no size was found, so rows
    are only known once the text has ended."""

    threshold: int | None
    block: int

    def __post_init__(self) -> None:
        if self.threshold is not None and self.threshold < 1 or self.block < 0:
            raise ValueError(f"a batch invariance needs a threshold of at least 1 (or None) and a block of at least "
                             f"0, got {self.threshold}, {self.block}")

    @classmethod
    def parse(cls, text: str) -> BatchInvariance:
        """`"none"` (no batch size is invariant), `"T"` or `"T,B"` (threshold T, block B, default 0):
        what `HEARTH_TEXT_INVARIANCE` gives instead of the measurement, to see how live text behaves
        on a machine whose kernels measure otherwise. A value more cautious than the measured one
        (a larger threshold, block 0, none) keeps the codes exact; a bolder one does not."""
        parts = [p.strip() for p in text.split(",")]
        try:
            if parts == ["none"]:
                return cls(None, 0)
            if 1 <= len(parts) <= 2:
                return cls(int(parts[0]), int(parts[1]) if len(parts) == 2 else 0)
        except ValueError:
            pass
        raise ValueError(f"HEARTH_TEXT_INVARIANCE must be 'none', 'T' or 'T,B' (whole numbers), got {text!r}")

    def safe(self, row: int, known: int) -> bool:
        """Whether `row` is final while `known` rows exist and more may come (the batch only grows)."""
        if self.threshold is None:
            return False
        if known >= self.threshold:
            return True
        return self.block > 0 and row < self.block * (known // self.block)

    @classmethod
    def measure(cls, embed_text: Callable[[list[int]], np.ndarray], vocab: int,
                max_small: int = 40) -> BatchInvariance:
        ids = np.random.default_rng(0).integers(0, vocab, 256).tolist()
        large = np.concatenate([embed_text(ids[i : i + _PAD_TO]) for i in range(0, len(ids), _PAD_TO)], axis=1)[0]
        equal: dict[int, list[bool]] = {}
        for m in [*range(1, max_small + 1), 48, 64, 100, 128, 256]:
            rows = embed_text(ids[:m])[0]
            equal[m] = [bool(np.array_equal(rows[k], large[k])) for k in range(m)]
        sizes = sorted(equal)
        threshold = None
        for i, m in enumerate(sizes):
            if all(all(equal[n]) for n in sizes[i:]):
                threshold = m
                break
        if threshold is None:
            return cls(None, 0)
        for block in range(threshold, 0, -1):
            if all(equal[m] == [k < block * (m // block) for k in range(m)] for m in sizes if m < threshold):
                return cls(threshold, block)
        return cls(threshold, 0)


class LiveEmbeds:
    """The talker's inputs for text pushed while it speaks; what `FrameGenerator` reads.

    `push`, `end` and `cancel` may be called from any thread; `prefill_ready` and `row` block the
    generating thread until the text they need has arrived (or the utterance is cancelled)."""

    def __init__(self, talker: Embedder, config: ModelConfig, tokenizer: TextTokenizer, voice: Speaker, language: str,
                 instruct: list[int] | None, invariance: BatchInvariance, max_tokens: int,
                 on_wait: Callable[[bool], None] | None = None):
        self.talker = talker
        self.config = config
        self.voice = voice
        self.language = language
        self.instruct = instruct
        self.invariance = invariance
        self.max_tokens = max_tokens
        self.on_wait = on_wait  # told when the generator starts and stops waiting for text
        self._text = LiveText(tokenizer)
        self._cond = threading.Condition()
        self._ids: list[int] = []  # committed text ids
        self._rows: list[np.ndarray] = []  # live rows: row k is the projection of ids[k + 1]
        self._final: np.ndarray | None = None  # after the end: every trailing row, then tts_eos
        self._ended = False
        self._cancelled = False
        self._changes = 0  # counts pushes that committed text, the end and a cancel
        self._watchers: list[Callable[[], None]] = []  # told (outside the lock) of each change
        self.prefill: np.ndarray | None = None
        self.prefix = 0  # as PromptEmbeds.prefix, once the prefill is made
        self.tts_pad: np.ndarray | None = None
        self.marks: frozenset[str] = frozenset()  # stages where injected faults fire for it (reliability.faults)
        self._pushed = ""  # the text so far, kept only while faults are armed

    # -- the writer's side ------------------------------------------------------------------------

    def push(self, text: str) -> None:
        with self._cond:
            if self._ended or self._cancelled:
                raise ValueError("the text has ended" if self._ended else "the utterance was cancelled")
            if faults.active():
                self._pushed += text
                self.marks = faults.marks(self._pushed)
            ids = self._text.push(text)
            if len(self._ids) + len(ids) > self.max_tokens:
                raise ValueError(f"the text is over {self.max_tokens} tokens, more than one utterance takes")
            if not ids:
                return
            self._ids += ids
            self._changes += 1
            self._cond.notify_all()
        self._tell()

    def end(self) -> None:
        with self._cond:
            if self._ended or self._cancelled:
                return
            ids = self._text.end()
            if len(self._ids) + len(ids) > self.max_tokens:
                raise ValueError(f"the text is over {self.max_tokens} tokens, more than one utterance takes")
            self._ids += ids
            self._ended = True
            self._changes += 1
            self._cond.notify_all()
        self._tell()

    def cancel(self) -> None:
        with self._cond:
            self._cancelled = True
            self._changes += 1
            self._cond.notify_all()
        self._tell()

    def watch(self, callback: Callable[[], None]) -> None:
        """Call `callback` (from the writer's thread, holding no lock) after every change."""
        with self._cond:
            self._watchers.append(callback)

    def _tell(self) -> None:
        for callback in list(self._watchers):
            callback()

    @property
    def text_tokens(self) -> int:
        return len(self._ids)

    def final_tokens(self) -> int | None:
        """The number of text tokens once the text has ended (the frame budget needs it), else None."""
        return len(self._ids) if self._ended else None

    # -- the generator's side ----------------------------------------------------------------------

    def started(self) -> bool:
        """Whether `prefill_ready()` would return without waiting for text."""
        with self._cond:
            return self._cancelled or self._ended or bool(self._ids)

    def prefill_ready(self) -> bool:
        """Wait for the first text token (or the end); build the prefill. False: nothing to speak."""
        with self._cond:
            while not self._cancelled and not self._ids and not self._ended:
                self._wait()
            if self._cancelled or not self._ids:
                return False
            first = self._ids[:1]
        embeds = embed_prompt(self.talker, self.config, Prompt(self._text.role, first, self.instruct), self.voice,
                              self.language, "interleaved")
        self.prefill, self.tts_pad, self.prefix = embeds.prefill, embeds.tts_pad, embeds.prefix
        self._eos = embeds.trailing[:, -1:]  # tts_eos, as the whole-text path computes it
        return True

    def ready(self, step: int) -> bool:
        """Whether `row(step)` would return without waiting for text."""
        faults.hit("text_feed", self.marks)
        with self._cond:
            if self._cancelled or self._ended or step < len(self._rows):
                return True
            known = len(self._ids) - 1
            return step < known and self._safe(step, known)

    def row(self, step: int) -> np.ndarray | None:
        """What is added to the talker's input after frame `step`: the projection of text token
        step + 1, then tts_eos, then tts_pad. Waits until it is known; None once cancelled."""
        with self._cond:
            while True:
                if self._cancelled:
                    return None
                if self._ended:
                    break
                known = len(self._ids) - 1
                if step < len(self._rows):
                    return self._rows[step][None, None]
                if step < known and self._safe(step, known):
                    todo = [k for k in range(len(self._rows), known) if self._safe(k, known)]
                    ids = [self._ids[k + 1] for k in todo]
                    break
                self._wait()
        if self._ended:
            return self._final_row(step)
        rows = self._project(todo[0], ids)
        with self._cond:
            if len(self._rows) == todo[0]:
                self._rows.extend(rows)
            return self._rows[step][None, None] if step < len(self._rows) else None

    def _safe(self, row: int, known: int) -> bool:
        """Whether trailing row `row` is final while `known` rows' tokens are committed."""
        return row < known if self.talker.trailing_block else self.invariance.safe(row, known)

    def _project(self, first: int, ids: list[int]) -> np.ndarray:
        """The trailing rows first, first + 1, ... of `ids` (their tokens), as the whole text's
        projection gives them."""
        block = self.talker.trailing_block
        if block:  # from the start of `first`'s block, so that every row keeps its place in it
            start = first - first % block
            head = [self._ids[k + 1] for k in range(start, first)]
            return self.talker.embed_trailing(head + ids)[0, len(head):]
        padded = ids + [ids[-1]] * max(0, _PAD_TO - len(ids))
        return self.talker.embed_text(padded)[0, : len(ids)]

    def _wait(self) -> None:
        """Under the lock: wait for more text (or the end, or a cancel), telling `on_wait` outside it."""
        if self.on_wait is None:
            self._cond.wait()
            return
        seen = self._changes
        self._cond.release()
        try:
            self.on_wait(True)
        finally:
            self._cond.acquire()
        if self._changes == seen:  # else it came while the lock was let go: the caller looks again
            self._cond.wait()
        self._cond.release()
        try:
            self.on_wait(False)
        finally:
            self._cond.acquire()

    def _final_row(self, step: int) -> np.ndarray:
        if self._final is None:
            ids = self._ids
            rest = self.talker.embed_trailing(ids[1:]) if len(ids) > 1 else self._eos[:, :0]
            self._final = np.concatenate((rest, self._eos), axis=1)
        assert self.tts_pad is not None
        return self._final[:, step : step + 1] if step < self._final.shape[1] else self.tts_pad


class LiveUtterance:
    """An utterance fed with text while it speaks (`Engine.open`): push, end, cancel; iterate audio."""

    def __init__(self, embeds: LiveEmbeds, audio: AudioStream, normalizer: Any = None):  # noqa: ANN401
        self._embeds = embeds
        self._normalizer = normalizer  # a LiveNormalizer: the text made speakable as it arrives (None: as it is)
        self.audio = audio
        self.seed = audio.seed
        self.generation = audio.generation

    def push(self, text: str) -> None:
        """More text; the utterance takes it in as soon as its words are complete."""
        if not isinstance(text, str):
            raise InputError("the text must be a string")
        try:
            said = text if self._normalizer is None else self._normalizer.push(text)
            self._embeds.push(said)  # (also when the normalizer holds it all: an ended utterance refuses)
        except ValueError as e:
            raise InputError(str(e)) from e

    def end(self) -> None:
        """No more text: the rest is spoken, then the audio ends."""
        try:
            if self._normalizer is not None and (rest := self._normalizer.end()):
                self._embeds.push(rest)
            self._embeds.end()
        except ValueError as e:
            raise InputError(str(e)) from e

    def cancel(self) -> None:
        """Stop now, from any thread (generation stops within a frame, also while waiting for text)."""
        self._embeds.cancel()
        self.audio.cancel()

    @property
    def text_tokens(self) -> int:
        return self._embeds.text_tokens

    def __iter__(self) -> LiveUtterance:
        return self

    def __next__(self) -> AudioChunk:
        return next(self.audio)

    def close(self) -> None:
        self._embeds.cancel()
        self.audio.close()

    def __enter__(self) -> LiveUtterance:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
