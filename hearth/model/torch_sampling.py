"""The torch reference's sampling: the official logits pipeline of codebook 0 and the draws,
bit for bit (torch's fp32 operations in the official order, `torch.multinomial` on the request's
own `torch.Generator`). The compiled backends sample in numpy instead (`hearth.checkpoint.sampling`)."""

from __future__ import annotations

import numpy as np
import torch

from hearth.checkpoint.config import TalkerConfig
from hearth.checkpoint.sampling import FirstCodeRule, SamplingOptions

__all__ = ["TorchSampler", "pick", "process_talker_logits", "warp"]


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


class TorchSampler:
    """One utterance's draws on the torch reference: one `torch.Generator` seeded by the request
    (None: torch's global generator, as the official package draws), codebook 0 then codebooks
    1..15 of each frame, in the official order."""

    def __init__(self, talker: TalkerConfig, options: SamplingOptions, seed: int | None):
        self.options = options
        rule = FirstCodeRule(talker)
        self.eos = rule.eos
        self.suppress = torch.from_numpy(rule.suppress)
        self.rng = None if seed is None else torch.Generator().manual_seed(seed)

    def first(self, logits: np.ndarray, history: list[int]) -> int:
        o = self.options
        scores = process_talker_logits(torch.from_numpy(logits), history, o, self.eos, self.suppress)
        return pick(scores, o.do_sample, o.temperature, o.top_k, o.top_p, self.rng)

    def sub(self, scores: torch.Tensor) -> int:
        """One of codebooks 1..15 from the predictor's fp32 logits [1, vocab]."""
        o = self.options
        return pick(scores, o.sub_do_sample, o.sub_temperature, o.sub_top_k, o.sub_top_p, self.rng)
