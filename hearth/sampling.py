"""Per-request sampling: the options, the runaway guard, and the logits pipeline of codebook 0.

The pipeline reproduces the official one bit for bit (fp32 logits; repetition penalty, then the
end-of-speech mask while fewer than `min_new_tokens` frames exist, then the suppressed control
range; then temperature, top-k, top-p), and every draw comes from the request's own generator.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch

from .config import JsonReader

__all__ = ["DEFAULT_BUDGET", "FrameBudget", "SamplingOptions", "pick", "process_talker_logits", "warp"]


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



def process_talker_logits(
    logits: torch.Tensor, history: list[int], opts: SamplingOptions, eos: int, suppress: torch.Tensor
) -> torch.Tensor:
    """logits [1, vocab] fp32 -> processed scores, in the order of the official pipeline."""
    scores = logits
    if opts.repetition_penalty != 1.0 and history:
        ids = torch.tensor([history], dtype=torch.long)
        picked = torch.gather(scores, 1, ids)
        picked = torch.where(picked < 0, picked * opts.repetition_penalty, picked / opts.repetition_penalty)
        scores = scores.scatter(1, ids, picked)
    if len(history) < opts.min_new_tokens:
        mask = torch.zeros_like(scores, dtype=torch.bool)
        mask[:, eos] = True
        scores = torch.where(mask, -float("inf"), scores)
    scores = torch.where(suppress, -float("inf"), scores)
    return scores


def warp(scores: torch.Tensor, temperature: float, top_k: int, top_p: float) -> torch.Tensor:
    if temperature != 1.0:
        scores = scores / temperature
    if top_k:
        k = min(max(top_k, 1), scores.shape[-1])
        kth = torch.topk(scores, k)[0][..., -1, None]
        scores = scores.masked_fill(scores < kth, -float("inf"))
    if top_p < 1.0:
        sorted_logits, sorted_idx = torch.sort(scores, descending=False)
        cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        remove_sorted = cumulative <= (1 - top_p)
        remove_sorted[..., -1:] = False
        remove = remove_sorted.scatter(1, sorted_idx, remove_sorted)
        scores = scores.masked_fill(remove, -float("inf"))
    return scores


def pick(scores: torch.Tensor, sample: bool, temperature: float, top_k: int, top_p: float,
          rng: torch.Generator | None) -> int:
    if not sample:
        return int(torch.argmax(scores, dim=-1))
    probs = torch.softmax(warp(scores, temperature, top_k, top_p), dim=-1)
    return int(torch.multinomial(probs, num_samples=1, generator=rng))
