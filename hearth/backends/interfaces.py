"""The interfaces the engine sees: a language model (prompt embeddings, per-utterance sessions and
batches of them) and a vocoder (per-stream state, decode steps). See hearth/backends/__init__.py
for the concurrency contract."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from hearth.checkpoint.sampling import SamplingOptions

__all__ = ["Draws", "LMBatch", "LMSession", "LanguageModel", "SequentialBatch", "Vocoder"]


class Draws(Protocol):
    """A session's sampler (`hearth.checkpoint.sampling.Sampler`; the torch reference's `TorchSampler`)."""

    def first(self, logits: np.ndarray, history: list[int]) -> int:
        """Codebook 0 of the next frame from the talker's fp32 logits [1, vocab]."""
        ...


class LMSession(Protocol):
    """One utterance's language-model state (KV caches, the last hidden state) and its draws
    (`sampler.first(logits, history)` picks codebook 0; the session draws the other codebooks)."""

    @property
    def sampler(self) -> Draws: ...

    def prefill(self, embeds: np.ndarray) -> np.ndarray:
        """The prompt [1, L, hidden] -> fp32 codebook-0 logits of its last position [1, vocab]."""
        ...

    def step(self, embeds: np.ndarray) -> np.ndarray:
        """The next talker input [1, 1, hidden] -> fp32 codebook-0 logits [1, vocab]."""
        ...

    def predict(self, cb0: int) -> tuple[list[int], np.ndarray]:
        """Codebooks 1..G-1 of the current frame, and the summed embedding of all G codes [1, 1, hidden]."""
        ...

    def close(self) -> None:
        """Release what the session holds (idempotent)."""
        ...


class LMBatch(Protocol):
    """Utterances stepped together: per frame, one talker call and one predictor call for all the
    rows given (each row keeps its own caches, position and sampling generator), so the weights are
    read once for all of them. Rows come from `open` and are closed by their owner. Used from one
    thread at a time (the batcher's).

    Each call returns one item per row: its result, or the exception its row raised (a row's
    failure is its own where the backend can tell; a failed runtime call fails every row in it).
    """

    max_rows: int
    shared_calls: bool  # one runtime call computes every row given (its failure fails them all)

    def open(self, options: SamplingOptions, seed: int | None, prompt_length: int,
             prefix: int = 0) -> LMSession:
        """A new row (its `close()` gives its caches back). `prefix`: how many leading positions of
        its prompt depend on nothing but the voice, language and instruction (a backend may keep
        their keys and values and reuse them for the next prompt that starts the same way)."""
        ...

    def talker(self, rows: list[LMSession], embeds: list[np.ndarray], prefill: list[bool]
               ) -> list[np.ndarray | BaseException]:
        """Each row's next talker input ([1, n, hidden]: its prompt when `prefill`, else one step)
        -> its fp32 codebook-0 logits [1, vocab]."""
        ...

    def predict(self, rows: list[LMSession], cb0: list[int]) -> list[tuple[list[int], np.ndarray] | BaseException]:
        """Codebooks 1..G-1 of each row's current frame and its summed embedding, as `LMSession.predict`."""
        ...

    def close(self) -> None: ...


class SequentialBatch:
    """Rows computed one after another, each by its own session: exactly what each would compute
    alone (batch-invariant by construction), but the weights are read once per row. The torch
    reference's batch: matrix products of several rows round differently from one row's (measured:
    no row of a batched product equals its single-row product here), so exact equality with the
    official package rules out sharing the weight reads."""

    shared_calls = False

    def __init__(self, lm: LanguageModel, max_rows: int):
        self.lm = lm
        self.max_rows = max_rows

    def open(self, options: SamplingOptions, seed: int | None, prompt_length: int,
             prefix: int = 0) -> LMSession:
        return self.lm.session(options, seed, prompt_length, prefix)

    def talker(self, rows: list[LMSession], embeds: list[np.ndarray], prefill: list[bool]
               ) -> list[np.ndarray | BaseException]:
        out: list[np.ndarray | BaseException] = []
        for row, x, first in zip(rows, embeds, prefill, strict=True):
            try:
                out.append(row.prefill(x) if first else row.step(x))
            except Exception as e:  # noqa: BLE001 - this row's failure, reported to its owner
                out.append(e)
        return out

    def predict(self, rows: list[LMSession], cb0: list[int]) -> list[tuple[list[int], np.ndarray] | BaseException]:
        out: list[tuple[list[int], np.ndarray] | BaseException] = []
        for row, code in zip(rows, cb0, strict=True):
            try:
                out.append(row.predict(code))
            except Exception as e:  # noqa: BLE001 - as above
                out.append(e)
        return out

    def close(self) -> None:
        pass


class LanguageModel(Protocol):
    """The talker and its code predictor: prompt embeddings, sessions, and batches of sessions."""

    def embed_text(self, ids: list[int]) -> np.ndarray: ...

    def embed_codec(self, ids: list[int]) -> np.ndarray: ...

    @property
    def trailing_block(self) -> int | None:
        """Rows of the text that trails the prefill are projected this many at a time, each row's
        value independent of the call's other rows (None: as `embed_text`, in one call)."""
        ...

    def embed_trailing(self, ids: list[int]) -> np.ndarray: ...

    def embed_frames(self, codes: np.ndarray) -> np.ndarray:
        """Whole frames [frames, groups] -> their summed code embeddings [1, frames, hidden]."""
        ...

    def session(self, options: SamplingOptions, seed: int | None, prompt_length: int,
                prefix: int = 0) -> LMSession:
        """One utterance's session (`prefix`: as for `LMBatch.open`)."""
        ...

    def batch(self, max_rows: int) -> LMBatch: ...

    def warm_up(self) -> None: ...

    def weights_mb(self) -> dict[str, dict[str, float]]: ...


class Vocoder(Protocol):
    """Codes to audio, carrying a per-stream state: `decode(codes, state)` appends k frames' audio."""

    first_chunk_frames: int  # the best first chunk for this vocoder (see `Backend.first_chunk_frames`)

    def start(self) -> Any:
        """The state of a new audio stream."""
        ...

    def fork(self, state: Any) -> Any:  # noqa: ANN401 - the backend's own state
        """A copy of `state` that goes on independently (decoding one never changes the other)."""
        ...

    def decode(self, codes: np.ndarray, state: Any) -> np.ndarray:
        """[k, 16] codes -> float samples [k * samples_per_frame], advancing `state`."""
        ...

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        """Whole-sequence decode: the same as `decode` on a fresh state."""
        ...

    def warm_up(self) -> None: ...

    def weights_mb(self) -> dict[str, dict[str, float]]: ...
