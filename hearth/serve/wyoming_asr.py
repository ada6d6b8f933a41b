"""Wyoming speech-to-text over the server's Qwen3-ASR: `transcribe`, `audio-start`, `audio-chunk`...,
`audio-stop` -> `transcript`.

As chunks arrive they are decoded from PCM, mixed down and resampled to 16 kHz by a streaming
resampler (`hearth.listen.resample.Resampler`: the chunks give exactly the samples of the whole),
and the length is checked, so at `audio-stop` only the model's work is left. The model itself
starts at `audio-stop`, not before, because its input is not local in time: the log-mel features
are floored at the whole recording's loudest value less 8 (log10; `hearth.listen.features`, as
Whisper's extractor), and audio whose peak passes 1 is scaled by that peak (`prepare_audio`), so a
window encoded while audio still comes would differ from the same window encoded with the rest
heard. `transcribe`'s `transcript_names` and `transcript_terms` become the model's context.

Streaming transcripts (`supports_transcript_streaming`): while the audio comes, a live
transcription (`hearth.listen.live`) hears it every 2 s, and the text each update will keep
(`LiveEvent.stable`) goes out as `transcript-chunk`s after a `transcript-start`: each chunk the text
that follows what was sent, so the chunks joined are always the start of the transcript heard so
far. At `audio-stop` the recording is transcribed whole, as without streaming (the offline text,
the most accurate); the chunks are completed by what that text adds to them, then come `transcript`
(for clients that read only it) and `transcript-stop`. Updates still waiting when the audio stops
are dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
from wyoming.asr import Transcript, TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.audio import AudioChunk, AudioStart
from wyoming.event import Event
from wyoming.info import AsrModel, AsrProgram, Attribution

from hearth import __version__
from hearth.errors import InputError
from hearth.listen import ListenOptions, LiveOptions
from hearth.listen.audio import SAMPLE_RATE
from hearth.listen.languages import CODES, LANGUAGES, language_named
from hearth.listen.resample import MAX_CHANNELS, Resampler
from hearth.runtime.request import Busy
from hearth.serve.live_text import LiveText

__all__ = ["MAX_STREAM_SECONDS", "AsrExchange", "LiveChunks", "asr_program"]

MAX_STREAM_SECONDS = 1800.0  # one exchange's audio


def asr_program(model_name: str, languages: tuple[str, ...] = LANGUAGES) -> AsrProgram:
    """The `asr` program `describe` lists beside `tts`."""
    codes = sorted({CODES[n] for n in languages if n in CODES})
    attribution = Attribution(name="Qwen team, Alibaba Cloud (Qwen3-ASR, Apache-2.0)",
                              url="https://github.com/QwenLM/Qwen3-ASR")
    model = AsrModel(name=model_name, attribution=attribution, installed=True, version=None, languages=codes,
                     description=f"Qwen3-ASR {model_name} on this machine")
    hearth = Attribution(name="Hearth", url="https://pypi.org/project/hearth-tts/")
    return AsrProgram(name="hearth-asr", attribution=hearth, installed=True,
                      description="Hearth: speech to text with Qwen3-ASR", version=__version__,
                      models=[model], supports_transcript_streaming=True)


class AsrExchange:
    """One connection's speech-to-text: the options `transcribe` gave, then the audio as it comes."""

    def __init__(self, languages: tuple[str, ...]):
        self.languages = languages
        self.options = ListenOptions()
        self._resampler: Resampler | None = None
        self._width = 2
        self._channels = 1
        self._parts: list[np.ndarray] = []
        self._samples = 0  # at 16 kHz
        self._chunks: LiveChunks | None = None

    @property
    def open(self) -> bool:
        return self._resampler is not None

    def transcribe(self, data: dict[str, Any]) -> None:
        """`transcribe`: the language (a Home Assistant code or a name) and the names and terms to expect."""
        language = data.get("language")
        names = [str(n) for n in data.get("transcript_names") or [] if isinstance(n, str)]
        terms = [str(t) for t in data.get("transcript_terms") or [] if isinstance(t, str)]
        context = "; ".join(p for p in (", ".join(names), ", ".join(terms)) if p)
        self.options = ListenOptions(context=context[:4096], language=language_named(language, self.languages)
                                     if isinstance(language, str) or language is None else _bad_language(language))

    def start(self, start: AudioStart, chunks: LiveChunks | None = None) -> None:
        """`audio-start`; `chunks`, if given, follows the audio with a streaming transcript."""
        if start.width not in (1, 2, 4):
            raise InputError(f"audio-start: samples of {start.width} bytes; send 16-bit PCM (width 2), or 8 or 32")
        if not 1 <= start.channels <= MAX_CHANNELS:
            raise InputError(f"audio-start: {start.channels} channels; send 1 to {MAX_CHANNELS}")
        self._resampler = Resampler(start.rate, SAMPLE_RATE)  # (a rate outside 4 to 384 kHz is refused here)
        self._width, self._channels = start.width, start.channels
        self._parts, self._samples = [], 0
        self._chunks = chunks

    def chunk(self, chunk: AudioChunk) -> np.ndarray:
        """The chunk's samples at 16 kHz (kept for the transcript at `audio-stop`)."""
        if self._resampler is None:
            raise InputError("audio-chunk before audio-start")
        raw = chunk.audio[: len(chunk.audio) // (self._width * self._channels) * self._width * self._channels]
        if self._width == 1:
            values = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) / 128.0
        else:
            values = np.frombuffer(raw, f"<i{self._width}").astype(np.float32) / float(2 ** (8 * self._width - 1))
        mono = values.reshape(-1, self._channels).mean(axis=1) if self._channels > 1 else values
        part = self._resampler.push(mono)
        self._parts.append(part)
        self._samples += part.shape[0]
        if self._samples > MAX_STREAM_SECONDS * SAMPLE_RATE:
            self._resampler = None
            self._parts = []
            raise InputError(f"the audio passed {MAX_STREAM_SECONDS:.0f} s; one transcription takes at most that")
        if self._chunks is not None:
            self._chunks.feed(part)
        return part

    def stop(self) -> tuple[np.ndarray, LiveChunks | None]:
        """The whole recording at 16 kHz, and what followed it (the exchange closes)."""
        if self._resampler is None:
            raise InputError("audio-stop without audio-start")
        samples = np.concatenate([*self._parts, self._resampler.finish()])
        chunks, self._chunks = self._chunks, None
        self._resampler, self._parts = None, []
        return samples, chunks

    async def answer(self, samples: np.ndarray, hearing: Any, pool: Any,  # noqa: ANN401
                     chunks: LiveChunks | None, write: Callable[[Event], Awaitable[None]]) -> None:
        """The `transcript` of `samples` (16 kHz), transcribed in its turn off the event loop, written
        (after the streamed chunks, completed, when `chunks` followed the audio)."""
        if hearing is None or hearing.listener is None:
            raise InputError("the listening model could not be loaded")
        t = await hearing.run(pool, hearing.transcribe, samples, SAMPLE_RATE, self.options)
        first = t.language.split(",")[0] if t.language else ""
        transcript = Transcript(text=t.text, language=CODES.get(first) or None)
        await (chunks.end(transcript) if chunks is not None else write(transcript.event()))


class LiveChunks:
    """One exchange's streaming transcript: the audio fed to a live transcription off the event loop,
    one update at a time (audio that comes meanwhile waits, and of the chunks it completes only the
    last is heard: `LiveTranscription.push(latest_only=True)`), and its kept text written as
    `transcript-chunk`s (see the module)."""

    def __init__(self, service: Any, options: ListenOptions, write: Callable[[Event], Awaitable[None]]):  # noqa: ANN401
        """`service`: the server's state (its `hearing` and `pool`)."""
        self._hearing, self._pool, self._options, self._write = service.hearing, service.pool, options, write
        self._session: Any = None
        self._waiting: list[np.ndarray] = []
        self._running: asyncio.Task[None] | None = None
        self._stopped = False
        self._started = False
        self._text = LiveText()  # the text the chunks sent so far spell

    def feed(self, samples: np.ndarray) -> None:
        if samples.size and not self._stopped:
            self._waiting.append(samples)
            if self._running is None or self._running.done():
                self._running = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        while self._waiting and not self._stopped:
            if self._hearing is None or self._hearing.listener is None:
                return
            if self._session is None:
                self._session = self._hearing.listener.live(self._options, LiveOptions(), SAMPLE_RATE)
            samples = np.concatenate(self._waiting)
            self._waiting = []
            try:
                events = await self._hearing.run(self._pool, self._session.push, samples, True)
            except Busy:  # the server is full: the audio waits for the next chunk's turn
                self._waiting.insert(0, samples)
                return
            for event in events:
                await self._send(self._text.update(event))

    async def _send(self, piece: str) -> None:
        if not self._started:
            self._started = True
            await self._write(TranscriptStart(language=_code(self._options.language)).event())
        if piece:
            await self._write(TranscriptChunk(text=piece).event())

    async def end(self, transcript: Transcript) -> None:
        """After the audio: the chunks completed by the whole recording's text, `transcript`, then
        `transcript-stop`. Updates not yet started are dropped; a running one is waited for."""
        self._stopped = True
        if self._running is not None:
            await asyncio.gather(self._running, return_exceptions=True)
        await self._send(self._text.complete(transcript.text))
        await self._write(transcript.event())
        await self._write(TranscriptStop().event())


def _code(language: str | None) -> str | None:
    return CODES.get(language) if language else None


def _bad_language(language: object) -> str:
    raise InputError(f"transcribe: the language must be a string such as en, got {language!r}")
