"""Audio into the listening models: the resampler (chunked equals whole, its passband and stopband,
its lengths), channels mixed down, recordings decoded from WAV, FLAC, MP3 and OGG, and every
refusal saying what is taken."""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest

from hearth.errors import InputError
from hearth.listen import Listener, ListenOptions
from hearth.listen.audio_in import decode_audio, listening_audio
from hearth.listen.resample import Resampler, mix_down, resample

RATES = [8000, 11025, 22050, 24000, 32000, 44100, 48000, 96000]


def tone(freq: float, rate: int, seconds: float) -> np.ndarray:
    return np.sin(2 * np.pi * freq * np.arange(int(rate * seconds)) / rate).astype(np.float32)


@pytest.mark.parametrize("rate", RATES)
def test_chunked_equals_whole_for_any_cut(rate):
    x = np.random.default_rng(rate).standard_normal(rate).astype(np.float32)
    whole = resample(x, rate, 16000)
    assert whole.shape[0] == -(-x.shape[0] * 16000 // rate)
    for seed in range(3):
        rng, r, parts, i = np.random.default_rng(seed), Resampler(rate, 16000), [], 0
        while i < x.shape[0]:
            k = int(rng.integers(0, 3000))  # empty pushes too
            parts.append(r.push(x[i : i + k]))
            i += k
        parts.append(r.finish())
        assert np.array_equal(np.concatenate(parts), whole)


@pytest.mark.parametrize("rate", RATES)
def test_a_tone_in_the_passband_comes_through(rate):
    freq = min(3000.0, 0.4 * rate)
    y = resample(tone(freq, rate, 1.0), rate, 16000)
    ideal = tone(freq, 16000, y.shape[0] / 16000)[: y.shape[0]]
    inner = slice(1000, -1000)  # (the edges: the signal starts and stops there)
    assert np.max(np.abs(y[inner] - ideal[inner])) < 1e-4


@pytest.mark.parametrize("rate", [22050, 24000, 44100, 48000])
def test_what_16_khz_cannot_hold_is_removed(rate):
    y = resample(tone(9000.0, rate, 1.0), rate, 16000)  # above 8 kHz: it would fold back to 7 kHz
    assert 20 * np.log10(np.max(np.abs(y[1000:-1000]))) < -90


def test_channels_are_mixed_down_either_way_round():
    left, right = np.full(1000, 0.5, np.float32), np.full(1000, -0.25, np.float32)
    assert np.allclose(mix_down(np.stack([left, right], 1)), 0.125)
    assert np.allclose(mix_down(np.stack([left, right], 0)), 0.125)
    with pytest.raises(InputError, match="channels"):
        mix_down(np.zeros((100, 40), np.float32))


def _wav(samples: np.ndarray, rate: int, width: int = 2) -> bytes:
    buffer = io.BytesIO()
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    with wave.open(buffer, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        scale = 2 ** (8 * width - 1) - 1
        ints = np.round(samples * scale).astype(f"<i{width}" if width != 3 else "<i4")
        if width == 3:
            ints = ints.reshape(-1, 1).view(np.uint8)[:, :3]
        w.writeframes(ints.tobytes())
    return buffer.getvalue()


@pytest.mark.parametrize("width", [2, 3, 4])
def test_wav_is_read_even_without_the_extras(width, monkeypatch):
    import sys

    x = 0.5 * tone(440.0, 22050, 0.5)
    data = _wav(np.stack([x, x], 1), 22050, width)
    monkeypatch.setitem(sys.modules, "av", None)  # as if neither PyAV nor soundfile were installed
    monkeypatch.setitem(sys.modules, "soundfile", None)
    recording = decode_audio(data)
    assert recording.sample_rate == 22050 and recording.samples.shape == (x.shape[0], 2)
    assert np.max(np.abs(recording.samples[:, 0] - x)) < 1e-4


def _encoded(codec: str, container: str, rate: int) -> bytes:
    import av

    x = 0.3 * tone(300.0, rate, 1.0)
    out = io.BytesIO()
    with av.open(out, "w", format=container) as c:
        stream = c.add_stream(codec, rate=rate)
        stream.layout = "mono"
        frame = av.AudioFrame.from_ndarray(x[None, :], format="fltp" if codec == "mp3" else "flt", layout="mono")
        frame.sample_rate = rate
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            c.mux(packet)
    return out.getvalue()


@pytest.mark.parametrize("codec, container, rate", [("mp3", "mp3", 44100), ("libopus", "ogg", 48000),
                                                    ("flac", "flac", 16000)])
def test_compressed_recordings_are_decoded(codec, container, rate):
    recording = decode_audio(_encoded(codec, container, rate))
    assert recording.sample_rate == rate and abs(recording.seconds - 1.0) < 0.1
    assert 0.1 < np.max(np.abs(recording.samples)) < 0.5


@pytest.mark.parametrize("data, message", [
    (b"", "empty"),
    (b"this is not audio at all, just some text" * 10, "not audio"),
    (b"RIFF\x00\x00\x00\x00WAVEfmt ", "not audio"),
])
def test_what_is_not_audio_is_refused_saying_what_is_taken(data, message):
    with pytest.raises(InputError, match=message) as e:
        decode_audio(data)
    assert e.value.param == "audio" and "WAV" in str(e.value)


def test_too_long_too_slow_and_too_many_channels_are_refused():
    with pytest.raises(InputError, match="at most 2 s"):
        decode_audio(_wav(np.zeros(16000 * 3, np.float32), 16000), max_seconds=2.0)
    with pytest.raises(InputError, match="4000 to 384000 Hz"):
        decode_audio(_wav(np.zeros(3000, np.float32), 2000))
    with pytest.raises(InputError, match="no samples"):
        decode_audio(_wav(np.zeros(0, np.float32), 16000))
    with pytest.raises(InputError, match="4000 to 384000 Hz"):
        listening_audio(np.zeros(1000, np.float32), 1000)


def test_any_rate_and_channels_transcribe_as_the_same_audio_made_16_khz_mono(own_asr_dir):
    listener = Listener.load(own_asr_dir)
    x = np.random.default_rng(3).standard_normal((44100, 2)).astype(np.float32) * 0.1
    options = ListenOptions(max_new_tokens=4)
    expected = listener.transcribe(resample(x.mean(axis=1), 44100, 16000), options)
    assert listener.transcribe(x, options, sample_rate=44100) == expected
