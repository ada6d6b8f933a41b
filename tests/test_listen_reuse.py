"""Work kept between a live segment's updates (hearth/listen/reuse.py): the encoder's finished
windows and the decoder's positions shared with the last prompt, on every hearing backend.

What is held: a segment heard with its work kept gives the tokens it gives heard afresh, for audio
that grows by any amounts, gets louder (the log-mel floor moves and earlier windows change) and
prompts of any forced start; and the work is really kept (windows not encoded again, positions not
computed again), else these tests would pass on a live transcription that hears everything again.
On the 2-second windows of `asr_dir` (26 positions each, 9 before the audio).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hearth.listen import Listener, ListenOptions, LiveOptions

BACKENDS = ["torch", "onnxruntime", "openvino"]
RATE = 16000


@pytest.fixture(scope="module", params=BACKENDS)
def hearing(request, asr_dir):
    weights = {} if request.param == "torch" else {"weights": "fp32"}
    return Listener.load(asr_dir, backend=request.param, **weights)


def _audio(seconds: float, seed: int, loud_from: float | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (0.05 * rng.standard_normal(int(seconds * RATE))).astype(np.float32)
    if loud_from is not None:
        x[int(loud_from * RATE) :] *= 8.0
    return x


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(growth=st.lists(st.floats(0.01, 2.5), min_size=2, max_size=4), seed=st.integers(0, 2**16),
       loud_from=st.none() | st.floats(0.5, 6.0), prefixes=st.lists(st.sampled_from(["", "language English<asr_text>",
                                                                                  "hello", "a b c"]),
                                                                 min_size=4, max_size=4))
def test_kept_work_hears_what_hearing_afresh_hears(hearing, growth, seed, loud_from, prefixes):
    options = hearing.check_options(ListenOptions(max_new_tokens=6))
    audio = _audio(sum(growth) + 0.5, seed, loud_from)
    work = hearing.segment_work()
    try:
        end = 0.5
        for more, prefix in zip(growth, prefixes, strict=False):
            end += more
            heard = audio[: int(end * RATE)]
            kept = list(hearing.tokens(heard, options, prefix, work))
            assert kept == list(hearing.tokens(heard, options, prefix))
    finally:
        work.close()


def test_finished_windows_and_shared_positions_are_not_computed_again(hearing):
    options = hearing.check_options(ListenOptions(max_new_tokens=4))
    audio = _audio(7.0, 3)
    work = hearing.segment_work()
    try:
        list(hearing.tokens(audio[: 3 * RATE], options, "", work))
        assert work.encoder.encoded == 2 and work.decoder.kept == 0  # (nothing held yet)
        assert work.encoder.convolved == 3
        list(hearing.tokens(audio[: 7 * RATE], options, "", work))
        # 0-2 s is finished and the same; 2-4 s is not (its last frames saw the reflected end at 3 s).
        assert work.encoder.encoded == 3 and work.encoder.convolved == 5
        assert work.decoder.kept == 9 + 26  # the system prompt and the first window
        prompt = len(work.decoder.ids) - 3  # (and the 3 tokens fed back of the 4 chosen)
        list(hearing.tokens(audio[: 7 * RATE], options, "", work))
        # The same audio and prompt again: only the last window (never finished) and the prompt's
        # last position (whose logits are wanted) are computed.
        assert work.encoder.encoded == 1 and work.decoder.kept == prompt - 1
        assert work.encoder.convolved == 0  # (the last window's one chunk is whole and the same)
    finally:
        work.close()
    assert work.decoder.session is None


def test_a_session_rewinds_within_what_it_holds(hearing):
    session = hearing.model.session(8)
    with pytest.raises(ValueError, match="cannot rewind a session of 0 positions to 1"):
        session.rewind(1)
    session.close()
    with pytest.raises(RuntimeError, match="closed"):
        session.rewind(0)


def test_a_live_segment_keeps_its_work_between_updates(hearing):
    """Through `Listener.live`: a 7 s stream in 1 s updates encodes each finished window once."""
    seen = []

    class Counting:
        tokenizer, features = hearing.tokenizer, hearing.features

        def segment_work(self):
            work = hearing.segment_work()
            seen.append(work)
            return work

        def tokens(self, samples, options, prefix="", work=None):
            out = list(hearing.tokens(samples, options, prefix, work))
            counts.append((work.encoder.encoded, work.decoder.kept))
            return iter(out)

    from hearth.listen.live import LiveTranscription

    counts: list[tuple[int, int]] = []
    live = LiveTranscription(Counting(), hearing.check_options(ListenOptions(max_new_tokens=4)),
                             LiveOptions(chunk_s=1.0), RATE)
    events = live.push(_audio(7.0, 5)) + live.finish()
    assert len(seen) == 1 and seen[0].decoder.session is None  # one segment; its work let go at the end
    assert [e.kind for e in events] == ["partial"] * 7 + ["final"]
    assert sum(e for e, _ in counts) <= len(counts) + 3  # 3 finished windows, each encoded once more at most
    assert all(k >= 9 for _, k in counts[1:])


def test_the_growing_windows_whole_chunks_keep_their_convolutions(asr17_dir):
    """The released 8-second windows (8 chunks): as a window grows, only its new chunks and the one
    whose end moved are convolved again, and the tokens are those heard afresh."""
    hearing = Listener.load(asr17_dir, backend="torch")
    options = hearing.check_options(ListenOptions(max_new_tokens=4))
    audio = _audio(9.5, 11, loud_from=None)
    work = hearing.segment_work()
    convolved = []
    try:
        for seconds in (1.5, 3.0, 4.25, 6.0, 8.0, 9.5):
            heard = audio[: int(seconds * RATE)]
            assert list(hearing.tokens(heard, options, "", work)) == list(hearing.tokens(heard, options, ""))
            convolved.append(work.encoder.convolved)
    finally:
        work.close()
    # 1.5 s: chunks 0-1. 3 s: 1 (its end moved) and 2. 4.25 s: 2 to 4. 6 s: 4 and 5. 8 s: 5 to 7
    # (the window is whole now). 9.5 s: 7 (its end moved) and the next window's 8 and 9.
    assert convolved == [2, 2, 3, 2, 3, 3]


def test_an_update_that_fails_leaves_the_next_to_start_afresh(hearing):
    """A prefill that fails after the session rewound (audio of the wrong width) must not leave the
    segment's later updates a session whose positions it no longer knows."""
    from hearth.listen.prompt import asr_prompt

    options = hearing.check_options(ListenOptions(max_new_tokens=4))
    audio = _audio(5.0, 7)
    work = hearing.segment_work()
    try:
        list(hearing.tokens(audio[: 3 * RATE], options, "", work))
        rows = hearing.model.encode_audio(hearing.features(audio[: 4 * RATE]))
        prompt = asr_prompt(hearing.tokenizer, hearing.special, rows.shape[0], "", None, "")
        with pytest.raises(Exception):  # noqa: B017 - whichever error the runtime gives
            work.decoder.start(prompt, np.zeros((rows.shape[0], rows.shape[1] + 1), np.float32), 200)
        assert work.decoder.session is None
        heard = audio[: 5 * RATE]
        assert list(hearing.tokens(heard, options, "", work)) == list(hearing.tokens(heard, options, ""))
    finally:
        work.close()
