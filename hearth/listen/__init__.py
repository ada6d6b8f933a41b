"""Hearing: speech to text with Qwen3-ASR, and word timestamps with Qwen3-ForcedAligner, equal to
the official qwen-asr package (docs/listen.md).

    from hearth.listen import Listener, ListenOptions
    listener = Listener.load("Qwen/Qwen3-ASR-0.6B", aligner="Qwen/Qwen3-ForcedAligner-0.6B")
    t = listener.transcribe(samples_16k, ListenOptions(language="English", timestamps=True))
    t.language, t.text, t.units

The run-time side, numpy only: recordings decoded, mixed down and resampled to 16 kHz
(`audio_in`, `resample`), the audio checks and cuts (`audio`), the log-mel front end
(`features`), the prompts (`prompt`), greedy decoding over a backend's session (`decoding`), the
output's parsing (`transcript`), the aligner's units and times (`units`, `timestamps`). The
networks run behind `hearth.backends.asr_interfaces`; the checkpoint's configs are
`hearth.checkpoint.asr_config`'s.
"""

from __future__ import annotations

from hearth.listen.aligner import MAX_ALIGN_SECONDS, Aligner
from hearth.listen.audio import SAMPLE_RATE, AudioPiece, prepare_audio, split_long_audio
from hearth.listen.audio_in import Recording, decode_audio, listening_audio
from hearth.listen.features import LogMel
from hearth.listen.languages import LANGUAGES, canonical_language
from hearth.listen.listener import MAX_PIECE_SECONDS, Listener, ListenOptions, Transcript, TranscriptPiece
from hearth.listen.live import LiveEvent, LiveOptions, LiveTranscription
from hearth.listen.resample import Resampler, resample
from hearth.listen.timestamps import TimedUnit

__all__ = [
    "LANGUAGES",
    "MAX_ALIGN_SECONDS",
    "MAX_PIECE_SECONDS",
    "SAMPLE_RATE",
    "Aligner",
    "AudioPiece",
    "ListenOptions",
    "Listener",
    "LiveEvent",
    "LiveOptions",
    "LiveTranscription",
    "LogMel",
    "Recording",
    "Resampler",
    "TimedUnit",
    "Transcript",
    "TranscriptPiece",
    "canonical_language",
    "decode_audio",
    "listening_audio",
    "prepare_audio",
    "resample",
    "split_long_audio",
]
