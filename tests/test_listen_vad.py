"""Live transcription with voice activity (hearth.listen.live, `LiveOptions.vad`): only speech is
heard, a segment to each stretch of it, the final heard at the quiet's first frame and held.

Each update is still the model on exactly the audio it says it heard (the segment's stretch of the
stream, `offset` .. `offset + audio_s`) with the forced start it says it had (its `raw` less its
tokens): `listener.tokens` of that audio and that start gives the same tokens, and
tests/test_listen_live.py holds `listener.tokens` to qwen-asr's model. Silero itself is
tests/test_vad.py's; here it runs on a speech-like signal it scores 0.5-1.0 (sounds.voiced), and a
detector scripted from loudness drives the property test through any layout of speech and pauses.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sounds import noise, silence, voiced

from hearth.errors import InputError
from hearth.listen import ListenOptions, LiveOptions
from hearth.listen.audio import MIN_PIECE_SECONDS
from hearth.listen.live import VAD_FRAME, LiveTranscription
from hearth.listen.vad import SileroVad

MAX_NEW = 12
RATE = 16000


class _Loudness:
    """A detector scripted from a frame's loudness: speech where its RMS passes 0.01."""

    def __call__(self, frame: np.ndarray) -> float:
        return float(min(1.0, np.sqrt(np.mean(frame.astype(np.float64) ** 2)) / 0.02))


def _run(session: LiveTranscription, stream: np.ndarray, cuts: list[int]):
    edges = sorted({0, stream.size, *(c for c in cuts if 0 < c < stream.size)})
    return [e for a, b in zip(edges, edges[1:], strict=False) for e in session.push(stream[a:b])] + session.finish()


def _heard_as_said(listener, options: ListenOptions, stream: np.ndarray, events) -> None:
    """Every update's tokens are the model's for the audio and forced start the event names."""
    shortest = max(int(MIN_PIECE_SECONDS * RATE), listener.features.min_samples)
    for e in events:
        if not e.ids:
            continue
        start = round(e.offset * RATE)
        audio = stream[start : start + round(e.audio_s * RATE)]
        assert audio.size == round(e.audio_s * RATE)
        if audio.size < shortest:
            audio = np.pad(audio, (0, shortest - audio.size))
        decoded = listener.tokenizer.decode(list(e.ids), skip_special=True)
        assert e.raw.endswith(decoded)
        prefix = e.raw[: len(e.raw) - len(decoded)]
        assert tuple(listener.tokens(audio, options, prefix)) == e.ids


def _paired(events) -> list[list]:
    """The events by segment, checked in order: started, partials, stopped, final."""
    segments: list[list] = []
    for e in events:
        if e.kind == "speech_started":
            assert not segments or segments[-1][-1].kind == "final"
            assert e.segment == len(segments)
            segments.append([e])
        else:
            assert segments and e.segment == segments[-1][0].segment
            segments[-1].append(e)
    for seg in segments:
        kinds = [e.kind for e in seg]
        assert kinds[-2:] == ["speech_stopped", "final"] and set(kinds[1:-2]) <= {"partial"}
        assert len({e.offset for e in seg}) == 1
    return segments


def test_silero_cuts_at_pauses_and_each_update_is_the_model_on_its_audio(listener):
    """Speech, a 0.25 s pause (under silence_s: one segment), speech, 1.2 s of quiet, speech that
    runs into the end of the stream. Pushed in uneven pieces."""
    parts = [silence(1.0), voiced(2.4, 1), silence(0.25), voiced(0.9, 2), silence(1.2), voiced(1.4, 4),
             silence(0.2)]
    stream = np.concatenate(parts)
    starts = np.cumsum([0] + [p.size for p in parts])
    options = ListenOptions(max_new_tokens=MAX_NEW)
    live = LiveOptions(chunk_s=1.0, vad=True, silence_s=0.5, padding_s=0.3)
    session = listener.live(options, live)
    events = _run(session, stream, [700, 5000, 16000, 40001, 40002, 77777])
    segments = _paired(events)
    assert len(segments) == 2
    for seg, speech_at in zip(segments, (starts[1], starts[5]), strict=True):
        # Speech is found within a few frames of its start, and the segment keeps padding_s before it.
        found = round(seg[0].offset * RATE) + int(0.3 * RATE)
        assert speech_at <= found <= speech_at + 4 * VAD_FRAME
    # The first segment's final was heard 96 ms into the quiet, not at its end.
    stopped, final = segments[0][-2:]
    assert final.offset + final.audio_s < stopped.offset + stopped.audio_s - 0.3
    assert starts[4] <= round((final.offset + final.audio_s) * RATE) <= starts[4] + 7 * VAD_FRAME
    _heard_as_said(listener, options, stream, events)
    # The pause inside the first segment was heard through (a partial after it).
    assert any(e.kind == "partial" and e.offset + e.audio_s > starts[4] / RATE - 1.0 for e in segments[0])


def test_silence_and_noise_alone_are_never_heard(listener):
    session = listener.live(ListenOptions(max_new_tokens=MAX_NEW), LiveOptions(vad=True))
    assert _run(session, np.concatenate([silence(1.5), noise(3.0, 5, 0.05), silence(0.5)]), [12345]) == []


def test_speech_to_the_end_is_stopped_and_final_at_finish(listener):
    session = listener.live(ListenOptions(max_new_tokens=MAX_NEW), LiveOptions(chunk_s=0.5, vad=True))
    stream = np.concatenate([silence(0.4), voiced(1.3, 3)])
    events = _run(session, stream, [])
    (seg,) = _paired(events)
    assert seg[-1].offset + seg[-1].audio_s == pytest.approx(stream.size / RATE, abs=1e-9)
    _heard_as_said(listener, ListenOptions(max_new_tokens=MAX_NEW), stream, events)


def test_a_long_stretch_is_cut_at_max_segment_and_goes_on(listener):
    live = LiveOptions(chunk_s=1.0, max_segment_s=2.0, vad=True)
    session = LiveTranscription(listener, ListenOptions(max_new_tokens=MAX_NEW), live, RATE, _Loudness())
    stream = np.concatenate([silence(0.5), noise(4.5, 1, 0.1), silence(1.0)])
    events = _run(session, stream, [3333])
    segments = _paired(events)
    assert [round(s[-1].audio_s, 3) for s in segments[:2]] == [2.0, 2.0] and len(segments) == 3
    assert segments[1][0].offset == pytest.approx(segments[0][0].offset + 2.0)


def test_vad_options_are_checked():
    for bad in ({"vad": 1}, {"vad_threshold": 0.0}, {"vad_threshold": 1.0}, {"silence_s": 0.01},
                {"padding_s": -0.1}, {"silence_s": "1"}):
        with pytest.raises(InputError):
            LiveOptions(**bad).checked()


_LAYOUT = st.lists(st.tuples(st.sampled_from(["speech", "pause"]), st.floats(0.05, 1.6)), min_size=1, max_size=7)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=_LAYOUT, cuts=st.lists(st.integers(1, 120_000), max_size=6), chunk_s=st.sampled_from([0.5, 1.0]),
       silence_s=st.sampled_from([0.2, 0.5, 0.9]), padding_s=st.sampled_from([0.0, 0.3]))
def test_any_speech_and_pauses_in_any_pieces(listener, layout, cuts, chunk_s, silence_s, padding_s):
    """Whatever the layout and the pieces: segments paired and in order, never overlapping, each
    update the model on its audio, and the same events as the stream pushed whole."""
    rng = np.random.default_rng(len(layout))
    stream = np.concatenate([silence(0.1)] + [
        (0.2 * rng.standard_normal(int(s * RATE))).astype(np.float32) if kind == "speech" else silence(s)
        for kind, s in layout])
    options = ListenOptions(max_new_tokens=MAX_NEW)
    live = LiveOptions(chunk_s=chunk_s, max_segment_s=4.0, vad=True, silence_s=silence_s, padding_s=padding_s)
    events = _run(LiveTranscription(listener, options, live, RATE, _Loudness()), stream, cuts)
    whole = _run(LiveTranscription(listener, options, live, RATE, _Loudness()), stream, [])
    assert [(e.kind, e.segment, e.offset, e.audio_s, e.ids, e.text) for e in events] == \
        [(e.kind, e.segment, e.offset, e.audio_s, e.ids, e.text) for e in whole]
    segments = _paired(events)
    ends = [s[-2].offset + s[-2].audio_s for s in segments]
    assert all(b[0].offset >= end - 1e-9 for end, b in zip(ends, segments[1:], strict=False))
    assert all(s[0].offset >= 0 and s[-2].audio_s <= 4.0 + 1e-9 for s in segments)
    _heard_as_said(listener, options, stream, events)
    if any(kind == "speech" and s >= 0.1 for kind, s in layout):
        assert segments


def test_detector_over_the_real_model_is_one_per_stream(listener):
    """Two live transcriptions at once, each with its own detector state: the same events as each alone."""
    stream = np.concatenate([silence(0.5), voiced(1.2, 5), silence(0.8)])
    options, live = ListenOptions(max_new_tokens=MAX_NEW), LiveOptions(chunk_s=0.5, vad=True, silence_s=0.3)
    alone = _run(listener.live(options, live), stream, [])
    a, b = listener.live(options, live), listener.live(options, live)
    together: tuple[list, list] = ([], [])
    for at in range(0, stream.size, 4000):
        together[0].extend(a.push(stream[at : at + 4000]))
        together[1].extend(b.push(stream[at : at + 4000]))
    together[0].extend(a.finish())
    together[1].extend(b.finish())
    key = [(e.kind, e.offset, e.audio_s, e.ids) for e in alone]
    assert key and all([(e.kind, e.offset, e.audio_s, e.ids) for e in t] == key for t in together)
    assert isinstance(a._detector, SileroVad)


def test_offline_finals_are_each_stretch_transcribed_whole(listener):
    stream = np.concatenate([silence(0.5), voiced(1.4, 1), silence(0.9), voiced(0.8, 2), silence(0.7)])
    options = ListenOptions(max_new_tokens=MAX_NEW)
    session = listener.live(options, LiveOptions(chunk_s=0.5, vad=True, silence_s=0.4, offline_final=True))
    finals = [e for e in _run(session, stream, [9999]) if e.kind == "final"]
    assert len(finals) == 2
    for e in finals:
        start = round(e.offset * RATE)
        want = listener.transcribe(stream[start : start + round(e.audio_s * RATE)], options)
        assert (e.language, e.text) == (want.language, want.text)
