"""The public engine: load a checkpoint once, then turn text into codes and audio.

    import hearth
    engine = hearth.load("Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice")
    audio = engine.synthesize("Hello there.", voice="ryan", language="english", seed=7)
    audio.samples  # float32 numpy array at audio.sample_rate (24 kHz)
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from hearth.backends import Backend, BackendOptions, create, prepare_side_by_side, settings
from hearth.checkpoint.config import ModelConfig
from hearth.checkpoint.exported import export_options
from hearth.checkpoint.loading import DEFAULT_MODEL, Checkpoint, open_checkpoint
from hearth.checkpoint.sampling import SamplingOptions
from hearth.convert import CONVERT_ON_FIRST_USE
from hearth.errors import InputError
from hearth.generation.batch import FrameBatcher
from hearth.generation.frame_loop import Audio, FrameGenerator, Generation, TurnTaking
from hearth.options import SpeechOptions, check_speech_options, speech_for
from hearth.pipeline import document_chunks, sentence_audio, sentence_frames
from hearth.streaming.audio_stream import AudioStream
from hearth.streaming.chunks import AudioChunk, ChunkPlan, StreamEnd
from hearth.streaming.live import BatchInvariance, LiveEmbeds, LiveUtterance
from hearth.streaming.workers import Workers
from hearth.text.normalize.document import normalizer_language, speakable
from hearth.text.normalize.language import language_name
from hearth.text.normalize.lexicon import Lexicon
from hearth.text.normalize.live import LiveNormalizer
from hearth.text.prompt import ClonedVoice, Prompt, Speaker, TextMode, build_prompt, text_mode
from hearth.voices import openai_names as aliases
from hearth.voices.cloning import Cloner, VoiceProfile
from hearth.voices.primed_states import PrimedStates
from hearth.voices.rules import VoiceRules

__all__ = [
    "MAX_TEXT_TOKENS", "Audio", "AudioChunk", "AudioStream", "ChunkPlan", "Engine", "Generation", "InputError",
    "LiveUtterance",
    "load",
]

log = logging.getLogger(__name__)

# Prefill plus generated frames must stay inside the talker's 32768 positions; longer texts belong
# to the sentence splitter of the scheduler, not to one prompt.
MAX_TEXT_TOKENS = 4096


class Engine:
    """A loaded checkpoint on a backend (see `hearth.backends`; the engine never asks which).

    Requests may come from several threads: each stream and each generation has its own session,
    vocoder state and worker threads. Several at once share the CPU, so each runs slower; the
    scheduler (`hearth.runtime.scheduler`) decides who goes first. `close()` stops every stream.
    """

    def __init__(self, checkpoint: Checkpoint, options: BackendOptions | None = None, *,
                 voice_aliases: Mapping[str, str] | Iterable[str] | None = None, lexicon: Lexicon | None = None):
        options = options or BackendOptions()
        self.lexicon = lexicon  # the pronunciation lexicon every request's normalizer uses (None: none)
        # Other names for voices (OpenAI's, by default, on a CustomVoice checkpoint): see hearth.voices.openai_names.
        self.voice_aliases = aliases.voice_aliases(checkpoint.config, voice_aliases)
        settings.configure_process(options)
        try:
            if options.loads_side_by_side:  # one runtime for both: the tokenizer is read meanwhile,
                prepare_side_by_side(checkpoint, options, CONVERT_ON_FIRST_USE)  # once every library is open
                with ThreadPoolExecutor(1, thread_name_prefix="hearth-load") as pool:
                    tokenizer = pool.submit(checkpoint.tokenizer)
                    backend = create(checkpoint, options, CONVERT_ON_FIRST_USE)
                    self.tokenizer = tokenizer.result()
            else:
                # Read before the networks load, not beside them: a thread starting its pools (the
                # tokenizer's) while a runtime loads its libraries can trip glibc (see `backends.create`).
                self.tokenizer = checkpoint.tokenizer()
                backend = create(checkpoint, options, CONVERT_ON_FIRST_USE)
        except ValueError as e:
            raise InputError(str(e)) from e
        self.checkpoint = checkpoint
        self.config: ModelConfig = checkpoint.config
        self.backend: Backend = backend
        self.lm = backend.lm
        self.vocoder = backend.vocoder
        self.overlap = backend.overlap
        self.sample_rate = checkpoint.codec.sample_rate
        self.samples_per_frame = checkpoint.codec.upsample
        self.default_chunk_frames = settings.chunk_frames()
        self.workers = Workers()
        self._invariance: BatchInvariance | None = None
        self._invariance_lock = threading.Lock()
        self.cloner = Cloner(checkpoint)  # voice cloning (Base checkpoints): encoders load on first use
        self.voice_rules = VoiceRules(checkpoint.config, self.voice_aliases, self.cloner.usable)
        self._primed = PrimedStates(self.vocoder)  # vocoder states that heard a cloned voice's reference
        t0 = time.perf_counter()
        self.workers.warm(backend.warm_up)  # on a worker thread: the one the first request will use
        log.debug("warm-up %.2f s", time.perf_counter() - t0)

    @property
    def options(self) -> BackendOptions:
        return self.backend.options

    @property
    def default_first_chunk(self) -> int:
        """Frames in the first chunk unless a request says otherwise (the backend's choice)."""
        return self.backend.first_chunk_frames

    def close(self) -> None:
        """Stop every stream (each within a frame) and end the worker threads."""
        self.workers.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def voices(self) -> list[str]:
        """Built-in voices; for a Base checkpoint, the stored voice profiles made with it."""
        return self.voice_rules.choices()

    @property
    def languages(self) -> list[str]:
        return self.config.languages

    def check_voice(self, voice: Speaker) -> Speaker:
        """Who speaks, checked against the checkpoint's kind: a built-in voice's name (CustomVoice),
        a speaker embedding from `speaker_embedding` (Base), or None (VoiceDesign: the instruction
        describes the voice)."""
        try:
            return self._check_voice(voice)
        except InputError as e:
            raise e.about("voice") from e.__cause__

    def _check_voice(self, voice: Speaker) -> Speaker:
        resolved = self.voice_rules.resolve(voice)
        if self.config.model_type == "base" and isinstance(resolved, str):
            return self.cloner.stored(resolved)  # the profile by its resolved name
        return resolved

    def add_voice(self, name: str, audio: np.ndarray, sample_rate: int, text: str | None = None, *,
                  x_vector_only: bool = False, replace: bool = False, consent: str | None = None) -> VoiceProfile:
        """Clone a voice and store it as profile `name` (then usable by name, with this checkpoint)."""
        return self.cloner.add(name, audio, sample_rate, text, x_vector_only=x_vector_only, replace=replace,
                               consent=consent)

    def clone_voice(self, audio: np.ndarray, sample_rate: int, text: str | None = None, *,
                    x_vector_only: bool = False) -> ClonedVoice:
        """A voice cloned from reference audio (mono float in [-1, 1], any sample rate: resampled as
        the official pipeline does) with a Base checkpoint, as the official
        `create_voice_clone_prompt` makes it: in context (the default; `text` is the reference's
        transcript) or from the speaker embedding alone (`x_vector_only`)."""
        return self.cloner.clone(audio, sample_rate, text, x_vector_only=x_vector_only)

    def speaker_embedding(self, audio: np.ndarray, sample_rate: int) -> ClonedVoice:
        """A Base checkpoint's speaker embedding of reference audio: the x-vector-only clone."""
        return self.cloner.embedding(audio, sample_rate)

    def reference_codes(self, audio: np.ndarray, sample_rate: int) -> np.ndarray:
        """A Base checkpoint's speech-tokenizer codes [frames, 16] of reference audio."""
        return self.cloner.codes(audio, sample_rate)


    def check_language(self, language: str) -> str:
        lang = language_name(language) if isinstance(language, str) else None  # a name, or its code ("en")
        if lang not in self.languages:
            raise InputError(f"unknown language {language!r}; choose one of: {', '.join(self.languages)}", "language")
        return lang

    def prompt(self, text: str, instruct: str | None = None) -> Prompt:
        if not isinstance(text, str) or not text.strip():
            raise InputError("the text is empty; give some words to speak", "text")
        instruct = self.check_instruct(instruct)
        if len(text) > 8 * MAX_TEXT_TOKENS:  # cheap bound before tokenizing megabytes
            raise InputError(
                f"the text is {len(text)} characters, too long for one prompt (limit {MAX_TEXT_TOKENS} tokens); "
                "split it into sentences or paragraphs", "text"
            )
        p = build_prompt(self.tokenizer, text, instruct)
        if len(p.text) > MAX_TEXT_TOKENS:
            raise InputError(
                f"the text is {len(p.text)} tokens, more than one prompt takes ({MAX_TEXT_TOKENS}); "
                "split it into sentences or paragraphs", "text"
            )
        return p

    def check_instruct(self, instruct: str | None) -> str | None:
        """The instruction, or None (with a warning) for a model that does not take one; a
        VoiceDesign checkpoint's is required (`VoiceRules.check_instruct`)."""
        self.voice_rules.check_instruct(instruct)
        if instruct and not self.config.honours_instruct:
            log.warning("instruct is ignored: the %s model does not support it (1.7B does)", self.config.model_size)
            return None
        return instruct

    def sampling(self, greedy: bool = False, **overrides: object) -> SamplingOptions:
        opts = self.checkpoint.generation.with_overrides(**overrides)
        return opts.greedy() if greedy else opts

    def speech_options(self, voice: Speaker, language: str = "auto", **options: Any) -> SpeechOptions:
        """Every option of one request, checked once (`hearth.options`): voice, language, instruct,
        text_mode, seed, greedy, max_new_tokens, options (`SamplingOptions`), budget, chunk_frames,
        first_chunk_frames, paced, speed. Bad input raises InputError naming the parameter."""
        return check_speech_options(self, voice, language, **options)

    def frames(self, text: str, voice: Speaker = None, language: str = "auto", *, speech: SpeechOptions | None = None,
               turn: TurnTaking | None = None, batcher: FrameBatcher | None = None, **options: Any) -> FrameGenerator:
        """A lazy iterator of frames ([16] int64 numpy arrays); generation runs as it is consumed (by
        `batcher`'s thread, stepped with other utterances, when one is given). Options as for
        `stream` (sampling draws from a generator seeded with `seed`, random if None)."""
        return self._frames(text, speech_for(self, voice, language, speech, options), turn, batcher)

    def spoken(self, text: str, opts: SpeechOptions) -> str:
        """What is said for `text`: normalized unless the options turn it off (`hearth.text.normalize`)."""
        _plain_text_only(opts)
        return speakable(text, opts.language, opts.normalize)[0].text if opts.normalize.enabled else text

    def _frames(self, text: str, opts: SpeechOptions, turn: TurnTaking | None = None,
                batcher: FrameBatcher | None = None) -> FrameGenerator:
        text = self.spoken(text, opts)
        prompt = self.prompt(text, opts.instruct)  # the pipeline's step 1 (hearth.pipeline)
        return sentence_frames(self.lm, self.config, text, prompt, opts, turn, batcher)

    @property
    def default_text_mode(self) -> TextMode:
        """The official defaults: text interleaved with the codes for a cloned voice (its
        `generate_voice_clone`), the whole text in the prompt otherwise."""
        return "interleaved" if self.config.model_type == "base" else "whole"

    def check_text_mode(self, mode: str | None) -> TextMode:
        """The text mode (None: `default_text_mode`)."""
        if mode is None:
            return self.default_text_mode
        try:
            return text_mode(mode)
        except ValueError as e:
            raise InputError(str(e), "text_mode") from e

    def stream(self, text: str, voice: Speaker = None, language: str = "auto", *, speech: SpeechOptions | None = None,
               max_ready: int = 4, turn: TurnTaking | None = None, batcher: FrameBatcher | None = None,
               deliver: Callable[[AudioChunk | StreamEnd], None] | None = None, **options: Any) -> AudioStream:
        """Audio chunks as they are made: generation and vocoding run in workers while you consume.

        The request's options come as keywords (`speech_options`: instruct, text_mode, seed, greedy,
        max_new_tokens, options, budget, chunk_frames, first_chunk_frames, paced, speed) or made
        once and passed whole as `speech=` (then without voice, language or keywords). The first
        chunk holds `first_chunk_frames` frames (80 ms each; default `default_first_chunk`), the
        others `chunk_frames` (default `default_chunk_frames`: tuned, else 5); at most `max_ready`
        decoded chunks wait for the consumer. `paced` sizes each later chunk (at most
        `chunk_frames`) so that it is ready before the audio already sent has played, for gapless
        real-time playback. Close the stream (or use it in a `with` block) to stop early;
        generation then stops within one frame. `turn` lets a scheduler decide, frame by frame, when
        this stream may compute (see `generate.TurnTaking`); with a `batcher` (`hearth.generation.batch.FrameBatcher`)
        its frames are computed together with other streams'. `speed` (0.25 to 4.0) changes the
        speaking rate and keeps the pitch; 1.0 leaves the audio untouched. `deliver` makes it a
        pushing stream (see `AudioStream`): chunks go to it as they are decoded, and the speed is
        left to its receiver, which applies it as it hands them out (the scheduler's requests do).
        """
        opts = speech_for(self, voice, language, speech, options)
        frames = self._frames(text, opts, turn, batcher)
        return self._audio(frames, opts, max_ready, deliver)

    def _audio(self, frames: FrameGenerator, opts: SpeechOptions, max_ready: int,
               deliver: Callable[[AudioChunk | StreamEnd], None] | None = None) -> AudioStream:
        voice = opts.voice
        start = self._primed.start(voice.codes) if isinstance(voice, ClonedVoice) and voice.codes is not None else None
        return sentence_audio(frames, self.vocoder, self.sample_rate, opts, self.workers, max_ready, start, deliver)

    def prime_voice(self, voice: Speaker) -> None:
        """Make a cloned voice's first utterance start as fast as the next ones: decode its reference
        now (servers call this when a voice is added). A no-op for other voices."""
        voice = self.check_voice(voice)
        if isinstance(voice, ClonedVoice) and voice.codes is not None:
            self._primed.start(voice.codes)()

    def forget_primed(self, voice: ClonedVoice | None = None) -> None:
        """Drop the primed vocoder states kept in memory, and `voice`'s kept on disk (benchmarks
        measure a voice's first use)."""
        self._primed.forget(voice.codes if voice is not None else None)

    def open(self, voice: Speaker = None, language: str = "auto", *, speech: SpeechOptions | None = None,
             max_ready: int = 4, turn: TurnTaking | None = None, batcher: FrameBatcher | None = None,
             deliver: Callable[[AudioChunk | StreamEnd], None] | None = None, **options: Any) -> LiveUtterance:
        """An utterance whose text arrives while it speaks (the interleaved text mode):

            with engine.open("ryan", "english", seed=7) as live:
                live.push("Hello the")          # from any thread, as an LLM writes
                live.push("re, how are you?")
                live.end()
                for chunk in live: ...          # audio starts after the first word

        Its codes equal `generate_codes(whole_text, text_mode="interleaved")` with the same seed,
        however the text was cut and whenever it came. Options as for `stream` (text that arrives
        in pieces is always interleaved: text_mode "whole" is refused)."""
        if options.get("text_mode") not in (None, "interleaved", "stream"):
            raise InputError("text that arrives in pieces is spoken interleaved (text_mode interleaved); for the "
                             "whole text in the prompt, give the whole text to stream()", "text_mode")
        opts = speech_for(self, voice, language, speech, options)
        if isinstance(opts.voice, ClonedVoice) and opts.voice.in_context:
            raise InputError("text that arrives in pieces cannot be spoken in an in-context cloned voice yet (its "
                             "prompt needs the whole text); give the whole text, or clone with x_vector_only=True",
                             "voice")
        instruct_ids = build_prompt(self.tokenizer, "", opts.instruct).instruct
        embeds = LiveEmbeds(self.lm, self.config, self.tokenizer, opts.voice, opts.language, instruct_ids,
                            self.batch_invariance(), MAX_TEXT_TOKENS, None if turn is None else turn.waiting)
        frames = FrameGenerator(self.lm, self.config, embeds, opts.sampling, opts.seed, opts.budget, turn, batcher)
        _plain_text_only(opts)
        normalizer = LiveNormalizer(normalizer_language(opts.language), opts.normalize) if opts.normalize.enabled \
            else None
        return LiveUtterance(embeds, self._audio(frames, opts, max_ready, deliver), normalizer)

    def batch_invariance(self) -> BatchInvariance:
        """How this machine's text projection rounds by batch size (measured once, on first use)."""
        with self._invariance_lock:
            if self._invariance is None:
                given = os.environ.get("HEARTH_TEXT_INVARIANCE")
                if self.lm.trailing_block and not given:
                    self._invariance = BatchInvariance(1, 0)  # (aligned blocks: every row is final at once)
                elif given:
                    self._invariance = BatchInvariance.parse(given)
                else:
                    self._invariance = BatchInvariance.measure(self.lm.embed_text,
                                                               self.config.talker.text_vocab_size)
                log.debug("text projection batch invariance: %s", self._invariance)
            return self._invariance

    def generate_codes(self, text: str, voice: Speaker = None, language: str = "auto", *,
                       speech: SpeechOptions | None = None, **options: Any) -> Generation:
        """All frames of one text. Options as for `stream`; sampling draws from a generator seeded
        with the seed (random if None)."""
        opts = speech_for(self, voice, language, speech, options)
        gen = self._frames(text, opts)
        frames = list(gen)
        codes = np.stack(frames) if frames else np.zeros((0, self.config.talker.num_code_groups), np.int64)
        return Generation(codes, opts.seed, gen.stats)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Whole-sequence decode: [frames, 16] codes -> float32 samples (1920 per frame)."""
        codes = np.asarray(codes, np.int64)
        if codes.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        return np.asarray(self.vocoder(codes), np.float32)

    def synthesize(self, text: str, voice: Speaker = None, language: str = "auto", **kwargs: Any) -> Audio:
        """Text to audio in one call: the streaming path, collected. Keyword arguments as for `stream`;
        with text_format="ssml" the document's parts one after another, each with its voice,
        language and rate (part i sampled with seed + i), the silences between them."""
        opts = speech_for(self, voice, language, kwargs.pop("speech", None), kwargs)
        if opts.text_format == "ssml":
            chunks, generation = document_chunks(self, text, opts)
            return self._collect(chunks, opts.seed, generation)
        with self.stream(text, speech=opts) as audio:
            chunks = list(audio)
        return self._collect(chunks, audio.seed, audio.generation)

    def _collect(self, chunks: list[AudioChunk], seed: int | None, generation: Any) -> Audio:  # noqa: ANN401
        groups = self.config.talker.num_code_groups
        codes = np.concatenate([c.codes for c in chunks]) if chunks else np.zeros((0, groups), np.int64)
        samples = np.concatenate([c.samples for c in chunks]) if chunks else np.zeros(0, dtype=np.float32)
        return Audio(samples, self.sample_rate, codes, seed, generation)


def _plain_text_only(opts: SpeechOptions) -> None:
    """One utterance speaks plain text: an SSML document's parts may change voice and pause."""
    if opts.text_format == "ssml":
        raise InputError("SSML is spoken by synthesize() and the scheduler (its parts may change voice and "
                         "pause); stream(), open() and generate_codes() take plain text", "text_format")


def load(
    model: str | os.PathLike[str] = DEFAULT_MODEL,
    dtype: str | None = None,
    progress: bool = True,
    *,
    backend: str | None = None,
    fast: bool = False,
    small: bool = False,
    voice_aliases: Mapping[str, str] | Iterable[str] | None = None,
    lexicon: str | os.PathLike[str] | Lexicon | None = None,
    **backend_options: Any,
) -> Engine:
    """Load a checkpoint directory or hub id, on the fastest installed backend unless told otherwise.

    backend: "openvino" (the default: int8 weights, converted into the cache on first use, about a
    minute for 0.6B), "onnxruntime" (the language model on ONNX Runtime, the default on x86 CPUs
    without AVX-512) or "torch" (the reference, bit-exact with the official
    package; `dtype` "float32" or "bfloat16"). fast: the fastest combination measured, 4-bit
    language-model weights on ONNX Runtime (drift: `hearth accuracy --fast`). small: the fast
    combination with the vocoder's products in 8 bits on ONNX Runtime, for the least memory (a 1 GB
    board; docs/performance.md). Further keywords as
    `hearth.BackendOptions` (weights "int8"/"int4"/"fp16"/"fp32", device, threads, vocoder
    "bf16"/"fp16"/"fp32"/"onnxruntime"/"onnxruntime-int8"/"torch", vocoder_device, vocoder_threads,
    overlap, batch_rows: the most rows a batching scheduler will step at once, its `max_batch`). Settings saved by
    `hearth tune` fill what is not given, exactly as for the `hearth` command
    (`hearth.backends.settings.backend_options`). voice_aliases: other names for voices, over OpenAI's
    names that a CustomVoice checkpoint answers by default ({"alloy": "ryan"}; see
    `hearth.voices.openai_names`). lexicon: a pronunciation lexicon (a TOML file, or a `Lexicon`) every
    request's text front end uses (`hearth.text.normalize.lexicon`).
    """
    try:
        given = export_options(model, {"backend": backend, "dtype": dtype, "fast": fast or None, "small": small or None,
                                       **backend_options})
        options = settings.backend_options(**given)
    except ValueError as e:
        raise InputError(str(e)) from e
    t0 = time.perf_counter()
    try:
        lexicon = Lexicon.given(lexicon)
    except ValueError as e:
        raise InputError(str(e), "lexicon") from None
    engine = Engine(open_checkpoint(model, progress=progress), options, voice_aliases=voice_aliases, lexicon=lexicon)
    log.info("loaded %s (%s) in %.1f s", engine.checkpoint.path, options.backend, time.perf_counter() - t0)
    return engine
