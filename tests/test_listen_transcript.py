"""Reading Qwen3-ASR's output and preparing its input as qwen-asr does: the parse into language and
text, the cut of runaway repetitions, the merge of languages, the audio's scaling and the cutting
of long recordings (property tests against the official functions)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from qwen_asr.inference.utils import (
    detect_and_fix_repetitions,
    merge_languages,
    normalize_audio_input,
    parse_asr_output,
    split_audio_into_chunks,
)

from hearth.errors import InputError
from hearth.listen import audio as listen_audio
from hearth.listen.audio import prepare_audio, split_long_audio
from hearth.listen.transcript import cut_repetitions, parse_transcript
from hearth.listen.transcript import merge_languages as hearth_merge

# Few letters, so that runs and repeated patterns are common.
REPETITIVE = st.text(alphabet="ab c\n", max_size=300)
PIECES = st.sampled_from(["language English", "language None", "language  chINese ", "<asr_text>", "\n", " ",
                          "hello", "ha", "哈", "LANGUAGE German", "language", "x" * 25, "ab" * 21])


@settings(max_examples=400, deadline=None)
@given(text=REPETITIVE)
@example("a" * 21)
@example("ab" * 20)
@example("xy" + "abc" * 20 + "d" * 30 + "q")
def test_repetitions_are_cut_as_the_official(text):
    assert cut_repetitions(text) == detect_and_fix_repetitions(text)


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(PIECES, max_size=8), forced=st.sampled_from([None, "", "English"]))
@example(["language English", "<asr_text>", "hello"], None)
@example(["\n", "language None", "<asr_text>", " hello "], None)
@example(["hello", "\n", "language German", "<asr_text>", "x"], None)
def test_the_output_is_parsed_as_the_official(parts, forced):
    raw = "".join(parts)
    assert parse_transcript(raw, forced) == parse_asr_output(raw, user_language=forced)


@given(st.lists(st.sampled_from(["", " ", "English", "Chinese", " English "]), max_size=6))
def test_languages_merge_as_the_official(languages):
    assert hearth_merge(languages) == merge_languages(languages)


@settings(max_examples=50, deadline=None)
@given(peak=st.sampled_from([0.25, 1.0, 1.5, 300.0, 32767.0]), seed=st.integers(0, 1000),
       dtype=st.sampled_from([np.float32, np.float64, np.int16]))
def test_audio_is_scaled_as_the_official(peak, seed, dtype):
    raw = np.random.default_rng(seed).uniform(-1, 1, 3000) * peak
    audio = raw.astype(dtype)
    assert np.array_equal(prepare_audio(audio, 16000), normalize_audio_input((audio, 16000)))


@settings(max_examples=25, deadline=None)
@given(seconds=st.floats(8.0, 40.0), limit=st.sampled_from([6.0, 7.5, 10.0]), seed=st.integers(0, 10**6),
       quiet=st.booleans())
def test_long_recordings_are_cut_as_the_official(seconds, limit, seed, quiet):
    rng = np.random.default_rng(seed)
    samples = (0.3 * rng.standard_normal(int(seconds * 16000))).astype(np.float32)
    if quiet:  # stretches of silence where the cuts should go
        for at in rng.integers(0, samples.shape[0], 6):
            samples[at : at + 4000] = 0.0
    ours = split_long_audio(samples, limit)
    theirs = split_audio_into_chunks(samples, 16000, limit)
    assert [(p.offset, p.samples.shape[0]) for p in ours] == [(o, c.shape[0]) for c, o in theirs]
    assert all(np.array_equal(p.samples, c) for p, (c, _) in zip(ours, theirs, strict=True))


def test_a_short_last_piece_is_padded_to_half_a_second():
    samples = np.ones(int(16000 * 6.2), np.float32)
    samples[95200:96800] = 0.0  # the quietest place: the cut goes to its start
    pieces = split_long_audio(samples, 6.0)
    assert [(p.offset, p.samples.shape[0]) for p in pieces] == [(0.0, 95200), (5.95, 8000)]
    assert np.array_equal(pieces[1].samples[:4000], samples[95200:]) and not pieces[1].samples[4000:].any()


@pytest.mark.parametrize("audio, rate, message", [
    (np.zeros(16000, np.float32), 44100, "resample"),
    (np.zeros(0, np.float32), 16000, "at least"),
    (np.zeros((16000, 2), np.float32), 16000, "mono"),
    (np.array([0.1, np.nan] * 200, np.float32), 16000, "NaN"),
    (np.array(["a"] * 300), 16000, "numbers"),
])
def test_bad_audio_is_refused_with_what_to_do(audio, rate, message):
    with pytest.raises(InputError, match=message) as e:
        prepare_audio(audio, rate)
    assert e.value.param == "audio"


def test_one_channel_as_a_column_is_mono():
    column = np.full((2000, 1), 0.5, np.float32)
    assert prepare_audio(column, 16000).shape == (2000,)
    assert listen_audio.SAMPLE_RATE == 16000
