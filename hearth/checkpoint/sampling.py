"""Per-request sampling: the options, the runaway guard, and the compiled backends' sampler.

The logits pipeline of codebook 0 is the official one, in its order (fp32 logits; repetition
penalty, then the end-of-speech mask while fewer than `min_new_tokens` frames exist, then the
suppressed control range; then temperature, top-k, top-p). Here it runs in numpy, and every draw
comes from the request's own numpy generator (PCG64 from its seed): the runtime needs no torch.
The torch reference samples with torch's generator instead (`hearth.model.torch_sampling`), bit for bit
as the official package does, so one seed gives other draws there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hearth.checkpoint.config import JsonReader, TalkerConfig

__all__ = ["DEFAULT_BUDGET", "FirstCodeRule", "FrameBudget", "Sampler", "SamplingOptions", "pick", "warp"]


@dataclass(frozen=True)
class SamplingOptions:
    """Per-request sampling: a checkpoint's generation_config.json (`from_json`; the official hard
    defaults fill any key it lacks), with a request's overrides (`with_overrides`)."""

    do_sample: bool = True
    temperature: float = 0.9
    top_k: int = 50
    top_p: float = 1.0
    repetition_penalty: float = 1.05
    sub_do_sample: bool = True
    sub_temperature: float = 0.9
    sub_top_k: int = 50
    sub_top_p: float = 1.0
    max_new_tokens: int = 8192
    min_new_tokens: int = 2

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "generation_config.json") -> SamplingOptions:
        r, base = JsonReader(data, where), cls()
        return cls(
            do_sample=r.flag("do_sample", base.do_sample),
            temperature=r.number("temperature", base.temperature),
            top_k=r.integer("top_k", base.top_k),
            top_p=r.number("top_p", base.top_p),
            repetition_penalty=r.number("repetition_penalty", base.repetition_penalty),
            sub_do_sample=r.flag("subtalker_dosample", base.sub_do_sample),
            sub_temperature=r.number("subtalker_temperature", base.sub_temperature),
            sub_top_k=r.integer("subtalker_top_k", base.sub_top_k),
            sub_top_p=r.number("subtalker_top_p", base.sub_top_p),
            max_new_tokens=r.integer("max_new_tokens", base.max_new_tokens),
        )

    def with_overrides(self, **overrides: object) -> SamplingOptions:
        """These options with every override that is not None."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})  # type: ignore[arg-type]

    def greedy(self) -> SamplingOptions:
        return replace(self, do_sample=False, sub_do_sample=False)

    def validate(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be at least 1")
        for name in ("temperature", "sub_temperature"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive (use greedy decoding instead of 0)")
        for name in ("top_p", "sub_top_p"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"{name} must lie in (0, 1]")
        if self.top_k < 0 or self.sub_top_k < 0:
            raise ValueError("top_k must not be negative (0 disables it)")
        if self.repetition_penalty <= 0:
            raise ValueError("repetition_penalty must be positive")


@dataclass(frozen=True)
class FrameBudget:
    """The runaway guard: at most `base + per_token * text_tokens` frames (80 ms each).

    Real speech runs at 2-5 frames per text token; a model that never emits EOS (a few in a
    thousand real requests) would otherwise speak noise until max_new_tokens (11 minutes).
    """

    base: int = 40
    per_token: int = 12

    def frames(self, text_tokens: int) -> int:
        return self.base + self.per_token * text_tokens


DEFAULT_BUDGET = FrameBudget()


class FirstCodeRule:
    """What codebook 0 may be: the talker's end-of-speech id, and the control range the official
    processor suppresses (the top 1024 codec ids, end-of-speech excepted)."""

    def __init__(self, talker: TalkerConfig):
        vocab = talker.stack.vocab_size
        self.eos = talker.codec_eos_id
        self.suppress = np.zeros((1, vocab), dtype=bool)
        self.suppress[:, max(vocab - 1024, 0) :] = True
        self.suppress[:, self.eos] = False

    def scores(self, logits: np.ndarray, history: list[int], opts: SamplingOptions) -> np.ndarray:
        """logits [1, vocab] fp32 -> processed scores, in the order of the official pipeline."""
        scores = np.array(logits, dtype=np.float32)  # a copy: the caller's logits stay as they were
        if opts.repetition_penalty != 1.0 and history:
            ids = np.asarray(history, dtype=np.int64)
            picked = scores[0, ids]
            scores[0, ids] = np.where(picked < 0, picked * np.float32(opts.repetition_penalty),
                                      picked / np.float32(opts.repetition_penalty))
        if len(history) < opts.min_new_tokens:
            scores[:, self.eos] = -np.inf
        scores[self.suppress] = -np.inf
        return scores


def _softmax(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def warp(scores: np.ndarray, temperature: float, top_k: int, top_p: float) -> np.ndarray:
    """Temperature, then top-k, then top-p (the smallest set of the likeliest codes whose mass
    exceeds `top_p`) over scores [1, vocab]; excluded codes become -inf."""
    if temperature != 1.0:
        scores = scores / np.float32(temperature)
    n = scores.shape[-1]
    if top_k:
        k = min(max(top_k, 1), n)
        kth = np.partition(scores, n - k, axis=-1)[..., n - k : n - k + 1]
        scores = np.where(scores < kth, np.float32(-np.inf), scores)
    if top_p < 1.0:
        order = np.argsort(scores, axis=-1, kind="stable")  # ascending, as the official processor sorts
        cumulative = np.cumsum(_softmax(np.take_along_axis(scores, order, axis=-1)), axis=-1)
        remove_sorted = cumulative <= 1 - top_p
        remove_sorted[..., -1] = False
        remove = np.empty_like(remove_sorted)
        np.put_along_axis(remove, order, remove_sorted, axis=-1)
        scores = np.where(remove, np.float32(-np.inf), scores)
    return scores


def pick(scores: np.ndarray, sample: bool, temperature: float, top_k: int, top_p: float,
         rng: np.random.Generator) -> int:
    """One code from scores [1, vocab]: the likeliest, or one drawn by inverse CDF with one uniform
    from `rng` (a code the warp excluded is never drawn)."""
    if not sample:
        return int(np.argmax(scores))
    probs = _softmax(warp(scores, temperature, top_k, top_p).astype(np.float64))[0]
    cdf = np.cumsum(probs)
    index = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return min(index, int(np.flatnonzero(probs)[-1]))


class Sampler:
    """One utterance's draws on the compiled backends: codebook 0 from the talker's logits, and
    the code predictor's uniforms (its in-graph sampler turns them into codes), all from one numpy
    generator seeded by the request (fresh entropy without a seed), in the order they are used."""

    def __init__(self, talker: TalkerConfig, options: SamplingOptions, seed: int | None):
        self.options = options
        self.rule = FirstCodeRule(talker)
        self.rng = np.random.default_rng(seed)

    def first(self, logits: np.ndarray, history: list[int]) -> int:
        """Codebook 0 of the next frame from the talker's fp32 logits [1, vocab]."""
        o = self.options
        return pick(self.rule.scores(logits, history, o), o.do_sample, o.temperature, o.top_k, o.top_p, self.rng)

    def uniforms(self, count: int) -> np.ndarray:
        """[1, count] float32 uniforms for the predictor's codebooks (zeros when it decodes greedily)."""
        if self.options.sub_do_sample:
            return self.rng.random((1, count), dtype=np.float32)
        return np.zeros((1, count), np.float32)
