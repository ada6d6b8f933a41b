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
from typing import Protocol

import torch

from .backends import LanguageModel, LMSession
from .config import ModelConfig
from .sampling import DEFAULT_BUDGET, FrameBudget, SamplingOptions, pick, process_talker_logits

__all__ = ["Embeds", "FrameGenerator", "GenerationStats", "Turn"]

log = logging.getLogger(__name__)


class Embeds(Protocol):
    """The talker's inputs: `PromptEmbeds` (the whole text) or `LiveEmbeds` (text still arriving)."""

    @property
    def prefill(self) -> torch.Tensor | None: ...

    def prefill_ready(self) -> bool: ...  # False: nothing to speak (or cancelled)

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
        self.on_starve: Callable[[], None] | None = None  # called before waiting for text (frames made so far go out)
        self.stats = GenerationStats()
        t = config.talker
        vocab = t.stack.vocab_size
        self._eos = t.codec_eos_id
        # The official processor suppresses the top 1024 codec ids (control tokens), EOS excepted.
        self._suppress = torch.zeros(1, vocab, dtype=torch.bool)
        self._suppress[:, max(vocab - 1024, 0) :] = True
        self._suppress[:, self._eos] = False

    def _sample_cb0(self, logits: torch.Tensor, history: list[int]) -> int:
        o = self.opts
        scores = process_talker_logits(logits, history, o, self._eos, self._suppress)
        return pick(scores, o.do_sample, o.temperature, o.top_k, o.top_p, self.rng)

    def __iter__(self) -> Iterator[torch.Tensor]:
        t0 = time.perf_counter()
        embeds = self.embeds
        with torch.inference_mode():
            ready = embeds.prefill_ready()  # live text: waits for its first token
        if not ready:
            self.stats.stop_reason = "empty" if embeds.final_tokens() == 0 else "closed"
            return
        if self.turn is not None and not self.turn.take():
            self.stats.stop_reason = "closed"
            return
        t0 = time.perf_counter()
        assert embeds.prefill is not None
        session = self.lm.session(self.opts, self.rng, embeds.prefill.shape[1])
        try:
            yield from self._frames(session, t0)
        finally:  # also when the consumer abandons the iterator
            session.close()

    def _frames(self, session: LMSession, t0: float) -> Iterator[torch.Tensor]:
        # Inference mode is entered per step, never across a `yield`: it is a per-thread setting,
        # and another utterance's frames may be computed on this thread between two of ours.
        stats = self.stats
        embeds = self.embeds
        history: list[int] = []
        assert embeds.prefill is not None
        with torch.inference_mode():
            logits = session.prefill(embeds.prefill)
            cb0 = self._sample_cb0(logits, history)
        stats.prefill_s = time.perf_counter() - t0
        step = 0
        budget_frames: int | None = None
        while True:
            if cb0 == self._eos:
                stats.stop_reason = "eos"
                return
            if step >= self.max_frames:
                stats.stop_reason = "max_new_tokens"
                return
            if budget_frames is None and self.budget is not None:  # known once the text is complete
                tokens = embeds.final_tokens()
                budget_frames = None if tokens is None else self.budget.frames(tokens)
            if budget_frames is not None and step >= budget_frames:
                stats.stop_reason = "frame_budget"
                log.warning(
                    "runaway guard: no end of speech after %d frames (%.1f s) for %d text tokens; stopping",
                    step, step * 0.08, embeds.final_tokens(),
                )
                return
            if self.turn is not None and not self.turn.take():
                stats.stop_reason = "closed"
                return
            t1 = time.perf_counter()
            with torch.inference_mode():
                rest, summed = session.predict(cb0)
                stats.predictor_s += time.perf_counter() - t1
                frame = torch.tensor([cb0] + rest, dtype=torch.long)
                history.append(cb0)
            step += 1
            stats.frames = step
            yield frame  # before the next text row is fetched: with live text it may have to wait
            if self.on_starve is not None and not embeds.ready(step - 1):
                self.on_starve()
            with torch.inference_mode():
                extra = embeds.row(step - 1)
                if extra is None:  # live text, cancelled while waiting for it
                    stats.stop_reason = "closed"
                    return
                hidden_next = summed + extra
            t3 = time.perf_counter()
            with torch.inference_mode():
                logits = session.step(hidden_next)
                cb0 = self._sample_cb0(logits, history)
            stats.talker_s += time.perf_counter() - t3
