"""The public engine: load a checkpoint once, then turn text into codes and audio.

    import hearth
    engine = hearth.load("Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice")
    audio = engine.synthesize("Hello there.", voice="ryan", language="english", seed=7)
    audio.samples  # float32 numpy array at audio.sample_rate (24 kHz)
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from .backends import BackendOptions, Vocoder
from .checkpoint import DEFAULT_MODEL, Checkpoint, load_codec, load_talker, open_checkpoint
from .config import ModelConfig
from .generate import (
    DEFAULT_BUDGET,
    FrameBudget,
    FrameGenerator,
    GenerationStats,
    LanguageModel,
    SamplingOptions,
    TorchLanguageModel,
    embed_prompt,
)
from .model.talker import Talker
from .stream import AudioChunk, AudioStream, ChunkPlan, Workers
from .text import Prompt, build_prompt

__all__ = [
    "MAX_TEXT_TOKENS", "Audio", "AudioChunk", "AudioStream", "ChunkPlan", "Codes", "Engine", "InputError", "load"
]

log = logging.getLogger(__name__)

# Prefill plus generated frames must stay inside the talker's 32768 positions; longer texts belong
# to the sentence splitter of the resident service, not to one prompt.
MAX_TEXT_TOKENS = 4096

TextMode = Literal["whole", "stream"]
_DTYPES = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}


class InputError(ValueError):
    """A request the engine cannot serve as given; the message says what to change."""


@dataclass(frozen=True)
class Codes:
    codes: torch.Tensor  # [frames, 16] int64
    seed: int | None  # None for greedy decoding
    stats: GenerationStats


@dataclass(frozen=True)
class Audio:
    samples: np.ndarray  # float32 mono in [-1, 1]
    sample_rate: int
    codes: Codes

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate


class Engine:
    """A loaded checkpoint. Thread-compatible, not thread-safe: one request at a time."""

    def __init__(
        self, checkpoint: Checkpoint, dtype: torch.dtype = torch.float32, options: BackendOptions | None = None
    ):
        options = options or BackendOptions()
        try:
            options.validate()
        except ValueError as e:
            raise InputError(str(e)) from e
        self.checkpoint = checkpoint
        self.config: ModelConfig = checkpoint.config
        self.tokenizer = checkpoint.tokenizer()
        self.options = options
        self.talker: Talker | None = None
        self.lm: LanguageModel
        if options.backend == "torch":
            if options.threads:
                torch.set_num_threads(options.threads)
            self.talker = load_talker(checkpoint, dtype)
            self.lm = TorchLanguageModel(self.talker)
        else:
            from .backends.openvino import OpenVINOLanguageModel

            self.lm = OpenVINOLanguageModel(
                checkpoint, options.weights, options.device, options.threads, core_type=options.lm_core_type
            )
        self.codec: Vocoder
        if options.vocoder_precision == "torch":
            self.codec = load_codec(checkpoint, torch.float32)
        else:
            from .backends.openvino import OpenVINOVocoder

            self.codec = OpenVINOVocoder(
                checkpoint, options.vocoder_precision, options.vocoder_device, options.vocoder_threads,
                core_type=options.vocoder_core_type,
            )
        self.workers = Workers()
        self.sample_rate = checkpoint.codec.sample_rate
        self.samples_per_frame = checkpoint.codec.upsample
        self.overlap = options.overlap if options.overlap is not None else self._vocoder_has_own_cores()
        if options.backend == "openvino" or options.vocoder_precision != "torch":
            self._warm_up_openvino()

    @property
    def default_first_chunk(self) -> int:
        """Frames in the first chunk unless a request says otherwise: 2 with a vocoder whose cost
        grows with the frames; 1 with the OpenVINO vocoder, whose calls cost the same for any
        number of frames up to its fixed size, so the first call should wait for the fewest."""
        return 1 if getattr(self.codec, "frames", None) else 2

    def _vocoder_has_own_cores(self) -> bool:
        """With OpenVINO on CPU, where the vocoder shares the language model's cores (the plan of
        `hearth.topology`), the two take turns: run at once, each slows the other by about what the
        overlap gains (2 vCPUs, three pairs of 5-run benches: real-time factor 1.21-1.27 taking
        turns, 1.25-1.28 overlapped), and taking turns costs less CPU."""
        options = self.options
        if options.backend == "torch" or options.vocoder_device != "CPU" or options.device != "CPU":
            return True
        from .topology import detect, plan

        p = plan(detect())
        return set(p.vocoder_cpus).isdisjoint(p.lm_cpus)

    def _warm_up_openvino(self) -> None:
        """One tiny request, so the runtime lays out its weights now (not in the first request), then
        the mapped cache files are released (see `release_mapped_files`)."""
        from .backends.openvino import release_mapped_files, trim_heap

        t0 = time.perf_counter()
        options = self.sampling(greedy=True, max_new_tokens=3)
        list(self.stream("Hi.", self.voices[0], "auto", options=options, budget=None,
                         chunk_frames=1, first_chunk_frames=1))
        dirs = [c.directory for c in (getattr(self.lm, "converted", None), getattr(self.codec, "converted", None)) if c]
        released = release_mapped_files(dirs)
        trim_heap()
        log.debug("OpenVINO warm-up %.2f s; released %.0f MB of mapped cache files",
                  time.perf_counter() - t0, released / 1e6)

    @property
    def voices(self) -> list[str]:
        return self.config.voices

    @property
    def languages(self) -> list[str]:
        return self.config.languages

    def check_voice(self, voice: str) -> str:
        v = voice.strip().lower()
        if v not in self.config.talker.speaker_ids:
            raise InputError(f"unknown voice {voice!r}; choose one of: {', '.join(self.voices)}")
        return v

    def check_language(self, language: str) -> str:
        lang = language.strip().lower()
        if lang not in self.languages:
            raise InputError(f"unknown language {language!r}; choose one of: {', '.join(self.languages)}")
        return lang

    def prompt(self, text: str, instruct: str | None = None) -> Prompt:
        if not isinstance(text, str) or not text.strip():
            raise InputError("the text is empty; give some words to speak")
        if instruct and not self.config.honours_instruct:
            log.warning("instruct is ignored: the %s model does not support it (1.7B does)", self.config.model_size)
            instruct = None
        if len(text) > 8 * MAX_TEXT_TOKENS:  # cheap bound before tokenizing megabytes
            raise InputError(
                f"the text is {len(text)} characters, too long for one prompt (limit {MAX_TEXT_TOKENS} tokens); "
                "split it into sentences or paragraphs"
            )
        p = build_prompt(self.tokenizer, text, instruct)
        if len(p.text) > MAX_TEXT_TOKENS:
            raise InputError(
                f"the text is {len(p.text)} tokens, more than one prompt takes ({MAX_TEXT_TOKENS}); "
                "split it into sentences or paragraphs"
            )
        return p

    def sampling(self, greedy: bool = False, **overrides: object) -> SamplingOptions:
        opts = SamplingOptions.from_defaults(self.checkpoint.generation, **overrides)
        return opts.greedy() if greedy else opts

    def frames(
        self,
        text: str,
        voice: str,
        language: str = "auto",
        *,
        instruct: str | None = None,
        text_mode: TextMode = "whole",
        options: SamplingOptions | None = None,
        rng: torch.Generator | None = None,
        budget: FrameBudget | None = DEFAULT_BUDGET,
    ) -> FrameGenerator:
        """A lazy iterator of frames ([16] int64 each); generation runs as it is consumed."""
        voice = self.check_voice(voice)
        language = self.check_language(language)
        if text_mode not in ("whole", "stream"):
            raise InputError(f"text mode must be 'whole' or 'stream', got {text_mode!r}")
        options = options or self.sampling()
        try:
            options.validate()
        except ValueError as e:
            raise InputError(str(e)) from e
        prompt = self.prompt(text, instruct)
        with torch.inference_mode():
            embeds = embed_prompt(self.lm, self.config, prompt, voice, language, text_mode)
        return FrameGenerator(self.lm, self.config, embeds, options, rng, budget)

    def _sampling_rng(self, options: SamplingOptions, seed: int | None) -> tuple[torch.Generator | None, int | None]:
        if not (options.do_sample or options.sub_do_sample):
            return None, None
        seed = secrets.randbits(63) if seed is None else seed
        return torch.Generator().manual_seed(seed), seed

    def stream(
        self,
        text: str,
        voice: str,
        language: str = "auto",
        *,
        instruct: str | None = None,
        text_mode: TextMode = "whole",
        seed: int | None = None,
        greedy: bool = False,
        max_new_tokens: int | None = None,
        options: SamplingOptions | None = None,
        budget: FrameBudget | None = DEFAULT_BUDGET,
        chunk_frames: int = 5,
        first_chunk_frames: int | None = None,
        max_ready: int = 4,
        paced: bool = False,
    ) -> AudioStream:
        """Audio chunks as they are made: generation and vocoding run in workers while you consume.

        The first chunk holds `first_chunk_frames` frames (80 ms each; default
        `default_first_chunk`), the others `chunk_frames`;
        at most `max_ready` decoded chunks wait for the consumer. `paced` sizes each later chunk
        (at most `chunk_frames`) so that it is ready before the audio already sent has played,
        for gapless real-time playback. Close the stream (or use it in a
        `with` block) to stop early; generation then stops within one frame.
        """
        try:
            first = self.default_first_chunk if first_chunk_frames is None else first_chunk_frames
            plan = ChunkPlan(chunk_frames, first, paced=paced, hold_all=not self.overlap)
        except ValueError as e:
            raise InputError(str(e)) from e
        if options is None:
            options = self.sampling(greedy=greedy, max_new_tokens=max_new_tokens)
        rng, seed = self._sampling_rng(options, seed)
        frames = self.frames(text, voice, language, instruct=instruct, text_mode=text_mode, options=options,
                             rng=rng, budget=budget)
        audio = AudioStream(frames, self.codec, self.sample_rate, plan, max_ready, workers=self.workers)
        audio.seed = seed
        return audio

    def generate_codes(
        self,
        text: str,
        voice: str,
        language: str = "auto",
        *,
        instruct: str | None = None,
        text_mode: TextMode = "whole",
        seed: int | None = None,
        greedy: bool = False,
        max_new_tokens: int | None = None,
        options: SamplingOptions | None = None,
        budget: FrameBudget | None = DEFAULT_BUDGET,
    ) -> Codes:
        """All frames of one text. Sampling draws from a generator seeded with `seed` (random if None)."""
        if options is None:
            options = self.sampling(greedy=greedy, max_new_tokens=max_new_tokens)
        rng, seed = self._sampling_rng(options, seed)
        gen = self.frames(text, voice, language, instruct=instruct, text_mode=text_mode, options=options,
                          rng=rng, budget=budget)
        frames = list(gen)
        codes = torch.stack(frames) if frames else torch.zeros(0, self.config.talker.num_code_groups, dtype=torch.long)
        return Codes(codes, seed, gen.stats)

    def decode(self, codes: torch.Tensor) -> np.ndarray:
        """Whole-sequence decode: [frames, 16] codes -> float32 samples (1920 per frame)."""
        if codes.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        with torch.inference_mode():
            return self.codec(codes).to(torch.float32).numpy()

    def synthesize(self, text: str, voice: str, language: str = "auto", **kwargs: object) -> Audio:
        """Text to audio in one call: the streaming path, collected. Keyword arguments as for `stream`."""
        chunks = []
        with self.stream(text, voice, language, **kwargs) as audio:  # type: ignore[arg-type]
            chunks = list(audio)
        groups = self.config.talker.num_code_groups
        codes = torch.cat([c.codes for c in chunks]) if chunks else torch.zeros(0, groups, dtype=torch.long)
        samples = np.concatenate([c.samples for c in chunks]) if chunks else np.zeros(0, dtype=np.float32)
        return Audio(samples, self.sample_rate, Codes(codes, audio.seed, audio.generation))


def load(
    model: str | os.PathLike[str] = DEFAULT_MODEL,
    dtype: str = "float32",
    progress: bool = True,
    *,
    backend: str = "torch",
    **backend_options: Any,
) -> Engine:
    """Load a checkpoint directory or hub id.

    backend "torch" (the reference; dtype "float32" or "bfloat16") or "openvino" (extra `fast`):
    further keywords as `BackendOptions` (weights "int8"/"fp16"/"fp32", device, threads, vocoder
    "bf16"/"fp16"/"fp32"/"torch", vocoder_device, vocoder_threads).
    """
    if dtype not in _DTYPES:
        raise InputError(f"dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
    try:
        options = BackendOptions(backend=backend, **backend_options)
    except TypeError as e:
        raise InputError(f"{e}; see hearth.BackendOptions") from e
    t0 = time.perf_counter()
    engine = Engine(open_checkpoint(model, progress=progress), _DTYPES[dtype], options)
    log.info("loaded %s in %.1f s", engine.checkpoint.path, time.perf_counter() - t0)
    return engine
