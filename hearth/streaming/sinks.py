"""Audio outputs ("sinks"): the default speaker, WAV files, raw PCM on a pipe, and a null sink.

Every sink takes float32 mono samples in [-1, 1] through `write`, which returns True when the
output ran dry before that write (an underrun: only real-time sinks can have them). The speaker
needs the optional `sounddevice` package (`pip install hearth-tts[play]`) and a PortAudio output
device; `default_output_available` tells whether both exist.
"""

from __future__ import annotations

import contextlib
import struct
import time
from pathlib import Path
from typing import BinaryIO

import numpy as np

__all__ = [
    "snr_db",
    "SAMPLE_FORMATS", "NullSink", "RawSink", "DeviceSink", "WavWriter", "default_output_available", "play", "to_pcm",
    "wav_header",
]

SAMPLE_FORMATS = ("s16", "f32")


def to_pcm(samples: np.ndarray, sample_format: str) -> bytes:
    """Little-endian interleaved bytes of mono float samples in [-1, 1]."""
    x = np.asarray(samples, dtype=np.float32).reshape(-1)
    if sample_format == "s16":
        return (np.clip(x, -1.0, 1.0) * 32767.0).round().astype("<i2").tobytes()
    if sample_format == "f32":
        return x.astype("<f4").tobytes()
    raise ValueError(f"sample format must be one of {', '.join(SAMPLE_FORMATS)}, got {sample_format!r}")


def wav_header(num_bytes: int, sample_rate: int, sample_format: str) -> bytes:
    bits = 16 if sample_format == "s16" else 32
    fmt_tag = 1 if sample_format == "s16" else 3  # PCM / IEEE float
    block = bits // 8
    fmt = struct.pack("<HHIIHH", fmt_tag, 1, sample_rate, sample_rate * block, block, bits)
    chunks = b"fmt " + struct.pack("<I", len(fmt)) + fmt
    if fmt_tag == 3:  # non-PCM formats carry a fact chunk with the frame count
        chunks += b"fact" + struct.pack("<II", 4, num_bytes // block)
    chunks += b"data" + struct.pack("<I", num_bytes)
    return b"RIFF" + struct.pack("<I", 4 + len(chunks) + num_bytes) + b"WAVE" + chunks


class NullSink:
    """Discards audio. With `realtime`, consumes it at playback speed like a device with a
    `buffer_s` buffer, so that underruns mean what they mean on a speaker."""

    def __init__(self, sample_rate: int, realtime: bool = False, buffer_s: float = 0.2):
        self.sample_rate = sample_rate
        self.realtime = realtime
        self.buffer_s = buffer_s
        self.samples = 0
        self._ends_at = 0.0  # monotonic time at which the audio written so far has played

    def write(self, samples: np.ndarray) -> bool:
        self.samples += len(samples)
        if not self.realtime:
            return False
        now = time.monotonic()
        starved = 0.0 < self._ends_at < now
        self._ends_at = max(now, self._ends_at) + len(samples) / self.sample_rate
        wait = self._ends_at - self.buffer_s - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        return starved

    def drain(self) -> None:
        if self.realtime:
            time.sleep(max(0.0, self._ends_at - time.monotonic()))
        self._ends_at = 0.0

    def close(self) -> None:
        self.drain()

    def __enter__(self) -> NullSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RawSink:
    """Raw little-endian PCM (s16 or f32, mono) on a binary stream, for `aplay`/`ffplay` pipes."""

    realtime = False

    def __init__(self, target: BinaryIO, sample_rate: int, sample_format: str = "s16"):
        to_pcm(np.zeros(0, dtype=np.float32), sample_format)  # validates the format
        self.sample_rate = sample_rate
        self.sample_format = sample_format
        self._file = target

    def write(self, samples: np.ndarray) -> bool:
        self._file.write(to_pcm(samples, self.sample_format))
        self._file.flush()
        return False

    def drain(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.flush()

    def __enter__(self) -> RawSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class WavWriter:
    """Writes a WAV file chunk by chunk as audio arrives.

    A seekable target gets its sizes patched on close; a pipe gets the conventional "unknown
    length" sizes (0xFFFFFFFF), which players read to the end of the stream.
    """

    def __init__(self, target: Path | BinaryIO, sample_rate: int, sample_format: str = "s16"):
        if sample_format not in SAMPLE_FORMATS:
            raise ValueError(f"sample format must be one of {', '.join(SAMPLE_FORMATS)}, got {sample_format!r}")
        self.sample_rate = sample_rate
        self.sample_format = sample_format
        self._file: BinaryIO
        self._owned = isinstance(target, (str, Path))
        self.path: Path | None = None  # a regular file written as <name>.part, renamed when finished
        if isinstance(target, (str, Path)):
            path = Path(target)
            if path.exists() and not path.is_file():  # a device or a pipe: written as it is
                self._file = open(path, "wb")  # noqa: SIM115 - closed in close()
            else:
                self.path = path
                self._file = open(str(path) + ".part", "wb")  # noqa: SIM115 - closed in close()
        else:
            self._file = target
        self._seekable = self.path is not None or _is_seekable(self._file)
        self._start = self._file.tell() if self._seekable else 0
        self._bytes = 0
        header = wav_header(0 if self._seekable else 0xFFFFFFFF - 64, sample_rate, sample_format)
        self._file.write(header)

    realtime = False

    def write(self, samples: np.ndarray) -> bool:
        data = to_pcm(samples, self.sample_format)
        self._file.write(data)
        self._file.flush()
        self._bytes += len(data)
        return False

    def drain(self) -> None:
        self._file.flush()

    def close(self) -> None:
        """Finish the file: sizes patched in, and a named file moved into place."""
        if self._file.closed:
            return
        if self._seekable:
            self._file.seek(self._start)
            self._file.write(wav_header(self._bytes, self.sample_rate, self.sample_format))
            self._file.seek(0, 2)
        self._file.flush()
        if self._owned:
            self._file.close()
        if self.path is not None:
            Path(str(self.path) + ".part").replace(self.path)

    def discard(self) -> None:
        """Abandon a named file (nothing is left behind, an older file of that name stays as it
        was); a stream or device target only keeps what was already written."""
        with contextlib.suppress(OSError, ValueError):
            if self._owned:
                self._file.close()
            else:
                self._file.flush()
        if self.path is not None:
            Path(str(self.path) + ".part").unlink(missing_ok=True)

    def __enter__(self) -> WavWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.discard()


def _is_seekable(f: BinaryIO) -> bool:
    try:
        return f.seekable()
    except (AttributeError, OSError):
        return False


def default_output_available() -> bool:
    try:
        import sounddevice as sd  # type: ignore[import-not-found]
    except (ImportError, OSError):
        return False
    try:
        return sd.query_devices(kind="output") is not None
    except Exception:  # noqa: BLE001 - PortAudio raises its own error types when there is no device
        return False


def play(samples: np.ndarray, sample_rate: int) -> None:
    with DeviceSink(sample_rate) as speaker:
        speaker.write(samples)


class DeviceSink:
    """The default output device as a blocking sink: `write` returns once the audio is queued."""

    realtime = True

    def __init__(self, sample_rate: int):
        import sounddevice as sd  # type: ignore[import-not-found]

        self.sample_rate = sample_rate
        self._stream = sd.OutputStream(samplerate=sample_rate, channels=1, dtype="float32", latency="low")
        self._stream.start()

    def write(self, samples: np.ndarray) -> bool:
        # PortAudio reports whether the device ran dry since the previous write.
        return bool(self._stream.write(np.asarray(samples, dtype=np.float32).reshape(-1, 1)))

    def drain(self) -> None:
        self._stream.stop()  # returns once the queued audio has played
        self._stream.start()

    def close(self) -> None:
        self._stream.stop()  # plays out what is queued
        self._stream.close()

    def abort(self) -> None:
        """Stop at once, dropping what is queued."""
        self._stream.abort()
        self._stream.close()

    def __enter__(self) -> DeviceSink:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    """Signal-to-noise ratio of `test` against `reference`, in dB (inf when equal)."""
    ref = np.asarray(reference, np.float64)
    err = ref - np.asarray(test, np.float64)
    noise = float((err**2).sum())
    return float("inf") if noise == 0 else 10 * float(np.log10((ref**2).sum() / noise))
