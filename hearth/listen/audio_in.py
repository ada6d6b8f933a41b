"""Recordings as the listening surfaces receive them: files and uploads (WAV, FLAC, MP3, OGG, and
whatever else FFmpeg decodes), and samples at any common rate with any number of channels, made
into what the models take (16 kHz mono float32).

Decoding tries PyAV (FFmpeg's libraries; the `serve` extra), then soundfile (libsndfile; the
`clone` extra), then the standard library's `wave` (PCM WAV), so a WAV file is read with no extra
installed. Every refusal is an `InputError` about "audio" that says what is taken: not audio, empty,
too long, a rate or channel count outside what is taken.
"""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass

import numpy as np

from hearth.errors import InputError
from hearth.listen.audio import SAMPLE_RATE
from hearth.listen.resample import MAX_CHANNELS, check_rate, mix_down, resample

__all__ = ["MAX_RECORDING_SECONDS", "Recording", "decode_audio", "listening_audio"]

MAX_RECORDING_SECONDS = 3 * 3600.0  # one request's recording (longer ones are cut by the caller)
_FORMATS = "WAV, FLAC, MP3, OGG/Opus, M4A/AAC or WebM"


@dataclass(frozen=True)
class Recording:
    samples: np.ndarray  # float32, [samples] or [samples, channels] as decoded
    sample_rate: int

    @property
    def seconds(self) -> float:
        return self.samples.shape[0] / float(self.sample_rate)


def _too_long(seconds: float, limit: float) -> InputError:
    return InputError(f"the recording lasts {seconds:.0f} s; at most {limit:.0f} s are taken at once (cut it into "
                      "parts)", "audio")


def _with_pyav(data: bytes, limit: float) -> Recording | None:
    """Every channel of the first audio stream, or None when PyAV is missing or cannot decode it."""
    try:
        import av
    except ImportError:
        return None
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.audio:
                return None
            stream = container.streams.audio[0]
            rate = int(stream.codec_context.sample_rate or 0)
            if not rate:
                return None
            resampler = av.AudioResampler(format="fltp", layout=stream.codec_context.layout, rate=rate)
            planes, count = [], 0
            for frame in container.decode(stream):
                for f in resampler.resample(frame):
                    planes.append(f.to_ndarray())
                    count += planes[-1].shape[1]
                if count > (limit + 1) * rate:  # stop decoding: the answer is known
                    raise _too_long(count / rate, limit)
            planes += [f.to_ndarray() for f in resampler.resample(None)]
    except InputError:
        raise
    except (av.FFmpegError, IndexError, ValueError, OSError, TypeError):
        return None
    if not planes:
        return Recording(np.zeros(0, np.float32), rate)
    samples = np.concatenate(planes, axis=1).T.astype(np.float32)
    return Recording(samples[:, 0] if samples.shape[1] == 1 else samples, rate)


def _with_soundfile(data: bytes) -> Recording | None:
    try:
        import soundfile as sf
    except ImportError:
        return None
    try:
        samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=False)
    except Exception:  # noqa: BLE001 - libsndfile's errors name no common type
        return None
    return Recording(np.asarray(samples, np.float32), int(rate))


def _with_wave(data: bytes) -> Recording | None:
    """PCM WAV (8, 16, 24 or 32 bits) with the standard library."""
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            width, channels, rate = w.getsampwidth(), w.getnchannels(), w.getframerate()
            raw = w.readframes(w.getnframes())
    except (wave.Error, EOFError, OSError):
        return None
    if width == 1:
        values = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 3:
        b = np.frombuffer(raw[: len(raw) // 3 * 3], np.uint8).reshape(-1, 3).astype(np.int32)
        values = ((b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)) << 8 >> 8).astype(np.float32) / 2.0**23
    elif width in (2, 4):
        whole = raw[: len(raw) // width * width]
        values = np.frombuffer(whole, f"<i{width}").astype(np.float32) / 2.0 ** (8 * width - 1)
    else:
        return None
    frames = values.shape[0] // max(channels, 1)
    samples = values[: frames * channels].reshape(frames, channels)
    return Recording(samples[:, 0] if channels == 1 else samples, rate)


def decode_audio(data: bytes, max_seconds: float = MAX_RECORDING_SECONDS) -> Recording:
    """A recording file's samples and rate, as decoded (not resampled, channels kept)."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InputError("the recording must be the bytes of an audio file", "audio")
    data = bytes(data)
    if not data:
        raise InputError(f"the recording is empty (0 bytes); send an audio file ({_FORMATS})", "audio")
    recording = _with_pyav(data, max_seconds) or _with_soundfile(data) or _with_wave(data)
    if recording is None:
        raise InputError(f"the recording is not audio that can be read ({len(data)} bytes); send {_FORMATS}"
                         " (WAV and FLAC always; the others need the serve extra's PyAV)", "audio")
    samples = recording.samples
    if samples.ndim == 2 and samples.shape[1] > MAX_CHANNELS:
        raise InputError(f"the recording has {samples.shape[1]} channels; at most {MAX_CHANNELS} are taken", "audio")
    check_rate(recording.sample_rate)
    if samples.shape[0] == 0:
        raise InputError("the recording holds no samples: it is empty", "audio")
    if recording.seconds > max_seconds:
        raise _too_long(recording.seconds, max_seconds)
    return recording


def listening_audio(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """Samples at any taken rate, mono or [samples, channels], as mono float32 at 16 kHz (ints and
    floats as given: `prepare_audio` scales them afterwards)."""
    rate = check_rate(sample_rate)
    mono = mix_down(audio)
    if mono.ndim != 1:
        raise InputError(f"audio of shape {mono.shape}: give samples, or [samples, channels]", "audio")
    if rate == SAMPLE_RATE:
        return mono
    if not (np.issubdtype(mono.dtype, np.floating) or np.issubdtype(mono.dtype, np.integer)):
        raise InputError(f"audio of dtype {mono.dtype}: give numbers (float samples in [-1, 1])", "audio")
    return resample(mono.astype(np.float32), rate, SAMPLE_RATE)
