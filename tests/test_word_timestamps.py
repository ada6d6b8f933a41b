"""Word timestamps of Hearth's own speech, in the Python API (the scheduler with an aligner).

Random weights give meaningless times, so these test the structure: each sentence's words come
after its audio, in order, inside the sentence's span of the request's audio, pointing at the
characters of the request's text they came from; the audio is the same sample for sample with and
without them, and none of it waits for the aligner."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import hearth
from hearth.errors import InputError
from hearth.listen import Aligner
from hearth.runtime.request import RequestChunk
from hearth.runtime.words import SentenceWords

TEXT = "It's 21.5 °C in Berlin today. See you at 7:30 pm, Anna!"
OPTIONS = {"seed": 5, "max_new_tokens": 12}


@pytest.fixture(scope="module")
def word_aligner(own_aligner_dir):
    return Aligner.load(own_aligner_dir)


@pytest.fixture(scope="module")
def timed(engine, word_aligner):
    with hearth.Scheduler(engine, aligner=word_aligner) as scheduler:
        yield scheduler


def _events(request):
    return list(request.events())


def test_each_sentence_s_words_follow_its_audio_in_order_and_inside_it(timed):
    request = timed.submit(TEXT, "ryan", "english", word_timestamps=True, **OPTIONS)
    events = _events(request)
    assert request.status == "done"
    chunks = [e for e in events if isinstance(e, RequestChunk)]
    words = [e for e in events if isinstance(e, SentenceWords)]
    assert [w.sentence for w in words] == list(range(len(request.sentences))) == [0, 1]
    rate = chunks[0].sample_rate
    for event in words:  # after the sentence's last chunk; spanning exactly its audio
        last = max(i for i, e in enumerate(events) if isinstance(e, RequestChunk) and e.sentence == event.sentence)
        assert events.index(event) > last
        mine = [c for c in chunks if c.sentence == event.sentence]
        before = sum(len(c.samples) for c in chunks if c.sentence < event.sentence)
        assert event.offset == pytest.approx(before / rate, abs=1e-3)
        assert event.duration == pytest.approx(sum(len(c.samples) for c in mine) / rate, abs=1e-3)
        assert event.error is None and event.words
        for w in event.words:
            assert event.offset <= w.start_time <= w.end_time <= event.offset + event.duration + 1e-3
    times = [t for w in request.words for t in (w.start_time, w.end_time)]
    assert times == sorted(times)  # never back, across sentences too
    assert request.words == tuple(w for e in words for w in e.words)


def test_words_point_at_the_text_they_came_from(timed):
    request = timed.submit(TEXT, "ryan", "english", word_timestamps=True, **OPTIONS)
    _events(request)
    said = [(w.word, TEXT[w.source_start : w.source_end]) for w in request.words]
    assert said[0] == ("It's", "It's")
    assert ("point", "21.5 °C") in said and ("Celsius", "21.5 °C") in said  # a rule's words: what it read
    assert ("Berlin", "Berlin") in said and ("Anna", "Anna") in said
    assert ("thirty", "7:30 pm") in said
    starts = [w.source_start for w in request.words]
    assert starts == sorted(starts)


def test_ssml_and_text_in_pieces_point_into_their_own_text(timed):
    ssml = '<speak>Hello <say-as interpret-as="cardinal">12</say-as> friends.<break time="300ms"/>Bye now.</speak>'
    request = timed.submit(ssml, "ryan", "english", text_format="ssml", word_timestamps=True, **OPTIONS)
    _events(request)
    said = {w.word: ssml[w.source_start : w.source_end] for w in request.words}
    assert said["Hello"] == "Hello" and said["twelve"] == "12" and said["Bye"] == "Bye"
    request = timed.open("ryan", "english", word_timestamps=True, text_mode="interleaved", **OPTIONS)
    pieces = ["It's 21", ".5 °C in Ber", "lin today. See you", " at 7:30 pm, Anna!"]
    for piece in pieces:
        request.push(piece)
    request.end()
    _events(request)
    whole = "".join(pieces)
    said = [(w.word, whole[w.source_start : w.source_end]) for w in request.words]
    assert ("Berlin", "Berlin") in said and ("five", "21.5 °C") in said and said[-1] == ("Anna", "Anna")


def test_the_audio_is_the_same_and_never_waits_for_the_aligner(engine, word_aligner, monkeypatch):
    with hearth.Scheduler(engine) as plain:
        expected = np.concatenate([c.samples for c in plain.submit(TEXT, "ryan", "english", **OPTIONS)])
    gate = threading.Event()
    align = word_aligner.align_units

    def held(samples, units):  # the aligner waits until every chunk has been taken
        assert gate.wait(60)
        return align(samples, units)

    monkeypatch.setattr(word_aligner, "align_units", held)
    with hearth.Scheduler(engine, aligner=word_aligner) as scheduler:
        request = scheduler.submit(TEXT, "ryan", "english", word_timestamps=True, **OPTIONS)
        chunks = []
        while True:  # every chunk of both sentences arrives while no sentence is aligned
            event = request.next_event(timeout=60)
            assert isinstance(event, RequestChunk), event
            chunks.append(event)
            if event.sentence_end and event.sentence == 1:
                break
        assert not any(s.words for s in request.sentences)
        gate.set()
        rest = _events(request)
    assert np.array_equal(np.concatenate([c.samples for c in chunks]), expected)
    assert [type(e) for e in rest] == [SentenceWords, SentenceWords]


def test_without_an_aligner_or_outside_a_scheduler_it_is_refused(engine, timed):
    with hearth.Scheduler(engine) as plain, pytest.raises(InputError, match="--aligner") as e:
        plain.submit(TEXT, "ryan", word_timestamps=True)
    assert e.value.param == "word_timestamps"
    with pytest.raises(InputError, match="scheduler"):
        engine.synthesize(TEXT, "ryan", word_timestamps=True)
    with pytest.raises(InputError, match="true or false"):
        timed.submit(TEXT, "ryan", word_timestamps="yes")


def test_a_request_without_them_gets_no_words_and_a_cancel_ends_it(timed):
    request = timed.submit(TEXT, "ryan", "english", **OPTIONS)
    assert all(isinstance(e, RequestChunk) for e in _events(request)) and request.words == ()
    request = timed.submit(TEXT, "ryan", "english", word_timestamps=True, **OPTIONS)
    assert isinstance(request.next_event(timeout=60), RequestChunk)
    request.cancel()
    assert request.next_event(timeout=10) is None and request.status == "cancelled"
