"""Streaming audio encoders: float samples in, bytes out as soon as a format can emit them.

`pcm` (s16le) and `wav` (a header with "unknown length", then s16le) concatenate byte-wise; mp3,
Ogg/Opus, ADTS/AAC and FLAC are encoded incrementally with PyAV (FFmpeg's libraries), the
container's pages and frames taken from an in-memory sink after every chunk. All formats start from
the same s16 samples (`hearth.streaming.sinks.to_pcm`), so pcm, wav and flac carry identical sample values.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from hearth.streaming.sinks import to_pcm

__all__ = ["FORMATS", "MEDIA_TYPES", "StreamEncoder", "encoder"]

MEDIA_TYPES = {
    "mp3": "audio/mpeg",
    "opus": "audio/ogg",
    "aac": "audio/aac",
    "flac": "audio/flac",
    "wav": "audio/wav",
    "pcm": "audio/pcm",
}
FORMATS = tuple(MEDIA_TYPES)

# format -> (PyAV container, codec, container options). Ogg pages are flushed every 20 ms of audio
# rather than when a page fills (about a second), so Opus leaves as it is made.
_CODECS: dict[str, tuple[str, str, dict[str, str]]] = {
    "mp3": ("mp3", "libmp3lame", {}),
    "opus": ("ogg", "libopus", {"page_duration": "20000"}),
    "aac": ("adts", "aac", {}),
    "flac": ("flac", "flac", {}),
}


class StreamEncoder:
    """`encode(samples)` returns the bytes ready so far; `finish()` the rest."""

    media_type = "application/octet-stream"

    def encode(self, samples: np.ndarray) -> bytes:
        raise NotImplementedError

    def finish(self) -> bytes:
        return b""


class _Pcm(StreamEncoder):
    media_type = MEDIA_TYPES["pcm"]

    def encode(self, samples: np.ndarray) -> bytes:
        return to_pcm(samples, "s16")


class _Wav(_Pcm):
    """The header first, its sizes set to the largest value, as streaming servers (OpenAI's too)
    send a WAV whose length is not known yet; players read such a file to its end."""

    media_type = MEDIA_TYPES["wav"]

    def __init__(self, sample_rate: int):
        from hearth.streaming.sinks import wav_header

        self._header: bytes | None = wav_header(0xFFFFFFFF - 36, sample_rate, "s16")

    def encode(self, samples: np.ndarray) -> bytes:
        header, self._header = self._header or b"", None
        return header + super().encode(samples)

    def finish(self) -> bytes:
        header, self._header = self._header or b"", None
        return header


class _Collector(io.RawIOBase):
    """A write-only, unseekable file that hands out what was written since the last `take`."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def write(self, data: Any) -> int:
        self._buffer += data
        return len(data)

    def take(self) -> bytes:
        out = bytes(self._buffer)
        self._buffer.clear()
        return out


class _PyAV(StreamEncoder):
    def __init__(self, fmt: str, sample_rate: int):
        import av

        container, codec, options = _CODECS[fmt]
        self.media_type = MEDIA_TYPES[fmt]
        self._av = av
        self._sink = _Collector()
        self._container = av.open(self._sink, mode="w", format=container, options=options)
        self._stream: av.AudioStream = self._container.add_stream(codec, rate=sample_rate, layout="mono")  # type: ignore[assignment]
        self._container.start_encoding()  # opens the codec: its frame size and sample format are known
        ctx = self._stream.codec_context
        self._frame_size = ctx.frame_size or 4096  # 0: any size (FLAC takes what it gets)
        self._sample_rate = sample_rate
        self._resampler = av.AudioResampler(format=ctx.format, layout="mono", rate=sample_rate)
        self._fifo = av.AudioFifo()

    def _mux(self, frame: Any) -> None:
        for packet in self._stream.encode(frame):
            self._container.mux(packet)

    def encode(self, samples: np.ndarray) -> bytes:
        if len(samples):
            pcm = np.frombuffer(to_pcm(samples, "s16"), dtype="<i2")
            frame = self._av.AudioFrame.from_ndarray(pcm[None], format="s16", layout="mono")
            frame.sample_rate = self._sample_rate
            for converted in self._resampler.resample(frame):
                self._fifo.write(converted)
            while self._fifo.samples >= self._frame_size:
                self._mux(self._fifo.read(self._frame_size))
        return self._sink.take()

    def finish(self) -> bytes:
        rest = self._fifo.read()
        if rest is not None:
            self._mux(rest)
        self._mux(None)  # flush the encoder
        self._container.close()
        return self._sink.take()


def encoder(fmt: str, sample_rate: int) -> StreamEncoder:
    """A streaming encoder for one of `FORMATS`."""
    if fmt == "pcm":
        return _Pcm()
    if fmt == "wav":
        return _Wav(sample_rate)
    if fmt in _CODECS:
        return _PyAV(fmt, sample_rate)
    raise ValueError(f"response_format must be one of {', '.join(FORMATS)}, got {fmt!r}")
