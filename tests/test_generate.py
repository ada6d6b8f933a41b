"""Generation behaviour beyond equality: stopping, the runaway guard, seeds, bf16."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hearth
from hearth import FrameBudget, InputError


def test_max_new_tokens_gives_one_frame_less(engine):
    for m in (1, 2, 7):
        codes = engine.generate_codes("Counting frames.", "vivian", seed=1, max_new_tokens=m, budget=None)
        assert codes.codes.shape == (m - 1, 16)


def test_runaway_guard(engine, caplog):
    budget = FrameBudget(base=3, per_token=1)
    text = "Two words"
    with caplog.at_level("WARNING"):
        codes = engine.generate_codes(text, "vivian", seed=2, max_new_tokens=500, budget=budget)
    n_tokens = len(engine.prompt(text).text)
    # Random weights almost never emit EOS, so the guard must be what stopped it.
    assert codes.stats.stop_reason == "frame_budget"
    assert codes.codes.shape[0] == budget.frames(n_tokens)
    assert any("runaway guard" in r.message for r in caplog.records)


def test_seed_reproducible_and_distinct(engine):
    a = engine.generate_codes("Same seed.", "serena", seed=10, max_new_tokens=8).codes
    b = engine.generate_codes("Same seed.", "serena", seed=10, max_new_tokens=8).codes
    c = engine.generate_codes("Same seed.", "serena", seed=11, max_new_tokens=8).codes
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_codes_in_range(engine):
    codes = engine.generate_codes("Range check.", "sohee", seed=4, max_new_tokens=20).codes
    assert codes[:, 0].max() < 2048  # control tokens are suppressed
    assert codes[:, 1:].max() < 2048 and codes.min() >= 0


def test_eos_stops_and_is_not_a_frame(engine):
    """Forcing EOS on the third step (by biasing codec_head) ends generation after two frames."""
    talker = engine.lm.talker  # the torch reference's modules
    head = talker.codec_head.weight
    eos = engine.config.talker.codec_eos_id
    saved = head[eos].clone()
    try:
        head[eos] = talker.model.norm.weight * 1000.0  # dominates every other logit
        codes = engine.generate_codes("Stop soon.", "ryan", greedy=True, max_new_tokens=50, budget=None)
    finally:
        head[eos] = saved
    # EOS is masked for the first two tokens (min_new_tokens=2), then wins.
    assert codes.stats.stop_reason == "eos"
    assert codes.codes.shape[0] == 2
    assert (codes.codes[:, 0] != eos).all()


def test_bfloat16_runs(tiny_dir):
    engine = hearth.load(tiny_dir, backend="torch", dtype="bfloat16")
    audio = engine.synthesize("Half precision.", "eric", "chinese", seed=6, max_new_tokens=5)
    assert audio.samples.shape == (4 * 1920,)
    assert engine.lm.talker.codec_head.weight.dtype == torch.bfloat16


@pytest.mark.parametrize("kwargs", [{"voice": "nobody"}, {"language": "Elvish"}, {"text_mode": "fast"}])
def test_api_rejects_bad_arguments(engine, kwargs):
    args = {"text": "Hi.", "voice": "vivian", "language": "auto"} | kwargs
    with pytest.raises(InputError):
        engine.generate_codes(args.pop("text"), args.pop("voice"), args.pop("language"), **args)


def test_streaming_frames_iterator_is_lazy(engine):
    gen = engine.frames("Lazy frames.", "aiden", options=engine.sampling(greedy=True, max_new_tokens=100))
    it = iter(gen)
    first = next(it)
    assert first.shape == (16,)
    assert gen.stats.frames == 1
    it.close()
