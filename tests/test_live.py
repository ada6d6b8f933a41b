"""Live utterances (`Engine.open`): text pushed while the model speaks.

The guarantee: for any split of a text into pieces and any arrival timing, the codes equal the
whole-text interleaved codes for the same seed, which equal the official package's streaming text
mode (torch reference, bit for bit); on OpenVINO, equal across splits and timings.
"""

from __future__ import annotations

import itertools
import random
import threading
import time

import numpy as np
import pytest
from official import official_codes
from test_official_equality import reference_ids

from hearth import InputError
from hearth.streaming.live import BatchInvariance

TEXTS = [
    "Hi.",  # fewer text tokens than the batch-invariance threshold: rows wait for the end
    "It's a fine day; isn't it? Let's walk to the river and back before the rain comes in.",
    "你好，欢迎回家。今天的天气怎么样？",
    "Numbers 3.14 and 1,000, emoji 😀, then  double  spaces\nand a new line.",
]


def pieces(text, cuts):
    """`text` cut at the given positions."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(text)}), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def speak_live(engine, text, cuts, delays, **kwargs):
    """Push `text` cut at `cuts` from another thread, sleeping `delays` between pieces; the codes."""
    with engine.open("ryan", "english", **kwargs) as live:
        def writer():
            for piece, delay in zip(pieces(text, cuts), delays, strict=False):
                live.push(piece)
                time.sleep(delay)
            live.end()

        t = threading.Thread(target=writer)
        t.start()
        chunks = list(live)
        t.join(timeout=60)
    return np.concatenate([c.codes for c in chunks]) if chunks else np.zeros((0, 16), np.int64), live


def random_splits(text, n, seed):
    rnd = random.Random(seed)
    out = [([], [0.0])]  # all at once
    for _ in range(n):
        cuts = [rnd.randrange(1, max(2, len(text))) for _ in range(rnd.randrange(1, 15))]
        out.append((cuts, [rnd.choice([0.0, 0.001, 0.02, 0.08]) for _ in range(len(cuts) + 1)]))
    out.append((list(range(1, len(text))), [0.003] * len(text)))  # one character at a time
    return out


@pytest.mark.parametrize("greedy", [True, pytest.param(False, marks=pytest.mark.slow)], ids=["greedy", "sampled"])
def test_live_codes_equal_the_official_streaming_mode(official, engine, reference_tokenizer, greedy):
    """Torch reference: every split and timing gives the whole-text codes, and those are the official ones."""
    text = TEXTS[1]
    expected = official_codes(official, reference_ids(reference_tokenizer, text), "ryan", "english",
                              text_mode="interleaved", greedy=greedy, seed=3, max_new_tokens=40)
    for cuts, delays in random_splits(text, 4, seed=1):
        got, live = speak_live(engine, text, cuts, delays, greedy=greedy, seed=3, max_new_tokens=40, budget=None)
        assert np.array_equal(got, expected), (cuts, delays)


@pytest.mark.parametrize("text", TEXTS)
def test_live_codes_equal_whole_text_codes(any_engine, text):
    whole = any_engine.generate_codes(text, "ryan", "english", text_mode="interleaved", seed=8,
                                      max_new_tokens=30).codes
    for cuts, delays in random_splits(text, 2, seed=len(text)):
        got, live = speak_live(any_engine, text, cuts, delays, seed=8, max_new_tokens=30)
        assert np.array_equal(got, whole), (cuts, delays)


def test_audio_starts_before_the_text_is_complete(fast_engine):
    text = ("Once upon a time there was a small house by the river, and in it lived "
            "an old clock that spoke every hour of the day and night.")
    text_words = text.split()
    with fast_engine.open("ryan", "english", seed=1, max_new_tokens=40) as live:
        live.push(" ".join(text_words[:16]) + " ")
        first = next(live)  # the rest of the text has not been sent
        assert first.frames >= 1 and len(first.samples) == first.frames * 1920
        live.push(" ".join(text_words[16:]))
        live.end()
        rest = list(live)
    whole = fast_engine.generate_codes(" ".join(text_words), "ryan", "english", text_mode="interleaved", seed=1,
                                       max_new_tokens=40).codes
    assert np.array_equal(np.concatenate([first.codes] + [c.codes for c in rest]), whole)


def test_cancel_while_waiting_for_text(fast_engine):
    live = fast_engine.open("ryan", "english", seed=1, max_new_tokens=500)
    live.push("Waiting for the rest of this sentence which never")
    first = next(live)
    assert first.frames >= 1
    t0 = time.monotonic()
    threading.Timer(0.3, live.cancel).start()
    list(live)  # ends once cancelled, though the text never ended
    assert time.monotonic() - t0 < 10
    assert live.generation.stop_reason == "closed"
    live.close()


def test_empty_and_bad_input(fast_engine):
    with fast_engine.open("ryan") as live:
        live.end()
        assert sum(c.frames for c in live) == 0 and live.generation.stop_reason == "empty"
        live.end()  # again: nothing happens
        with pytest.raises(InputError, match="ended"):
            live.push("more")
    with fast_engine.open("ryan") as live:
        with pytest.raises(InputError, match="string"):
            live.push(5)  # type: ignore[arg-type]
        live.cancel()
        with pytest.raises(InputError, match="cancelled"):
            live.push("late")
    with pytest.raises(InputError, match="unknown voice"):
        fast_engine.open("bob")


def test_batch_invariance_rule():
    rule = BatchInvariance(threshold=12, block=4)
    assert rule.safe(0, 12) and rule.safe(11, 12) and rule.safe(3, 4) and rule.safe(7, 9)
    assert not rule.safe(0, 3) and not rule.safe(4, 7) and not rule.safe(8, 11)
    assert not BatchInvariance(None, 0).safe(0, 1000)


def test_batch_invariance_measured_on_the_engine(engine):
    """The measured rule holds for the engine's own projection: a row from a large padded batch
    equals the row of the whole batch wherever the rule says so (checked on sizes it did not probe)."""
    rule = engine.batch_invariance()
    ids = np.random.default_rng(5).integers(0, engine.config.talker.text_vocab_size, 300).tolist()
    if rule.threshold is None:
        pytest.skip("no batch size makes rows final on this machine: live rows wait for the end of the text")
    checked = 0
    for m in (7, 13, 45, 77, 150, 300):
        whole = engine.lm.embed_text(ids[:m])[0]
        for k in range(0, m, max(1, m // 7)):
            if rule.safe(k, m):
                padded = engine.lm.embed_text([ids[k]] * 64)[0, 0]
                assert np.array_equal(padded, whole[k]), (m, k)
                checked += 1
    assert checked >= 30  # every size from the threshold on is checked, at several rows


def test_open_takes_the_options_stream_takes(engine):
    """One set of options for every entry: `open` takes the speed and the text mode as `stream` does
    (the speed changes the audio, "whole" is refused: text in pieces is interleaved), and options
    made once (`speech=`) give what the same keywords give; both at once is refused."""
    text = "The same options, in pieces."

    def spoken(**options):
        with engine.open("ryan", "english", seed=9, max_new_tokens=6, **options) as live:
            live.push(text)
            live.end()
            return np.concatenate([c.samples for c in live])

    plain = spoken()
    assert np.array_equal(spoken(text_mode="interleaved"), plain)
    faster = spoken(speed=1.5)
    assert 0 < faster.size < plain.size
    with pytest.raises(InputError, match="interleaved") as e:
        engine.open("ryan", text_mode="whole")
    assert e.value.param == "text_mode"
    speech = engine.speech_options("ryan", "english", seed=9, max_new_tokens=6, text_mode="interleaved")
    assert np.array_equal(engine.generate_codes(text, speech=speech).codes,
                          engine.generate_codes(text, "ryan", "english", seed=9, max_new_tokens=6,
                                                text_mode="interleaved").codes)
    with pytest.raises(InputError, match="leave out voice, seed") as e:
        engine.stream(text, "ryan", speech=speech, seed=3)
    assert e.value.param == "voice"
