"""The compiled backends' sampler (numpy, `hearth.checkpoint.sampling`) against the torch reference's
(`hearth.model.torch_sampling`, the official pipeline): the same processed scores, the same codes kept
by temperature, top-k and top-p, and draws that follow the kept distribution and never leave it."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hearth.checkpoint.loading import open_checkpoint
from hearth.checkpoint.sampling import FirstCodeRule, Sampler, SamplingOptions, pick, warp
from hearth.model.torch_sampling import TorchSampler, process_talker_logits
from hearth.model.torch_sampling import warp as torch_warp


@pytest.fixture(scope="module")
def talker(tiny_dir):
    return open_checkpoint(tiny_dir).config.talker


options = st.builds(
    SamplingOptions,
    temperature=st.sampled_from([0.3, 0.9, 1.0, 1.7]),
    top_k=st.sampled_from([0, 1, 5, 50]),
    top_p=st.sampled_from([1.0, 0.95, 0.8, 0.3]),
    repetition_penalty=st.sampled_from([1.0, 1.05, 1.3]),
)


def _logits(seed: int, vocab: int) -> np.ndarray:
    """Continuous random logits (no ties: which of two equal codes top-k keeps is not specified)."""
    return (np.random.default_rng(seed).standard_normal((1, vocab)) * 4).astype(np.float32)


class _Fixed:
    """A generator whose next uniform is chosen by the test."""

    def __init__(self, u: float):
        self.u = u

    def random(self) -> float:
        return self.u


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), history=st.lists(st.integers(0, 3071), max_size=30), opts=options)
def test_codebook_0_scores_and_warp_are_the_references(talker, seed, history, opts):
    logits = _logits(seed, talker.stack.vocab_size)
    rule = FirstCodeRule(talker)
    ours = rule.scores(logits, history, opts)
    theirs = process_talker_logits(torch.from_numpy(logits), history, opts, rule.eos, torch.from_numpy(rule.suppress))
    assert np.array_equal(ours, theirs.numpy())  # the same fp32 operations, -inf where masked
    kept = np.isfinite(warp(ours, opts.temperature, opts.top_k, opts.top_p))
    theirs_kept = torch.isfinite(torch_warp(theirs, opts.temperature, opts.top_k, opts.top_p)).numpy()
    assert np.array_equal(kept, theirs_kept)
    assert np.array_equal(logits, _logits(seed, talker.stack.vocab_size))  # the caller's logits untouched


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), opts=options)
def test_a_draw_picks_the_code_whose_interval_holds_it(talker, seed, opts):
    scores = FirstCodeRule(talker).scores(_logits(seed, talker.stack.vocab_size), [], opts)
    probs = torch.softmax(torch_warp(torch.from_numpy(scores), opts.temperature, opts.top_k, opts.top_p),
                          dim=-1)[0].double().numpy()
    upper = np.cumsum(probs)
    lower = upper - probs
    for code in np.flatnonzero(probs > 1e-6)[:60]:  # intervals float64 resolves
        u = (lower[code] + upper[code]) / 2 / upper[-1]
        assert pick(scores, True, opts.temperature, opts.top_k, opts.top_p, _Fixed(u)) == code
    for u in (0.0, 1 - 1e-12):  # the ends never reach an excluded code
        assert probs[pick(scores, True, opts.temperature, opts.top_k, opts.top_p, _Fixed(u))] > 0
    assert pick(scores, False, opts.temperature, opts.top_k, opts.top_p, _Fixed(0.5)) == int(np.argmax(scores))


def test_draws_follow_the_distribution_and_the_seed(talker):
    """Many draws of one row's sampler land in proportion to the reference's probabilities; a seed
    repeats its draws exactly (codebook 0 and the predictor's uniforms, interleaved as in a frame)."""
    opts = SamplingOptions(temperature=1.0, top_k=6, repetition_penalty=1.0, min_new_tokens=0)
    logits = np.full((1, talker.stack.vocab_size), -30.0, np.float32)
    logits[0, :6] = np.log([0.4, 0.25, 0.15, 0.1, 0.06, 0.04])
    sampler = Sampler(talker, opts, seed=11)
    counts = np.bincount([sampler.first(logits, []) for _ in range(4000)], minlength=6)[:6]
    expected = TorchSampler(talker, opts, None)  # the reference's own processing of the same logits
    probs = torch.softmax(process_talker_logits(torch.from_numpy(logits), [], opts, expected.eos, expected.suppress),
                          dim=-1)[0, :6].numpy()
    assert np.abs(counts / 4000 - probs).max() < 0.03, (counts, probs)

    def run(seed):
        s = Sampler(talker, SamplingOptions(), seed)
        return [(s.first(logits, [1, 2]), s.uniforms(15).tolist()) for _ in range(5)]

    assert run(7) == run(7) and run(7) != run(8)
    assert not Sampler(talker, SamplingOptions(sub_do_sample=False), 7).uniforms(15).any()
