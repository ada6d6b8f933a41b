"""What a backend provides to hear: the interfaces `hearth.listen` drives Qwen3-ASR and
Qwen3-ForcedAligner through, numpy in and out, so a runtime (the torch reference, `asr_torch`; the
OpenVINO and ONNX Runtime graphs, `asr_openvino` and `asr_ort`) is a module implementing them and
nothing else.

Shapes: features [mel, frames] float32 (hearth.listen.features); audio embeddings [tokens, hidden]
float32, one per `<|audio_pad|>` of the prompt; token ids int64; logits float32.

Concurrency, as the speaking side's (hearth/backends/__init__.py): sessions are independent, any
number may be open on any threads, one session is used from one thread at a time.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

__all__ = ["AlignerModel", "AsrModel", "AsrSession", "AudioEncoding"]


class AudioEncoding(Protocol):
    def encode_audio(self, features: np.ndarray) -> np.ndarray:
        """Log-mel features [mel, frames] of one audio -> its embeddings [tokens, hidden], tokens being
        `hearth.listen.prompt.audio_token_count(frames)`: `audio_windows(audio_steps(features))`."""
        ...

    def audio_steps(self, features: np.ndarray, longest: int | None = None) -> np.ndarray:
        """The convolutions: features [mel, frames] -> steps [tokens, d_model], each chunk's own,
        positioned. Chunks are zero-padded to `longest` frames (by default the longest of them), as
        the reference pads a recording's chunks to its longest."""
        ...

    def audio_windows(self, steps: np.ndarray, frames: int) -> np.ndarray:
        """The transformer over the steps of `frames` mel frames, each window attending to itself ->
        embeddings [tokens, hidden]."""
        ...


class AsrSession(Protocol):
    """One transcription's decoder state (its KV cache and position)."""

    position: int  # positions held

    def prefill(self, ids: np.ndarray, audio: np.ndarray, audio_at: int) -> np.ndarray:
        """The ids [n] of the next n positions (the prompt, or what follows the positions kept by
        `rewind`), the rows audio_at .. audio_at + len(audio) taken by `audio` [tokens, hidden] ->
        float32 logits of the last position [vocab]."""
        ...

    def step(self, token: int) -> np.ndarray:
        """The token chosen last -> float32 logits of the next position [vocab]."""
        ...

    def rewind(self, position: int) -> None:
        """Forget the positions from `position` on (at most `self.position`): the next prefill or
        step goes there, and the positions before it are kept as they are."""
        ...

    def close(self) -> None:
        """Release what the session holds (idempotent)."""
        ...


class AsrModel(AudioEncoding, Protocol):
    """Qwen3-ASR: the audio encoder, and decoder sessions that step one token at a time."""

    def session(self, capacity: int) -> AsrSession:
        """A fresh session for up to `capacity` positions (prompt and generated tokens)."""
        ...

    def warm_up(self) -> None:
        """Run every network once (first-call costs paid before the first request)."""
        ...


class AlignerModel(AudioEncoding, Protocol):
    """Qwen3-ForcedAligner: the audio encoder, and one decoder pass whose head scores timestamp classes."""

    def timestamp_logits(self, ids: np.ndarray, audio: np.ndarray, audio_at: int,
                         positions: np.ndarray) -> np.ndarray:
        """The prompt (as `AsrSession.prefill` takes it) -> float32 class scores [len(positions),
        classes] at those prompt positions (the `<timestamp>` tokens)."""
        ...

    def warm_up(self) -> None:
        ...
