"""Qwen3-ForcedAligner: when each word (or CJK character) of a known transcript is said."""

from __future__ import annotations

import os

import numpy as np

from hearth.backends.asr_factory import create_asr_model
from hearth.backends.asr_interfaces import AlignerModel
from hearth.checkpoint.asr_loading import AsrCheckpoint, open_asr_checkpoint
from hearth.convert import CONVERT_ON_FIRST_USE
from hearth.errors import InputError
from hearth.listen.audio import SAMPLE_RATE, prepare_audio
from hearth.listen.audio_in import listening_audio
from hearth.listen.features import LogMel
from hearth.listen.languages import LANGUAGES, canonical_language
from hearth.listen.prompt import aligner_prompt
from hearth.listen.timestamps import TimedUnit, class_times, timed_units
from hearth.listen.units import split_units

__all__ = ["MAX_ALIGN_SECONDS", "Aligner"]

MAX_ALIGN_SECONDS = 180.0  # qwen-asr's limit for one alignment (longer audio is cut before aligning)


class Aligner:
    """A loaded Qwen3-ForcedAligner. `align` is safe to call from several threads at once."""

    def __init__(self, checkpoint: AsrCheckpoint, model: AlignerModel):
        if checkpoint.config.aligner is None:
            raise InputError(f"{checkpoint.path} is a {checkpoint.kind} checkpoint, not a Qwen3-ForcedAligner "
                             "(e.g. Qwen/Qwen3-ForcedAligner-0.6B)", "aligner")
        self.checkpoint = checkpoint
        self.settings = checkpoint.config.aligner
        self.model = model
        self.tokenizer, self.special = checkpoint.tokenizer()
        self.features = LogMel(checkpoint.features)

    @classmethod
    def load(cls, model: str | os.PathLike[str], backend: str | None = None, dtype: str = "float32",
             weights: str | None = None, threads: int | None = None) -> Aligner:
        """A checkpoint directory or hub id of Qwen3-ForcedAligner; the other arguments as
        `Listener.load`'s."""
        ckpt = open_asr_checkpoint(model, expect="aligner")
        network = create_asr_model(ckpt, backend, dtype, weights, threads, CONVERT_ON_FIRST_USE)
        return cls(ckpt, network)  # type: ignore[arg-type]

    def units(self, text: str, language: str | None) -> list[str]:
        """The units `align` times: `text` cut by the rule of `language`."""
        return split_units(text, canonical_language(language, LANGUAGES))

    def align(self, audio: np.ndarray, text: str, language: str | None,
              sample_rate: int = SAMPLE_RATE) -> tuple[TimedUnit, ...]:
        """The units of `text` with their start and end in `audio` (at most 180 s; at `sample_rate`,
        mono or [samples, channels], mixed down and resampled to 16 kHz).
        `language` picks how the text is cut into units (Japanese and Korean have their own rules;
        None cuts at spaces and CJK characters)."""
        if not isinstance(text, str):
            raise InputError("text must be a string", "text")
        samples = prepare_audio(listening_audio(audio, sample_rate), SAMPLE_RATE, self.features.min_samples)
        if samples.shape[0] > MAX_ALIGN_SECONDS * SAMPLE_RATE:
            raise InputError(f"audio of {samples.shape[0] / SAMPLE_RATE:.1f} s: align at most {MAX_ALIGN_SECONDS:.0f} "
                             "s at once (cut it, or transcribe it with timestamps, which cuts it)", "audio")
        return self.align_units(samples, self.units(text, language))

    def align_units(self, samples: np.ndarray, units: list[str]) -> tuple[TimedUnit, ...]:
        """`units` timed in `samples` (already through `prepare_audio`)."""
        if not units:
            return ()
        features = self.features(samples)
        embeddings = self.model.encode_audio(features)
        if embeddings.shape[0] != self.checkpoint.config.encoder.tokens_for(features.shape[1]):
            raise RuntimeError(f"the backend encoded {features.shape[1]} frames into {embeddings.shape[0]} embeddings")
        prompt, positions = aligner_prompt(self.tokenizer, self.special, embeddings.shape[0], units)
        scores = self.model.timestamp_logits(prompt.ids, embeddings, prompt.audio_at, positions)
        return timed_units(units, class_times(scores.argmax(axis=1), self.settings.segment_ms))
