"""The model's time grid: one frame of codes is 80 ms of speech, 1920 samples at 24 kHz.

Every Qwen3-TTS-12Hz checkpoint has it (the speech tokenizer's `decode_upsample_rate` and
`output_sample_rate`); the engine reads the real numbers from the checkpoint where it has one, and
these where a figure is only reported (logs, metrics, rates)."""

from __future__ import annotations

__all__ = ["FRAME_S", "SAMPLES_PER_FRAME", "SAMPLE_RATE"]

SAMPLE_RATE = 24_000  # Hz
SAMPLES_PER_FRAME = 1920
FRAME_S = SAMPLES_PER_FRAME / SAMPLE_RATE  # 0.08 s of speech per frame
