"""Qwen3-ASR: a recording in, its language and text out (and, with a Qwen3-ForcedAligner, when each
word is said), as qwen-asr's `Qwen3ASRModel.transcribe` gives them.

A recording longer than 20 minutes (3 with timestamps) is cut at its quietest places into pieces
(`hearth.listen.audio.split_long_audio`); each piece is transcribed on its own, and the pieces'
texts are joined and their languages merged. `pieces` yields them one by one, as they are done;
`tokens` yields one piece's tokens as they are chosen: what streaming surfaces build on.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from hearth.backends.asr_factory import create_asr_model
from hearth.backends.asr_interfaces import AsrModel
from hearth.checkpoint.asr_loading import AsrCheckpoint, open_asr_checkpoint
from hearth.convert import CONVERT_ON_FIRST_USE
from hearth.errors import InputError
from hearth.listen.aligner import MAX_ALIGN_SECONDS, Aligner
from hearth.listen.audio import SAMPLE_RATE, AudioPiece, prepare_audio, split_long_audio
from hearth.listen.audio_in import listening_audio
from hearth.listen.decoding import greedy_tokens
from hearth.listen.features import LogMel
from hearth.listen.languages import LANGUAGES, canonical_language
from hearth.listen.live import LiveOptions, LiveTranscription
from hearth.listen.options import ListenOptions
from hearth.listen.prompt import asr_prompt
from hearth.listen.reuse import SegmentWork
from hearth.listen.timestamps import TimedUnit
from hearth.listen.transcript import merge_languages, parse_transcript
from hearth.listen.units import split_units

__all__ = ["MAX_PIECE_SECONDS", "ListenOptions", "Listener", "Transcript", "TranscriptPiece"]

MAX_PIECE_SECONDS = 1200.0  # qwen-asr transcribes at most 20 minutes at once


@dataclass(frozen=True)
class TranscriptPiece:
    """One piece of a recording, transcribed."""

    offset: float  # seconds from the recording's start
    duration: float  # seconds (a piece padded to 0.5 s counts its padding)
    language: str  # as the model named it ("" when it named none, or heard silence)
    text: str
    raw: str  # the decoded output before parsing (special tokens left out)
    token_ids: tuple[int, ...]  # as generated, a final stop token included
    units: tuple[TimedUnit, ...] | None = None  # with timestamps: times from the recording's start


@dataclass(frozen=True)
class Transcript:
    language: str  # the pieces' languages merged: "English", "Chinese,English", or ""
    text: str
    pieces: tuple[TranscriptPiece, ...]

    @classmethod
    def joined(cls, pieces: list[TranscriptPiece] | tuple[TranscriptPiece, ...]) -> Transcript:
        """The recording's transcript from its pieces: texts joined, languages merged."""
        return cls(merge_languages([p.language for p in pieces]), "".join(p.text for p in pieces), tuple(pieces))

    @property
    def units(self) -> tuple[TimedUnit, ...] | None:
        """Every piece's timed units, in order (None without timestamps)."""
        if not self.pieces or self.pieces[0].units is None:
            return None
        return tuple(u for p in self.pieces for u in p.units or ())


class Listener:
    """A loaded Qwen3-ASR (and optionally a Qwen3-ForcedAligner for timestamps). Its methods are
    safe to call from several threads at once (each call decodes in its own session)."""

    def __init__(self, checkpoint: AsrCheckpoint, model: AsrModel, aligner: Aligner | None = None):
        if checkpoint.config.aligner is not None:
            raise InputError(f"{checkpoint.path} is a Qwen3-ForcedAligner; transcribing needs a Qwen3-ASR "
                             "checkpoint (e.g. Qwen/Qwen3-ASR-0.6B)", "model")
        self.checkpoint = checkpoint
        self.model = model
        self.aligner = aligner
        self.tokenizer, self.special = checkpoint.tokenizer()
        self.features = LogMel(checkpoint.features)
        # transformers' generate for qwen-asr stops at <|im_end|> or <|endoftext|>.
        self.stop_ids = frozenset({self.special.im_end, self.special.end_of_text})

    @classmethod
    def load(cls, model: str | os.PathLike[str], backend: str | None = None, dtype: str = "float32",
             aligner: str | os.PathLike[str] | Aligner | None = None, weights: str | None = None,
             threads: int | None = None) -> Listener:
        """A Qwen3-ASR checkpoint directory or hub id, with an aligner (a checkpoint, loaded the same
        way, or a loaded `Aligner`) if timestamps are wanted. `backend`: "openvino", "onnxruntime"
        or "torch" (None: this machine's default, as for speech: `hearth.backends.asr_factory`);
        `weights` for the compiled ones ("int8", the default, or "fp32"); `dtype` for torch
        ("float32", equal to qwen-asr, or "bfloat16"); `threads` (None: the runtime's choice). A
        compiled backend converts the checkpoint on first use (with torch) and reads the cache after."""
        ckpt = open_asr_checkpoint(model, expect="asr")
        if aligner is not None and not isinstance(aligner, Aligner):
            aligner = Aligner.load(aligner, backend, dtype, weights, threads)
        network = create_asr_model(ckpt, backend, dtype, weights, threads, CONVERT_ON_FIRST_USE)
        return cls(ckpt, network, aligner)  # type: ignore[arg-type]

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages a request may force: the checkpoint's list, else the release's 30."""
        return self.checkpoint.config.support_languages or LANGUAGES

    def check_options(self, options: ListenOptions | None = None) -> ListenOptions:
        """`options` checked once at the door: the language in its canonical spelling."""
        o = options or ListenOptions()
        if not isinstance(o.context, str):
            raise InputError("context must be a string", "context")
        if not isinstance(o.max_new_tokens, int) or isinstance(o.max_new_tokens, bool) or o.max_new_tokens < 1:
            raise InputError(f"max_new_tokens must be a whole number of at least 1, got {o.max_new_tokens!r}",
                             "max_new_tokens")
        if o.timestamps and self.aligner is None:
            raise InputError("timestamps need a Qwen3-ForcedAligner: load the Listener with aligner=... "
                             "(e.g. Qwen/Qwen3-ForcedAligner-0.6B)", "timestamps")
        return replace(o, language=canonical_language(o.language, self.languages))

    def tokens(self, samples: np.ndarray, options: ListenOptions, prefix: str = "",
               work: SegmentWork | None = None) -> Iterator[int]:
        """The tokens generated for one piece (`samples` through `prepare_audio`, `options` through
        `check_options`), as they are chosen; after `prefix`, the answer's start forced (live
        transcription, `hearth.listen.live`, which keeps a segment's `work` between its updates)."""
        features = self.features(samples)
        embeddings = work.encoder(features) if work is not None else self.model.encode_audio(features)
        if embeddings.shape[0] != self.checkpoint.config.encoder.tokens_for(features.shape[1]):
            raise RuntimeError(f"the backend encoded {features.shape[1]} frames into {embeddings.shape[0]} embeddings")
        prompt = asr_prompt(self.tokenizer, self.special, embeddings.shape[0], options.context, options.language,
                            prefix)
        return greedy_tokens(self.model, prompt, embeddings, self.stop_ids, options.max_new_tokens,
                             work.decoder if work is not None else None)

    def segment_work(self) -> SegmentWork:
        """What a live segment keeps between updates (`hearth.listen.reuse`)."""
        return SegmentWork(self.model, self.checkpoint.config.encoder)

    def _piece(self, piece: AudioPiece, options: ListenOptions) -> TranscriptPiece:
        ids = tuple(self.tokens(piece.samples, options))
        raw = self.tokenizer.decode(list(ids), skip_special=True)
        language, text = parse_transcript(raw, options.language)
        units = None
        if options.timestamps:
            assert self.aligner is not None  # check_options made sure
            timed = self.aligner.align_units(piece.samples, split_units(text, language)) if text.strip() else ()
            units = tuple(TimedUnit(u.text, round(u.start + piece.offset, 3), round(u.end + piece.offset, 3))
                          for u in timed)
        return TranscriptPiece(piece.offset, piece.samples.shape[0] / SAMPLE_RATE, language, text, raw, ids, units)

    def pieces(self, audio: np.ndarray, options: ListenOptions | None = None,
               sample_rate: int = SAMPLE_RATE) -> Iterator[TranscriptPiece]:
        """The recording's pieces transcribed, in order, each as soon as it is done (the audio and
        the options are checked now, before the first)."""
        o = self.check_options(options)
        samples = prepare_audio(listening_audio(audio, sample_rate), SAMPLE_RATE, self.features.min_samples)
        limit = MAX_ALIGN_SECONDS if o.timestamps else MAX_PIECE_SECONDS
        return (self._piece(piece, o) for piece in split_long_audio(samples, limit))

    def live(self, options: ListenOptions | None = None, live: LiveOptions | None = None,
             sample_rate: int = SAMPLE_RATE) -> LiveTranscription:
        """A live transcription (`hearth.listen.live`): push audio at `sample_rate` as it is captured,
        read partial and final text as it follows (and, with `live.vad`, where speech starts and
        stops). Timestamps are not given live."""
        o = self.check_options(options)
        if o.timestamps:
            raise InputError("live transcription gives no timestamps: transcribe the recording for them",
                             "timestamps")
        live = (live or LiveOptions()).checked()
        detector = None
        if live.vad:
            from hearth.listen.vad import SileroVad

            detector = SileroVad.load()
        return LiveTranscription(self, o, live, sample_rate, detector)

    def transcribe(self, audio: np.ndarray, options: ListenOptions | None = None,
                   sample_rate: int = SAMPLE_RATE) -> Transcript:
        """The whole recording (float samples at `sample_rate`, mono or [samples, channels]: mixed
        down and resampled to 16 kHz): language, text and pieces."""
        return Transcript.joined(tuple(self.pieces(audio, options, sample_rate)))
