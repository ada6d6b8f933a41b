"""Home Assistant's Wyoming protocol: one-shot and streamed synthesis over the scheduler.

Each connection is a `Session`. Events are read by our own reader (malformed input gets an
`error` event rather than a silent hang-up), audio is written by one task per synthesis that takes
chunks from the request's channel as they leave the vocoder, and every request is cancelled when
its connection goes away. The wire types are the `wyoming` package's.

- `synthesize {text, voice}`: the text's sentences in one audio-start ... audio-stop.
- `synthesize-start`, `synthesize-chunk`..., `synthesize-stop`: sentences are found as the text
  arrives and each is spoken as soon as it is complete, in its own audio-start ... audio-stop, then
  `synthesize-stopped`. The compatibility `synthesize` sent inside the exchange is ignored.

The audio of sentence i is sampled with seed + i in both forms, so with a fixed `--seed` a streamed
exchange gives exactly the samples of the one-shot synthesis of the same text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event, async_write_event
from wyoming.info import Attribution, Describe, Info, TtsProgram, TtsVoice
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeStopped

from hearth import __version__
from hearth.checkpoint.config import ModelConfig
from hearth.engine import Engine
from hearth.errors import InputError
from hearth.frames import FRAME_S
from hearth.runtime.scheduler import Busy, Request, Scheduler, SentenceFailed
from hearth.serve.shared_engine import SharedEngine
from hearth.serve.wyoming_asr import AsrExchange, LiveChunks, asr_program
from hearth.serve.wyoming_events import Malformed, read_event
from hearth.streaming.pacing import PacedChunks, Pacer, SpeechRate
from hearth.streaming.sinks import to_pcm
from hearth.voices.rules import VoiceRules

__all__ = ["LANGUAGE_CODES", "WyomingState", "Session", "describe"]

log = logging.getLogger(__name__)

# Home Assistant's language codes for the model's languages.
LANGUAGE_CODES = {
    "chinese": "zh", "english": "en", "german": "de", "italian": "it", "portuguese": "pt", "spanish": "es",
    "japanese": "ja", "korean": "ko", "french": "fr", "russian": "ru",
}
# The built-in voices as the model card describes them (every voice speaks every language).
_VOICE_NOTES = {
    "vivian": "bright young woman; native Chinese",
    "serena": "warm, gentle young woman; native Chinese",
    "uncle_fu": "mature man with a low, mellow timbre; native Chinese",
    "dylan": "young man from Beijing; speaks Beijing dialect for Chinese",
    "eric": "lively man from Chengdu; speaks Sichuan dialect for Chinese",
    "ryan": "dynamic man; native English",
    "aiden": "sunny young American man; native English",
    "ono_anna": "playful young woman; native Japanese",
    "sohee": "warm young woman; native Korean",
}
_URL = "https://github.com/QwenLM/Qwen3-TTS"


def describe(config: ModelConfig, model_name: str, voices: list[str] | None = None) -> Info:
    """The `info` answer: one streaming TTS program whose voices are the checkpoint's speakers, or
    the given ones (a Base checkpoint's stored voices; a VoiceDesign checkpoint's one, "designed")."""
    codes = sorted(LANGUAGE_CODES[lang] for lang in config.languages if lang in LANGUAGE_CODES)
    attribution = Attribution(name="Qwen team, Alibaba Cloud (Qwen3-TTS, Apache-2.0)", url=_URL)
    notes = {"designed": "the voice the server's --instruct describes"} if config.model_type == "voice_design" else {}
    if config.model_type == "base":
        notes = dict.fromkeys(voices or [], "a cloned voice (hearth voice add)")
    tts_voices = [
        TtsVoice(name=voice, attribution=attribution, installed=True, version=None, languages=codes,
                 description=f"{voice.replace('_', ' ').title()}: "
                             f"{notes.get(voice) or _VOICE_NOTES.get(voice, 'built-in voice')}")
        for voice in (voices if voices is not None else config.voices)
    ]
    program = TtsProgram(
        name="hearth", description=f"Hearth: Qwen3-TTS {model_name} on this machine, streaming",
        attribution=Attribution(name="Hearth", url="https://pypi.org/project/hearth-tts/"), installed=True,
        version=__version__, voices=tts_voices, supports_synthesize_streaming=True,
    )
    return Info(tts=[program])


def model_language(code: Any, config: ModelConfig) -> str:
    """The model's language for a Home Assistant code ("en", "de-DE", "zh_CN"; also "english"), or
    "auto" for none."""
    if code is None or code == "":
        return "auto"
    if not isinstance(code, str):
        raise InputError(f"the voice's language must be a string, got {code!r}")
    key = code.strip().lower().replace("_", "-")
    if key in config.languages:
        return key
    primary = key.split("-", 1)[0]
    for language, short in LANGUAGE_CODES.items():
        if short == primary and language in config.languages:
            return language
    known = ", ".join(sorted(LANGUAGE_CODES[lang] for lang in config.languages if lang in LANGUAGE_CODES))
    raise InputError(f"unknown language {code!r}; this model speaks: {known} (or leave it out for auto)")


@dataclass(kw_only=True)
class WyomingState(SharedEngine):
    """What the sessions share: the checkpoint's info (known before loading), then the engine."""

    config: ModelConfig
    model_name: str
    # Every synthesis's request options (hearth.options.FIELDS' resident rows, from the command line:
    # Wyoming's events carry none of them): seed, max_new_tokens, instruct (a VoiceDesign checkpoint's
    # voice), speed, normalize.
    options: dict[str, Any] = field(default_factory=dict)
    voice_aliases: dict[str, str] = field(default_factory=dict)  # other names for voices (hearth.voices.openai_names)
    playback: str = "auto"  # when a synthesis's audio starts (streaming.pacing): held where the machine is slow
    default_voice: str | None = None  # a synthesis that names no voice: this one (None: the first)
    default_language: str | None = None  # ... and no language: this one (None: auto)
    sessions: set[Session] = field(default_factory=set)
    listening: tuple[str, tuple[str, ...]] | None = None  # (the ASR model's name, its languages): an asr program
    hearing_models: dict[str, Any] = field(default_factory=dict)  # --listen, --aligner, ... as given

    def defaults(self, voice: str | None, language: str | None) -> tuple[str | None, str | None]:
        """(the voice, the model's language) that `--voice` and `--language` name, checked."""
        if voice is not None and self.config.model_type != "voice_design":
            rules = VoiceRules(self.config, self.voice_aliases, self.voices)
            chosen = rules.resolve(voice)
            voice = chosen if isinstance(chosen, str) else None
        elif voice is not None:
            raise InputError(f"a {self.config.kind} checkpoint has no voices to choose: describe one with --instruct",
                             "voice")
        if language is not None:
            try:
                language = model_language(language, self.config)
            except InputError as e:
                raise e.about("language") from None
        return voice, language

    def voices(self) -> list[str]:
        """The voice names a synthesis may ask for: the checkpoint's, a Base checkpoint's stored
        voices (read again each time: voices added while serving appear), "designed" for VoiceDesign."""
        kind = self.config.model_type
        if kind == "voice_design":
            return ["designed"]
        if kind != "base":
            return self.config.voices
        if self.engine is not None:
            return self.engine.voices
        from hearth.voices.cloning import VoiceStore

        return VoiceStore().names()  # while loading: before the checkpoint's own are known

    def info(self) -> Info:
        info = describe(self.config, self.model_name, self.voices())
        if self.listening is not None:
            info.asr = [asr_program(*self.listening)]
        return info


class Session(AsyncEventHandler):
    """One client connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, service: WyomingState):
        super().__init__(reader, writer)
        self.service = service
        self._streamed: Request | None = None  # the open request of a streaming exchange
        self._streaming = False  # between synthesize-start and synthesize-stop
        self._requests: set[Request] = set()
        self._task: asyncio.Task[None] | None = None  # the newest synthesis; each waits for the one before
        self._closed = False
        self._heard: AsrExchange | None = None  # speech to text, when the server listens

    # -- reading ---------------------------------------------------------------------------------

    async def run(self) -> None:
        self.service.sessions.add(self)
        try:
            while not self._closed:
                item = await read_event(self.reader)
                if item is None:
                    break
                if isinstance(item, Malformed):
                    await self._report(item.message, "malformed")
                    if item.fatal:
                        break
                    continue
                if not await self.handle_event(item):
                    break
        except (ConnectionError, OSError):
            pass
        finally:
            await self.disconnect()
            self.service.sessions.discard(self)
            self.writer.close()

    async def disconnect(self) -> None:
        """The client went away (or the server is stopping): its requests stop within a frame."""
        self._closed = True
        for request in list(self._requests):
            if not request.finished:
                log.info("wyoming request %d: cancelled, the client went away (%d sentence(s) started of %d)",
                         request.id, len(request.sentences), request.total_sentences)
            request.cancel()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def stop(self) -> None:
        self._closed = True
        for request in list(self._requests):
            request.cancel()
        await super().stop()

    async def handle_event(self, event: Event) -> bool:
        try:
            return await self._handle(event)
        except InputError as e:
            await self._report(str(e), "bad-request")
        except Busy as e:
            await self._report(str(e), "busy")
        except (ConnectionError, OSError):
            raise
        except Exception as e:  # noqa: BLE001 - a bug met by this connection stays with its request
            log.exception("wyoming: handling a %s event failed", event.type)
            if self._streamed is not None:
                self._streamed.cancel()
                self._streamed = None
            await self._report(f"the server failed handling {event.type} ({type(e).__name__}: {e})",
                               "server-error")
        return True

    async def _report(self, text: str, code: str) -> None:
        """An error event, after the audio of the syntheses asked for before (answers stay in order)."""
        before = self._task
        if before is None or before.done():
            await self._error(text, code)
            return

        async def later() -> None:
            await asyncio.gather(before, return_exceptions=True)
            await self._error(text, code)

        self._task = asyncio.create_task(later())

    async def _handle(self, event: Event) -> bool:
        if Describe.is_type(event.type):
            await self._write(self.service.info().event())
        elif Ping.is_type(event.type):
            await self._write(Pong(text=Ping.from_event(event).text).event())
        elif Synthesize.is_type(event.type):
            if self._streaming:
                return True  # the compatibility copy of a streamed text: the protocol says ignore it
            request = await self._submit(event.data)
            self._start(request, streamed=False)
        elif SynthesizeStart.is_type(event.type):
            if self._streaming:
                raise InputError("a streamed synthesis is already open; send synthesize-stop first")
            # If the request cannot be opened (error event), the exchange still runs its course:
            # its chunks are dropped and synthesize-stop is answered with synthesize-stopped.
            self._streaming, self._streamed = True, None
            self._streamed = await self._open(event.data)
            self._start(self._streamed, streamed=True)
        elif SynthesizeChunk.is_type(event.type):
            text = event.data.get("text")
            if not self._streaming:
                raise InputError("synthesize-chunk comes between synthesize-start and synthesize-stop")
            if not isinstance(text, str):
                raise InputError('synthesize-chunk needs "text", a string')
            if self._streamed is not None:
                try:
                    self._streamed.push(text)
                except InputError:
                    self._streamed.cancel()  # its task answers synthesize-stopped
                    self._streamed = None
                    raise
        elif SynthesizeStop.is_type(event.type):
            if not self._streaming:
                raise InputError("synthesize-stop without synthesize-start")
            self._streaming = False
            if self._streamed is not None:
                self._streamed.end()
                self._streamed = None
            else:
                self._task = asyncio.create_task(self._stopped(self._task))
        elif any(t.is_type(event.type) for t in (Transcribe, AudioStart, AudioChunk, AudioStop)):
            await self._hear(event)
        else:
            raise InputError(f"unknown event {event.type!r}; this server answers describe, synthesize, "
                             "synthesize-start/-chunk/-stop, transcribe, audio-start/-chunk/-stop and ping")
        return True

    async def _hear(self, event: Event) -> None:  # speech to text (`wyoming_asr`): the transcript after audio-stop
        if self.service.listening is None:
            raise InputError("this server transcribes nothing: start hearth wyoming with --listen "
                             "Qwen/Qwen3-ASR-0.6B (docs/home-assistant.md)")
        heard = self._heard = self._heard or AsrExchange(self.service.listening[1])
        if Transcribe.is_type(event.type):
            heard.transcribe(event.data)
        elif AudioStart.is_type(event.type):
            heard.start(AudioStart.from_event(event), LiveChunks(self.service, heard.options, self._write))
        elif AudioChunk.is_type(event.type):
            heard.chunk(AudioChunk.from_event(event))
        else:
            self._task = asyncio.create_task(self._transcript(heard, *heard.stop(), self._task))

    async def _transcript(self, heard: AsrExchange, samples: Any, chunks: LiveChunks | None,  # noqa: ANN401
                          before: asyncio.Task[None] | None) -> None:
        await asyncio.gather(*(t for t in (before,) if t is not None), return_exceptions=True)  # answers in order
        try:
            await self._scheduler()  # (loaded: the listening models load with the speech model)
            await heard.answer(samples, self.service.hearing, self.service.pool, chunks, self._write)
        except (InputError, Busy) as e:
            await self._error(str(e), "busy" if isinstance(e, Busy) else "bad-request")

    # -- requests --------------------------------------------------------------------------------

    async def _scheduler(self) -> tuple[Engine, Scheduler]:
        service = self.service
        if not service.ready.is_set():
            await asyncio.get_running_loop().run_in_executor(service.pool, service.ready.wait)
        if service.engine is None or service.scheduler is None:
            raise InputError(f"the model could not be loaded: {service.error}")
        return service.engine, service.scheduler

    def _voice(self, data: dict[str, Any]) -> tuple[str | None, str]:
        voice = data.get("voice") or {}
        if not isinstance(voice, dict):
            raise InputError('"voice" must be an object such as {"name": "ryan"}')
        config = self.service.config
        rules = VoiceRules(config, self.service.voice_aliases, self.service.voices)
        name = voice.get("name")
        voices = rules.choices()
        chosen = rules.resolve(name, design_voice="ignore",
                               default=self.service.default_voice or (voices[0] if voices else None))
        language = voice.get("language")
        if not language and self.service.default_language:
            return chosen if isinstance(chosen, str) else None, self.service.default_language
        return chosen if isinstance(chosen, str) else None, model_language(language, config)

    async def _submit(self, data: dict[str, Any]) -> Request:
        text = data.get("text")
        if not isinstance(text, str):
            raise InputError('synthesize needs "text", a string')
        voice, language = self._voice(data)
        _, scheduler = await self._scheduler()
        text_format = data.get("text_format") or "text"  # (Wyoming 1.9 and later: "ssml" where the client says so)
        return scheduler.submit(text, voice, language, on_failure="raise",
                                **{**self.service.options, "text_format": text_format})

    async def _open(self, data: dict[str, Any]) -> Request:
        voice, language = self._voice(data)
        _, scheduler = await self._scheduler()
        return scheduler.open(voice, language, on_failure="raise",
                              **{**self.service.options, "text_format": data.get("text_format") or "text"})

    def _start(self, request: Request, streamed: bool) -> None:
        self._requests.add(request)
        before = self._task
        self._task = asyncio.create_task(self._speak(request, streamed, before))

    # -- writing ---------------------------------------------------------------------------------

    async def _write(self, event: Event) -> None:
        await async_write_event(event, self.writer)

    async def _error(self, text: str, code: str) -> None:
        log.info("wyoming client error (%s): %s", code, text)
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            await self._write(Error(text=text, code=code).event())

    async def _stopped(self, before: asyncio.Task[None] | None) -> None:
        """synthesize-stopped for an exchange whose request could not be opened."""
        if before is not None:
            await asyncio.gather(before, return_exceptions=True)
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            await self._write(SynthesizeStopped().event())

    async def _speak(self, request: Request, streamed: bool, before: asyncio.Task[None] | None) -> None:
        """Audio events for one request, as its chunks come; after the synthesis before it. Where
        the machine is slower than real time, a request's audio is held until the rest can play
        without a gap at the client (`hearth.streaming.pacing`, the server's --playback), as a local player's."""
        open_block = False
        scheduler = self.service.scheduler
        chunks = PacedChunks(Pacer(self.service.playback, scheduler.rate if scheduler is not None else SpeechRate()))
        told = ""

        async def send(chunk: Any) -> None:  # noqa: ANN401 - a request's chunk
            nonlocal open_block
            rate = chunk.sample_rate
            if not open_block:
                await self._write(AudioStart(rate=rate, width=2, channels=1).event())
                open_block = True
            if len(chunk.samples):
                pcm = to_pcm(chunk.samples, "s16")
                await self._write(AudioChunk(rate=rate, width=2, channels=1, audio=pcm).event())
            if streamed and chunk.sentence_end:
                await self._write(AudioStop().event())
                open_block = False

        async def flush(ended: bool) -> None:
            while (chunk := chunks.take(ended, time.monotonic())) is not None:
                await send(chunk)

        try:
            if before is not None:
                await asyncio.gather(before, return_exceptions=True)
            try:
                async for chunk in request:
                    if request.text != told and self.service.engine is not None:
                        told = request.text
                        chunks.expect(len(self.service.engine.tokenizer.encode(told)))
                    chunks.add(chunk, time.monotonic())
                    await flush(False)
                await flush(True)
            except SentenceFailed as e:
                await flush(True)
                if open_block:
                    await self._write(AudioStop().event())
                    open_block = False
                await self._error(str(e), "synthesis-failed")
            if open_block:
                await self._write(AudioStop().event())
            if request.cancelled:
                if streamed and not self._closed:  # cancelled by a bad chunk: the exchange still ends
                    await self._write(SynthesizeStopped().event())
                return
            if streamed:
                if request.status == "done" and not request.sentences:
                    await self._error("nothing to speak: the streamed text was empty (or had no letters or digits)",
                                      "empty-text")
                await self._write(SynthesizeStopped().event())
            frames = sum(s.frames for s in request.sentences)
            log.info("wyoming request %d: %s, %d sentence(s), %.2f s of audio", request.id, request.status,
                     len(request.sentences), frames * FRAME_S)
        except (ConnectionError, OSError, RuntimeError):  # the client went away mid-stream
            if not request.finished:
                log.info("wyoming request %d: cancelled, the client went away (%d sentence(s) started of %d)",
                         request.id, len(request.sentences), request.total_sentences)
        except Exception as e:  # noqa: BLE001 - a bug met by this synthesis ends it, not the connection
            log.exception("wyoming request %d failed", request.id)
            await self._error(f"the synthesis failed ({type(e).__name__}: {e})", "synthesis-failed")
        finally:
            request.cancel()  # a no-op once it has ended; else generation stops within a frame
            self._requests.discard(request)
