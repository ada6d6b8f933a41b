"""Hearth's numpy log-mel features against qwen-asr's processor (transformers' WhisperFeatureExtractor,
torch path).

Not bit-exact, by construction: the official STFT runs in float32 (torch's FFT), Hearth's in
float64 (numpy's), and their roundings differ. A float32 FFT's error in a bin is a few float32
epsilons of the frame's amplitude, so it is a larger share of a bin far below the frame's loudest:
the tolerance grows with that depth (`agree`). How large that rounding is depends on the FFT torch
was built with and on the CPU (MKL's float32 FFT on a Sapphire Rapids-class Xeon rounds a pure
sweep's leakage floor to 5.1e-5 of the exact value, against 4.8e-5 on Zen 4): features span about
2 units, and the measured worst case sits at a fifth of `agree`'s bound on both. Both stay within
that bound of an exact float64 computation. The mel filters, the frame count and the silence floor
are exact.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sounds import SIGNALS, noise
from transformers import WhisperFeatureExtractor

from hearth.checkpoint.asr_config import FeatureConfig
from hearth.listen.features import LogMel, hann_window, mel_filters

TOLERANCE = 5e-5


def agree(ours: np.ndarray, theirs: np.ndarray) -> bool:
    """Equal to the float32 FFT's rounding: 1e-5, plus 1e-7 (about two float32 epsilons, in
    feature units) times how many times smaller the bin's amplitude is than its frame's loudest.
    One feature unit is four decades of power, so that ratio is 10 ** (2 * depth)."""
    depth = (ours.max(axis=0, keepdims=True) - ours).astype(np.float64)
    return bool(np.all(np.abs(ours - theirs) <= 1e-5 + 1e-7 * 10.0 ** (2.0 * depth)))


@pytest.fixture(scope="module")
def official_fe():
    return WhisperFeatureExtractor(feature_size=128, return_attention_mask=True)


@pytest.fixture(scope="module")
def logmel():
    return LogMel(FeatureConfig(feature_size=128, sampling_rate=16000, hop_length=160, n_fft=400))


def official(fe, samples: np.ndarray) -> np.ndarray:
    out = fe(samples, sampling_rate=16000, padding=True, truncation=False, return_attention_mask=True,
             return_tensors="np")
    frames = int(out["attention_mask"][0].sum())  # what qwen-asr passes on
    return out["input_features"][0][:, :frames]


def exact(fe, samples: np.ndarray) -> np.ndarray:
    """The same recipe in float64 throughout."""
    x = torch.from_numpy(samples.astype(np.float64))
    spec = torch.stft(x, 400, 160, window=torch.hann_window(400, dtype=torch.float64), return_complex=True)
    mel = torch.from_numpy(fe.mel_filters).T @ (spec[..., :-1].abs() ** 2)
    log = torch.clamp(mel, min=1e-10).log10()
    return ((torch.maximum(log, log.max() - 8.0) + 4.0) / 4.0).numpy()


class _LibmNumpy:
    """numpy with its float64 log and exp taken one value at a time from the C library: on AVX-512
    numpy's own (SVML) are an ulp or so off, and the filters' cancelling edges carry that to 2e-12."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def log(x):
        return np.vectorize(math.log, otypes=[np.float64])(x)

    @staticmethod
    def exp(x):
        return np.vectorize(math.exp, otypes=[np.float64])(x)


@pytest.mark.parametrize("bins", [128, 80])
def test_the_mel_filters_are_transformers_own(bins, monkeypatch):
    """transformers' recipe, its bits wherever its numpy's log and exp are the C library's, as they
    are on AVX2 (`fixed_math` makes Hearth's so on every CPU); within 1e-15 of its filters anywhere."""
    import transformers.audio_utils

    ours = mel_filters(bins, 400, 16000)
    assert np.abs(ours - WhisperFeatureExtractor(feature_size=bins).mel_filters).max() <= 1e-15
    monkeypatch.setattr(transformers.audio_utils, "np", _LibmNumpy())
    assert np.array_equal(ours, WhisperFeatureExtractor(feature_size=bins).mel_filters)


def test_the_window_is_torch_s_to_the_last_bits():
    assert np.abs(hann_window(400) - torch.hann_window(400).numpy()).max() <= 1.2e-7


@pytest.mark.parametrize("signal", ["noise", "sweep", "bursts"])
@pytest.mark.parametrize("seconds", [0.0126, 0.3, 1.0, 2.5, 6.07, 21.5])
def test_the_features_equal_the_official_to_float32_rounding(official_fe, logmel, signal, seconds):
    samples = SIGNALS[signal](seconds)
    ours, theirs = logmel(samples), official(official_fe, samples)
    assert ours.shape == theirs.shape == (128, samples.shape[0] // 160) and ours.dtype == np.float32
    assert np.abs(ours - theirs).max() <= 2 * TOLERANCE and agree(ours, theirs)
    # Rounding on both sides: each is as near to exact arithmetic as to the other.
    truth = exact(official_fe, samples)
    assert agree(ours, truth) and agree(theirs, truth)
    assert np.abs(ours - truth).max() <= TOLERANCE and np.abs(theirs - truth).max() <= 2 * TOLERANCE


def test_silence_is_the_floor_exactly(official_fe, logmel):
    samples = SIGNALS["silence"](1.3)
    assert np.array_equal(logmel(samples), official(official_fe, samples))
    assert np.all(logmel(samples) == np.float32(-1.5))


@settings(max_examples=40, deadline=None)
@given(length=st.integers(201, 40_000), level=st.sampled_from([1e-4, 0.01, 0.3, 1.0]), seed=st.integers(0, 10**6))
def test_any_length_and_level(official_fe, logmel, length, level, seed):
    samples = np.clip(noise(length / 16000, seed, level), -1, 1)[:length]
    if samples.shape[0] < 201:
        return
    ours, theirs = logmel(samples), official(official_fe, samples)
    assert ours.shape == theirs.shape
    assert agree(ours, theirs)


def test_long_audio_is_transformed_in_blocks_without_a_seam(logmel):
    """Frames are transformed 2048 at a time: the result is the whole transform's."""
    samples = noise(30.0, 9)
    whole = LogMel(logmel.cfg)
    import hearth.listen.features as features

    blocks = features._BLOCK
    try:
        features._BLOCK = 10**9
        one_block = whole(samples)
    finally:
        features._BLOCK = blocks
    assert np.array_equal(logmel(samples), one_block)
