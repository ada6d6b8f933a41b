"""Live transcription (hearth.listen.live) equals qwen-asr 0.0.6's streaming, update by update.

qwen-asr streams on vLLM only. Here its own streaming code (`init_streaming_state`,
`streaming_transcribe`, `finish_streaming_transcribe`: the chunking, the forced prefix and its
rollback) runs unchanged, with one stand-in for vLLM's `generate` (tests only): the same prompt
string and audio through qwen-asr's processor and its transformers model, greedy, decoded as vLLM
decodes (special tokens skipped). Each of Hearth's updates must choose the same tokens as that
update of qwen-asr's, and the final text and language must be the same, for audio pushed in pieces of
any size, any chunk length, rollback and number of unfixed chunks, with and without a forced
language and a context, and for float audio beyond [-1, 1] (streamed audio is not scaled: as
qwen-asr streams it).
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sounds import SIGNALS

from hearth.errors import InputError
from hearth.listen import ListenOptions, LiveOptions, resample

MAX_NEW = 16


class _TransformersAsVllm:
    """vLLM's `LLM.generate` for qwen-asr's streaming calls, by qwen-asr's transformers model: one
    request of a prompt string and audio, greedy, `max_new_tokens` tokens; records each update's ids."""

    def __init__(self, official):
        self.official = official
        self.calls: list[list[int]] = []

    def generate(self, requests, sampling_params=None, use_tqdm=False):
        (request,) = requests
        (audio,) = request["multi_modal_data"]["audio"]
        processor = self.official.processor
        inputs = processor(text=[request["prompt"]], audio=[audio], return_tensors="pt", padding=True)
        with torch.inference_mode():
            out = self.official.model.generate(**inputs, max_new_tokens=MAX_NEW)
        ids = out.sequences[0, inputs["input_ids"].shape[1]:].tolist()
        self.calls.append(ids)
        text = processor.tokenizer.decode(ids, skip_special_tokens=True)
        return [SimpleNamespace(outputs=[SimpleNamespace(text=text)])]


@pytest.fixture(scope="module")
def official_streaming(official_asr):
    """qwen-asr's Qwen3ASRModel as its vLLM backend would be, generating through the stand-in."""
    streaming = copy.copy(official_asr)
    streaming.backend = "vllm"
    streaming.model = _TransformersAsVllm(official_asr)
    return streaming


def _official_stream(model, pieces, live: LiveOptions, language, context):
    model.model.calls = []
    state = model.init_streaming_state(context=context, language=language, unfixed_chunk_num=live.unfixed_chunks,
                                       unfixed_token_num=live.rollback_tokens, chunk_size_sec=live.chunk_s)
    for piece in pieces:
        model.streaming_transcribe(piece, state)
    model.finish_streaming_transcribe(state)
    return model.model.calls, state.language, state.text


def _hearth_stream(listener, pieces, live: LiveOptions, language, context):
    session = listener.live(ListenOptions(context, language, MAX_NEW), live)
    events = [e for piece in pieces for e in session.push(piece)] + session.finish()
    return events


def _cut(samples, cuts):
    edges = sorted({0, samples.size, *(c for c in cuts if 0 < c < samples.size)})
    return [samples[a:b] for a, b in zip(edges, edges[1:], strict=False)]


def _assert_equal(listener, official_streaming, samples, cuts, live, language, context):
    pieces = _cut(samples, cuts)
    calls, want_language, want_text = _official_stream(official_streaming, pieces, live, language, context)
    events = _hearth_stream(listener, pieces, live, language, context)
    updates = [list(e.ids) for e in events if e.ids]
    assert updates == calls
    finals = [e for e in events if e.kind == "final"]
    assert len(finals) == 1 and events[-1] is finals[0]
    assert (finals[0].language, finals[0].text) == (want_language, want_text)
    assert all(0 <= e.stable <= len(e.text) for e in events) and finals[0].stable == 0
    return events


@pytest.mark.parametrize(("signal", "seconds", "chunk_s", "rollback", "unfixed", "language", "context"), [
    ("bursts", 4.3, 1.0, 5, 2, None, ""),          # qwen-asr's defaults but the chunk length
    ("noise", 3.1, 0.7, 2, 0, "English", ""),       # forced from the first update on
    ("sweep", 2.6, 0.5, 0, 1, None, "Names: Hearth."),  # nothing rolled back
    ("noise", 2.0, 1.0, 5, 2, "Chinese", "会议记录"),   # ends on a chunk's edge: the finish hears nothing more
])
def test_each_update_equals_qwen_asr_streaming(listener, official_streaming, signal, seconds, chunk_s, rollback,
                                               unfixed, language, context):
    samples = SIGNALS[signal](seconds)
    live = LiveOptions(chunk_s=chunk_s, rollback_tokens=rollback, unfixed_chunks=unfixed, max_segment_s=60)
    events = _assert_equal(listener, official_streaming, samples, [1234, 16000, 16001, 30000], live, language,
                           context)
    partials = [e for e in events if e.kind == "partial"]
    assert len(partials) == int(samples.size // round(chunk_s * 16000))
    assert len({e.ids for e in partials}) > 1  # the updates heard something different
    assert [e.audio_s for e in partials] == [round(chunk_s * 16000) * (i + 1) / 16000 for i in range(len(partials))]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(signal=st.sampled_from(sorted(SIGNALS)), seconds=st.floats(0.6, 3.5),
       cuts=st.lists(st.integers(1, 56000), max_size=6), chunk_s=st.sampled_from([0.5, 0.8, 1.25]),
       rollback=st.integers(0, 7), unfixed=st.integers(0, 3), language=st.sampled_from([None, "English"]))
def test_any_pieces_and_options_equal_qwen_asr_streaming(listener, official_streaming, signal, seconds, cuts,
                                                          chunk_s, rollback, unfixed, language):
    live = LiveOptions(chunk_s=chunk_s, rollback_tokens=rollback, unfixed_chunks=unfixed, max_segment_s=60)
    _assert_equal(listener, official_streaming, SIGNALS[signal](seconds), cuts, live, language, "")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rate=st.sampled_from([8000, 22050, 24000, 44100, 48000]), cuts=st.lists(st.integers(1, 100000), max_size=5),
       int16=st.booleans())
def test_other_rates_are_heard_as_their_16_khz_audio(listener, rate, cuts, int16):
    """Pushed at any rate, in any pieces, as int16 or float: the same updates as the stream
    resampled to 16 kHz whole (the resampler's chunks equal its whole)."""
    samples = SIGNALS["bursts"](2.2)
    at_rate = resample(samples, 16000, rate)
    if int16:
        at_rate = np.round(at_rate * 32767).astype(np.int16)
    live = LiveOptions(chunk_s=1.0, max_segment_s=60)
    session = listener.live(ListenOptions(max_new_tokens=MAX_NEW), live, sample_rate=rate)
    events = [e for piece in _cut(at_rate, cuts) for e in session.push(piece)] + session.finish()
    whole = at_rate.astype(np.float32) / 32768 if int16 else at_rate
    expected = _hearth_stream(listener, [resample(whole, rate, 16000)], live, None, "")
    assert [(e.kind, e.ids, e.text) for e in events] == [(e.kind, e.ids, e.text) for e in expected]


def test_a_long_stream_is_cut_into_segments_each_heard_on_its_own(listener):
    """A segment closes at max_segment_s: its final, then the next segment starts afresh (nothing
    forced, its audio alone), offset where it starts in the stream."""
    samples = SIGNALS["noise"](5.0)
    live = LiveOptions(chunk_s=1.0, rollback_tokens=2, unfixed_chunks=1, max_segment_s=2.0)
    session = listener.live(ListenOptions(max_new_tokens=MAX_NEW), live)
    events = session.push(samples) + session.finish()
    assert [(e.kind, e.segment, e.offset, e.audio_s) for e in events] == [
        ("partial", 0, 0.0, 1.0), ("partial", 0, 0.0, 2.0), ("final", 0, 0.0, 2.0),
        ("partial", 1, 2.0, 1.0), ("partial", 1, 2.0, 2.0), ("final", 1, 2.0, 2.0),
        ("partial", 2, 4.0, 1.0), ("final", 2, 4.0, 1.0)]
    alone = listener.live(ListenOptions(max_new_tokens=MAX_NEW), live)
    again = alone.push(samples[32000:64000]) + alone.finish()
    assert [(e.kind, e.ids, e.text) for e in again] == [(e.kind, e.ids, e.text) for e in events[3:6]]


def test_a_feeder_behind_hears_only_the_latest_chunk(listener, official_streaming):
    """`latest_only`: chunks completed at once give one update, of all the audio so far, whose forced
    start is the one qwen-asr's update of that chunk would have had (the skipped chunks counted)."""
    samples = SIGNALS["sweep"](3.2)
    live = LiveOptions(chunk_s=0.5, rollback_tokens=3, unfixed_chunks=2, max_segment_s=60)
    session = listener.live(ListenOptions(max_new_tokens=MAX_NEW), live)
    first = session.push(samples[:8000], latest_only=True)  # one chunk: its update
    behind = session.push(samples[8000:40000], latest_only=True)  # four chunks: one update, of 2.5 s
    rest = session.push(samples[40000:], latest_only=True) + session.finish()
    assert [(e.kind, e.audio_s) for e in first + behind + rest] == [
        ("partial", 0.5), ("partial", 2.5), ("partial", 3.0), ("final", 3.2)]
    # qwen-asr's streaming with the three chunks between added to its state unheard: its update at
    # 2.5 s is forced to start with the 0.5 s update's answer less its rollback, as Hearth's was
    official_streaming.model.calls = []
    state = official_streaming.init_streaming_state(unfixed_chunk_num=2, unfixed_token_num=3, chunk_size_sec=0.5)
    official_streaming.streaming_transcribe(samples[:8000], state)
    state.audio_accum, state.chunk_id = samples[:32000].copy(), 4
    official_streaming.streaming_transcribe(samples[32000:40000], state)
    assert official_streaming.model.calls == [list(first[0].ids), list(behind[0].ids)]
    assert (behind[0].language, behind[0].text) == (state.language, state.text)


def test_bad_input_is_refused_with_what_to_do(listener):
    with pytest.raises(InputError, match="chunk_s"):
        listener.live(live=LiveOptions(chunk_s=0))
    with pytest.raises(InputError, match="rollback_tokens"):
        listener.live(live=LiveOptions(rollback_tokens=-1))
    with pytest.raises(InputError, match="sample rate"):
        listener.live(sample_rate=1000)
    session = listener.live()
    with pytest.raises(InputError, match="NaN"):
        session.push(np.array([0.0, np.nan], np.float32))
    with pytest.raises(InputError, match="dtype"):
        session.push(np.array([1, 2], np.int64))
    assert session.push(np.zeros(100, np.float32)) == []  # the session goes on after a refusal
    assert [e.kind for e in session.finish()] == ["final"]
    with pytest.raises(InputError, match="finished"):
        session.push(np.zeros(10, np.float32))


def test_an_offline_final_is_transcribe_s_text(listener):
    """`offline_final`: the final hears the segment whole with nothing forced, prepared as a
    recording is (here a peak above 1, scaled down): `transcribe`'s language and text."""
    samples = SIGNALS["bursts"](3.3) * np.float32(1.7)
    options = ListenOptions(max_new_tokens=MAX_NEW)
    session = listener.live(options, LiveOptions(chunk_s=1.0, max_segment_s=60, offline_final=True))
    events = [e for piece in _cut(samples, [5000, 20000]) for e in session.push(piece)] + session.finish()
    assert [e.kind for e in events] == ["partial"] * 3 + ["final"]
    want = listener.transcribe(samples, options)
    assert (events[-1].language, events[-1].text) == (want.language, want.text)
