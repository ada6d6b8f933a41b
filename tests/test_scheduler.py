"""The scheduler: several clients on separate threads, each with its own audio channel and pace.

Every client must get exactly its own audio (each sentence's codes equal a clean single run of
that sentence), a cancel or a fault must touch only its request, a slow consumer must cost the
others nothing, and a full scheduler must say "busy" at once. On every backend.
"""

from __future__ import annotations

import itertools
import random
import threading
import time

import numpy as np
import pytest
from faults import failing_vocoder
from solo import solo_codes
from threads import at_once

from hearth import InputError
from hearth.runtime.scheduler import Busy, Scheduler, SentenceFailed
from hearth.text.normalize import normalize
from hearth.text.sentences import split_sentences

TEXTS = [
    ("First client speaks. It has two sentences.", "ryan", "english", 11),
    ("Zweiter Kunde hier. Noch ein Satz. Und ein dritter.", "aiden", "german", 22),
    ("第三个客户。很短。", "vivian", "chinese", 33),
]


def consume(request, delay_s=0.0):
    """Take every chunk (optionally slowly); the codes of each sentence, in order."""
    per_sentence: dict[int, list[np.ndarray]] = {}
    for chunk in request:
        per_sentence.setdefault(chunk.sentence, []).append(chunk.codes)
        assert len(chunk.samples) == chunk.frames * 1920
        if delay_s:
            time.sleep(delay_s)
    return {i: np.concatenate(c) for i, c in per_sentence.items()}


def test_concurrent_clients_each_get_their_own_audio(any_engine):
    engine = any_engine

    def client(k):
        text, voice, language, seed = TEXTS[k]
        request = scheduler.submit(text, voice, language, seed=seed, max_new_tokens=9)
        return request, consume(request, delay_s=0.02 * k)  # each at its own pace

    with Scheduler(engine) as scheduler:
        results = at_once([lambda k=k: client(k) for k in range(len(TEXTS))], timeout=300)
    for k, (_, voice, language, seed) in enumerate(TEXTS):
        assert not isinstance(results[k], BaseException), results[k]
        request, codes = results[k]
        assert request.status == "done" and not request.errors
        assert len(codes) == len(request.sentences) >= 2
        for s in request.sentences:
            assert s.seed == seed + s.index
            assert np.array_equal(codes[s.index], solo_codes(engine, s.text, voice, language, s.seed, 9))
        assert request.max_ahead <= 2


def test_cancelling_one_request_leaves_the_others_untouched(any_engine):
    engine = any_engine
    with Scheduler(engine) as scheduler:
        doomed = scheduler.submit("One. Two. Three. Four. Five. Six.", "dylan", seed=5, max_new_tokens=40)
        other = scheduler.submit("The other client. Still talking.", "serena", "english", seed=6, max_new_tokens=9)
        first = doomed.get(timeout=120)
        assert first is not None and first.sentence == 0
        t0 = time.monotonic()
        doomed.cancel()
        assert doomed.get(timeout=5) is None  # the consumer's iteration ends at once
        assert time.monotonic() - t0 < 1.0
        assert doomed.status == "cancelled" and doomed.wait(5)
        assert len(doomed.sentences) <= 3  # nothing generated after the cancel
        assert all(s.status == "cancelled" for s in doomed.sentences)
        codes = consume(other)
    assert other.status == "done"
    for s in other.sentences:
        assert np.array_equal(codes[s.index], solo_codes(engine, s.text, "serena", "english", s.seed, 9))


def test_a_slow_consumer_costs_the_others_nothing(engine):
    with Scheduler(engine) as scheduler:
        idle = scheduler.submit(" ".join(f"Sentence {i}." for i in range(8)), "eric", seed=1, max_new_tokens=6)
        t0 = time.monotonic()
        busy = scheduler.submit("I am read at once. Twice.", "sohee", "korean", seed=2, max_new_tokens=6)
        consume(busy)
        assert busy.status == "done" and time.monotonic() - t0 < 120
        time.sleep(0.3)
        assert len(idle.sentences) == 2  # the unread request holds two sentences, no more
        assert idle.max_ahead == 2
        consume(idle)  # taking them lets it go on to the end
        assert idle.status == "done" and len(idle.sentences) == 8


def test_full_scheduler_answers_busy_at_once(engine):
    with Scheduler(engine, max_active=1, max_waiting=1) as scheduler:
        held = [scheduler.submit(f"Held request {i}. With more to say.", "ryan", seed=i, max_new_tokens=6)
                for i in range(2)]
        t0 = time.monotonic()
        with pytest.raises(Busy, match="busy") as info:
            scheduler.submit("One too many.", "ryan")
        assert time.monotonic() - t0 < 0.5 and info.value.retry_after_s > 0
        held[0].cancel()
        held[1].cancel()
        again = scheduler.submit("Room again.", "ryan", seed=3, max_new_tokens=6)
        consume(again)
        assert again.status == "done"


def test_a_fault_fails_one_sentence_of_one_request(any_engine, monkeypatch):
    engine = any_engine
    failing_vocoder(engine, monkeypatch, at=1, error=RuntimeError("injected vocoder fault"))
    with Scheduler(engine) as scheduler:
        hit = scheduler.submit("This one breaks. This one plays.", "aiden", seed=7, max_new_tokens=9)
        codes = consume(hit)
        strict = scheduler.submit("Fine. Fine again.", "aiden", seed=8, max_new_tokens=9)
        consume(strict)
    monkeypatch.undo()
    assert [s.status for s in hit.sentences] == ["failed", "done"]
    assert "injected vocoder fault" in hit.sentences[0].error and hit.status == "done"
    assert np.array_equal(codes[1], solo_codes(engine, hit.sentences[1].text, "aiden", "auto", 8, 9))
    assert strict.status == "done" and not strict.errors


def test_on_failure_raise_ends_the_request_with_the_error(engine, monkeypatch):
    failing_vocoder(engine, monkeypatch, at=2, error=RuntimeError("injected vocoder fault"))
    with Scheduler(engine) as scheduler:
        request = scheduler.submit("Breaks in the first. Never spoken.", "ryan", seed=1, max_new_tokens=20,
                                   chunk_frames=2, first_chunk_frames=1, on_failure="raise")
        with pytest.raises(SentenceFailed, match="sentence 1 failed") as info:
            consume(request)
        assert "injected vocoder fault" in str(info.value.__cause__)
        assert request.status == "failed" and len(request.sentences) == 1


@pytest.mark.parametrize(
    "kwargs,fragment",
    [
        ({"text": ""}, "empty"),
        ({"text": "?!"}, "nothing to speak"),
        ({"voice": "bob"}, "vivian"),
        ({"language": "klingon"}, "english"),
        ({"seed": -1}, "seed"),
        ({"chunk_frames": 0}, "chunk_frames"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"text_mode": "fast"}, "text mode"),
    ],
)
def test_bad_requests_are_refused_and_the_scheduler_stays_up(engine, kwargs, fragment):
    with Scheduler(engine) as scheduler:
        args = {"text": "Hello.", "voice": "ryan"} | kwargs
        with pytest.raises(InputError, match=fragment):
            scheduler.submit(args.pop("text"), args.pop("voice"), **args)
        request = scheduler.submit("Still here.", "ryan", seed=1, max_new_tokens=4)
        consume(request)
        assert request.status == "done"


def test_open_request_speaks_each_sentence_as_it_completes(any_engine):
    """Text pushed in pieces from another thread, with pauses: the first sentence is spoken before
    the text is complete, and the audio equals `submit` of the whole text with the same seed."""
    engine = any_engine
    pieces = ["Hello the", "re, neighb", "our. It costs 3.", "5 euros", " today! And", " that is all"]
    whole = "".join(pieces)
    with Scheduler(engine) as scheduler:
        expected = consume(scheduler.submit(whole, "ryan", "english", seed=5, max_new_tokens=7))
        request = scheduler.open("ryan", "english", seed=5, max_new_tokens=7)
        first_audio_after: list[int] = []
        pushed = [0]

        def writer():
            for piece in pieces:
                request.push(piece)
                pushed[0] += 1
                time.sleep(0.3)
            request.end()

        t = threading.Thread(target=writer)
        t.start()
        got: dict[int, list[np.ndarray]] = {}
        for chunk in request:
            if not got:
                first_audio_after.append(pushed[0])
            got.setdefault(chunk.sentence, []).append(chunk.codes)
        t.join(timeout=60)
    assert request.status == "done" and request.total_sentences == 3
    assert [s.text for s in request.sentences] == ["Hello there, neighbour.",  # (as spoken: docs/text.md)
                                                   "It costs three point five euros today!", "And that is all"]
    assert {i: np.concatenate(c) for i, c in got.items()}.keys() == expected.keys()
    for i, codes in expected.items():
        assert np.array_equal(np.concatenate(got[i]), codes)
    assert first_audio_after[0] < len(pieces)  # audio came while text was still arriving


def test_open_request_edge_cases(engine):
    with Scheduler(engine, max_active=1, max_waiting=1) as scheduler:
        empty = scheduler.open("ryan")
        empty.push("... 😀")
        empty.end()
        assert empty.get(timeout=30) is None and empty.status == "done" and empty.total_sentences == 0
        idle = scheduler.open("ryan")  # holds its place while no text comes
        other = scheduler.submit("Still served.", "ryan", max_new_tokens=3)
        assert list(other) and other.status == "done"
        idle.cancel()
        idle.push("After the cancel.")  # ignored, not an error
        assert idle.get(timeout=5) is None and idle.cancelled
        done = scheduler.submit("Whole.", "ryan", max_new_tokens=3)
        with pytest.raises(InputError, match="takes no more text"):
            done.push("more")
        late = scheduler.open("ryan")
        late.end()
        with pytest.raises(InputError, match="takes no more text"):
            late.push("more")
        with pytest.raises(InputError, match="must be a string"):
            done.push(5)  # type: ignore[arg-type]
        assert list(done) and list(late) == []
        assert scheduler.idle()


LIVE_TEXT = ("Let us walk down to the river and back before the rain comes in, then sit by the fire and talk. "
             "你好，欢迎回家。 Numbers 3.14 and 1,000, emoji 😀 too!")
FIRST_END = LIVE_TEXT.index("talk.") + 5  # the first sentence is complete from here on


def live_writer(request, text, cuts, delays, hold_at=None, released=None, log=None):
    """Push `text` cut at `cuts` (sleeping `delays` between pieces); before the piece that reaches
    `hold_at`, wait (bounded) for `released` and log whether it came."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(text)}), len(text)]
    for (a, b), delay in zip(itertools.pairwise(bounds), itertools.cycle(delays), strict=False):
        if hold_at is not None and a < hold_at <= b:
            log.append(released.wait(timeout=120))
        request.push(text[a:b])
        time.sleep(delay)
    request.end()


@pytest.mark.parametrize("split_seed", [1, 2])
def test_live_request_speaks_a_sentence_before_it_is_written(any_engine, split_seed):
    """Interleaved text pushed in random pieces: audio starts before the first sentence is complete
    (the writer holds its end back until audio has come), and each sentence's codes equal `submit`
    of the whole text in the interleaved mode with the same seed."""
    engine = any_engine
    rnd = random.Random(split_seed)
    cuts = [rnd.randrange(1, len(LIVE_TEXT)) for _ in range(rnd.randrange(5, 25))]
    cuts.append(FIRST_END - 3)  # the piece that ends the first sentence comes after the hold
    kwargs = dict(seed=6, max_new_tokens=14, text_mode="interleaved")
    with Scheduler(engine) as scheduler:
        expected = consume(scheduler.submit(LIVE_TEXT, "ryan", "english", **kwargs))
        request = scheduler.open("ryan", "english", **kwargs)
        first_audio, held = threading.Event(), []
        t = threading.Thread(target=live_writer, args=(request, LIVE_TEXT, cuts, [0.0, 0.01, 0.03], FIRST_END,
                                                       first_audio, held))
        t.start()
        got: dict[int, list[np.ndarray]] = {}
        for chunk in request:
            first_audio.set()
            got.setdefault(chunk.sentence, []).append(chunk.codes)
        t.join(timeout=60)
    spoken = normalize(LIVE_TEXT, "english").text  # what is said: the sentences of the text as it is meant
    assert request.status == "done" and [s.text for s in request.sentences] == list(split_sentences(spoken))
    assert got.keys() == expected.keys()
    for i, codes in expected.items():
        assert np.array_equal(np.concatenate(got[i]), codes), i
    if engine.batch_invariance().threshold is not None:  # else rows are only known once the text ends
        assert held == [True]  # audio came while the writer held back the end of the first sentence


def test_a_live_request_waiting_for_text_holds_nobody_up(any_engine):
    """While a live request waits for the rest of its sentence, other requests are generated; its
    own codes are untouched by them; a cancel while it waits ends it at once."""
    engine = any_engine
    kwargs = dict(seed=4, max_new_tokens=14, text_mode="interleaved")
    with Scheduler(engine, max_active=2) as scheduler:
        expected = consume(scheduler.submit(LIVE_TEXT, "ryan", "english", **kwargs))
        other_text = ("Another client.", "aiden", "english")
        other_expected = consume(scheduler.submit(*other_text, seed=9, max_new_tokens=6))
        live = scheduler.open("ryan", "english", **kwargs)
        live.push("Let us walk down to the")  # too few words for 14 frames: it starts, then waits
        deadline = time.monotonic() + 60
        while not live.sentences and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live.sentences and live.sentences[0].status == "generating"
        other = scheduler.submit(*other_text, seed=9, max_new_tokens=6)
        box: dict[str, object] = {}
        t = threading.Thread(target=lambda: box.setdefault("codes", consume(other)))
        t.start()
        t.join(timeout=120)
        assert "codes" in box, "a request waited for another request's text"
        assert np.array_equal(box["codes"][0], other_expected[0])
        assert live.sentences[0].status == "generating"  # still waiting for its text
        live.push(LIVE_TEXT[len("Let us walk down to the") :])
        live.end()
        assert np.array_equal(consume(live)[0], expected[0])

        waiting = scheduler.open("ryan", "english", **kwargs)
        waiting.push("Some words that")
        time.sleep(0.5)
        t0 = time.monotonic()
        waiting.cancel()
        assert waiting.get(timeout=10) is None and waiting.cancelled and time.monotonic() - t0 < 10
        deadline = time.monotonic() + 30
        while not scheduler.idle() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert scheduler.idle()
        assert list(scheduler.submit("Still fine.", "ryan", max_new_tokens=3))
