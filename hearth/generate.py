"""The frame loop: one utterance's frames from its prompt embeddings, until it ends.

This reproduces the official generation bit for bit (same tensor shapes per call, same fp32 logits
pipeline, same order of random draws: cb0, then cb1..cb15 for each frame), with one difference by
design: an explicit `torch.Generator` instead of the global RNG, and a runaway guard. The session
(caches, the predictor loop) belongs to the backend; codebook 0 is processed and sampled here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import torch

from .backends import LanguageModel, LMSession
from .config import ModelConfig
from .sampling import DEFAULT_BUDGET, FrameBudget, SamplingOptions, pick, process_talker_logits

if TYPE_CHECKING:
    from .batch import FrameBatcher

__all__ = ["Audio", "Embeds", "FrameGenerator", "Generation", "GenerationStats", "Turn"]

log = logging.getLogger(__name__)


class Embeds(Protocol):
    """The talker's inputs: `PromptEmbeds` (the whole text) or `LiveEmbeds` (text still arriving)."""

    @property
    def prefill(self) -> torch.Tensor | None: ...

    @property
    def prefix(self) -> int: ...  # leading prefill positions that depend on voice, language, instruction only

    def prefill_ready(self) -> bool: ...  # False: nothing to speak (or cancelled)

    def started(self) -> bool: ...  # prefill_ready() would not wait

    def watch(self, callback: Callable[[], None]) -> None: ...  # called after each change of the text

    def ready(self, step: int) -> bool: ...  # row(step) would not wait

    def row(self, step: int) -> torch.Tensor | None: ...  # None: cancelled

    def final_tokens(self) -> int | None: ...  # text tokens, once the text is complete


class Turn(Protocol):
    """Turn-taking between utterances generated side by side on one machine (the scheduler's)."""

    def take(self) -> bool: ...  # before each frame: wait until this utterance may compute; False: stop

    def waiting(self, idle: bool) -> None: ...  # the utterance waits for text (it computes nothing)


@dataclass
class GenerationStats:
    frames: int = 0
    stop_reason: str = ""  # "eos", "max_new_tokens", "frame_budget", "closed", "empty" (live text, none came)
    prefill_s: float = 0.0
    talker_s: float = 0.0
    predictor_s: float = 0.0


class FrameGenerator:
    """Yields frames ([num_code_groups] int64 codes) until EOS, max_new_tokens or the frame budget.

    Backend-neutral: the language model's session holds the caches; codebook 0 is sampled here
    (repetition penalty needs the history), the rest by the session. The session is closed when
    the iterator ends, is closed, or is abandoned.

    With a `batcher` (`hearth.batch.FrameBatcher`), the frames are computed by the batcher's
    thread, stepped together with other utterances; iterating then only takes them as they come.
    The per-frame logic (`_sampled`, `_stopping`, `_frame`, `_next_input`) is the same either way.
    """

    def __init__(
        self,
        lm: LanguageModel,
        config: ModelConfig,
        embeds: Embeds,
        options: SamplingOptions,
        rng: torch.Generator | None = None,
        budget: FrameBudget | None = DEFAULT_BUDGET,
        turn: Turn | None = None,
        batcher: FrameBatcher | None = None,
    ):
        options.validate()
        self.lm = lm
        self.config = config
        self.embeds = embeds
        self.opts = options
        self.rng = rng
        self.max_frames = options.max_new_tokens - 1
        self.budget = budget
        self.turn = turn
        self.batcher = batcher
        self.on_starve: Callable[[], None] | None = None  # called before waiting for text (frames made so far go out)
        self.stopped: Callable[[], bool] | None = None  # polled while a batched utterance waits for its frames
        self.stats = GenerationStats()
        t = config.talker
        vocab = t.stack.vocab_size
        self._eos = t.codec_eos_id
        # The official processor suppresses the top 1024 codec ids (control tokens), EOS excepted.
        self._suppress = torch.zeros(1, vocab, dtype=torch.bool)
        self._suppress[:, max(vocab - 1024, 0) :] = True
        self._suppress[:, self._eos] = False
        self._history: list[int] = []
        self._cb0 = 0
        self._step = 0
        self._budget_frames: int | None = None

    def _sample_cb0(self, logits: torch.Tensor, history: list[int]) -> int:
        o = self.opts
        scores = process_talker_logits(logits, history, o, self._eos, self._suppress)
        return pick(scores, o.do_sample, o.temperature, o.top_k, o.top_p, self.rng)

    def __iter__(self) -> Iterator[torch.Tensor]:
        if self.batcher is not None:
            yield from self.batcher.run(self)
            return
        t0 = time.perf_counter()
        embeds = self.embeds
        with torch.inference_mode():
            ready = embeds.prefill_ready()  # live text: waits for its first token
        if not ready:
            self.stats.stop_reason = self._empty_reason()
            return
        if self.turn is not None and not self.turn.take():
            self.stats.stop_reason = "closed"
            return
        t0 = time.perf_counter()
        assert embeds.prefill is not None
        session = self.lm.session(self.opts, self.rng, embeds.prefill.shape[1], embeds.prefix)
        try:
            yield from self._frames(session, t0)
        finally:  # also when the consumer abandons the iterator
            session.close()

    def _frames(self, session: LMSession, t0: float) -> Iterator[torch.Tensor]:
        # Inference mode is entered per step, never across a `yield`: it is a per-thread setting,
        # and another utterance's frames may be computed on this thread between two of ours.
        stats = self.stats
        embeds = self.embeds
        assert embeds.prefill is not None
        with torch.inference_mode():
            self._sampled(session.prefill(embeds.prefill))
        stats.prefill_s = time.perf_counter() - t0
        while True:
            if reason := self._stopping():
                stats.stop_reason = reason
                return
            if self.turn is not None and not self.turn.take():
                stats.stop_reason = "closed"
                return
            t1 = time.perf_counter()
            with torch.inference_mode():
                rest, summed = session.predict(self._cb0)
                stats.predictor_s += time.perf_counter() - t1
                frame = self._frame(rest)
            yield frame  # before the next text row is fetched: with live text it may have to wait
            if self.on_starve is not None and not embeds.ready(self._step - 1):
                self.on_starve()
            with torch.inference_mode():
                hidden_next = self._next_input(summed)
            if hidden_next is None:  # live text, cancelled while waiting for it
                stats.stop_reason = "closed"
                return
            t3 = time.perf_counter()
            with torch.inference_mode():
                self._sampled(session.step(hidden_next))
            stats.talker_s += time.perf_counter() - t3

    # -- one utterance's frame logic (the solo loop above, or a batcher) -----------------------------

    def _empty_reason(self) -> str:
        """Why an utterance whose prefill never came ends: its text was empty, or it was cancelled."""
        return "empty" if self.embeds.final_tokens() == 0 else "closed"

    def _sampled(self, logits: torch.Tensor) -> None:
        """Codebook 0 of the next frame, from the talker's logits."""
        self._cb0 = self._sample_cb0(logits, self._history)

    def _stopping(self) -> str | None:
        """Before the next frame: why generation ends here, or None."""
        step = self._step
        if self._cb0 == self._eos:
            return "eos"
        if step >= self.max_frames:
            return "max_new_tokens"
        if self._budget_frames is None and self.budget is not None:  # known once the text is complete
            tokens = self.embeds.final_tokens()
            self._budget_frames = None if tokens is None else self.budget.frames(tokens)
        if self._budget_frames is not None and step >= self._budget_frames:
            log.warning(
                "runaway guard: no end of speech after %d frames (%.1f s) for %d text tokens; stopping",
                step, step * 0.08, self.embeds.final_tokens(),
            )
            return "frame_budget"
        return None

    def _frame(self, rest: list[int]) -> torch.Tensor:
        """The frame made of codebook 0 and the predictor's codebooks 1..G-1."""
        frame = torch.tensor([self._cb0] + rest, dtype=torch.long)
        self._history.append(self._cb0)
        self._step += 1
        self.stats.frames = self._step
        return frame

    def _input_ready(self) -> bool:
        """Whether `_next_input` would not wait for text."""
        return self.embeds.ready(self._step - 1)

    def _next_input(self, summed: torch.Tensor) -> torch.Tensor | None:
        """The talker's next input: the frame's summed embedding plus the next text row (live text
        may wait for it); None once cancelled."""
        extra = self.embeds.row(self._step - 1)
        return None if extra is None else summed + extra


@dataclass(frozen=True)
class Generation:
    """The codes of one utterance: `codes` [frames, 16] int64, the sampling seed (None when greedy)
    and how generation went (frames, stop reason, stage timings)."""

    codes: torch.Tensor
    seed: int | None
    stats: GenerationStats


@dataclass(frozen=True)
class Audio:
    """One utterance's audio (float32 mono in [-1, 1]) and the codes it was decoded from."""

    samples: np.ndarray
    sample_rate: int
    codes: torch.Tensor  # [frames, 16] int64
    seed: int | None
    stats: GenerationStats

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate
