"""What the compiled backends' batches share: a row's sampling settings and draws, and the
predictor-loop call over several rows (grouped by top-k, a single number per call in both graphs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from hearth.checkpoint.config import TalkerConfig
from hearth.checkpoint.sampling import Sampler, SamplingOptions

__all__ = ["ROW_PAIR", "PooledBatch", "PooledLanguageModel", "PredictorRun", "SampledRow", "first_result",
           "own_rows", "padded_rows", "paired", "predict_rows"]

# The determinism rule of the compiled backends (docs/determinism.md): a row's numbers never depend
# on what else shares its runtime calls. The runtimes' matrix kernels take rows in pairs, and a row
# without a partner (a call of one row, or the last of an odd number: ONNX Runtime's 8-bit blocks of
# 128 on AVX-512) by a path of its own that sums in another order; a row in a pair gets the same
# result however many rows share the call and whatever they hold (OpenVINO's and ONNX Runtime's
# products on every x86 level from AVX2 to AMX: `make test-cpus`). So every single-token talker step
# and every predictor call carries an even number of rows (an odd count padded: a copy of a row,
# computed and dropped), and a prompt runs in a call of its own, as it does alone.
ROW_PAIR = 2


def paired(rows: int) -> int:
    """The rows a call computes for `rows` rows: an even number, at least two."""
    return max(ROW_PAIR, -(-rows // ROW_PAIR) * ROW_PAIR)

# (inputs by name) -> (codes [B, G-1] as lists, summed [B, 1, H])
PredictorRun = Callable[[dict[str, np.ndarray]], tuple[list[list[int]], np.ndarray]]


class SampledRow:
    """The code predictor's sampling for one row: settings, and its uniform draws per frame from
    the row's own sampler (so a seeded request is reproducible whatever it is batched with)."""

    def __init__(self, batch: Any, config: TalkerConfig, options: SamplingOptions,  # noqa: ANN401
                 seed: int | None):
        self.batch = batch  # the batch that opened the row (its `talker` and `predict` step it)
        self.sampler = Sampler(config, options, seed)
        self.hidden = np.zeros(0, np.float32)  # the talker's last hidden state [1, 1, H]
        self.closed = False
        self.sole = False  # the one row of a session's batch: closing it closes the batch
        vocab = config.predictor.vocab_size
        self.sample = options.sub_do_sample
        self.draw_count = config.num_code_groups - 1
        self.temperature = options.sub_temperature if self.sample else 1.0
        self.top_k = min(options.sub_top_k or vocab, vocab) if self.sample else 1
        self.top_p = options.sub_top_p if self.sample else 1.0

    def close(self) -> None:
        """No more frames: the row's place in its batch is free (and a session's batch goes back)."""
        if not self.closed:
            self.closed = True
            self._release()
            if self.sole:
                self.batch.close()

    def _release(self) -> None:
        raise NotImplementedError

    def draws(self) -> np.ndarray:
        return self.sampler.uniforms(self.draw_count)

    def check_open(self) -> None:
        if self.closed:
            raise RuntimeError("this language-model row is closed")

    # LMSession, one row at a time (the batcher calls the batch instead)
    def prefill(self, embeds: np.ndarray) -> np.ndarray:
        return first_result(self.batch.talker([self], [embeds], [True]))

    def step(self, embeds: np.ndarray) -> np.ndarray:
        return first_result(self.batch.talker([self], [embeds], [False]))

    def predict(self, cb0: int) -> tuple[list[int], np.ndarray]:
        return first_result(self.batch.predict([self], [cb0]))


class PooledBatch:
    """What a compiled backend's batch shares: taken from its model's pool (a one-row batch, for one
    utterance), closing it gives it back (`pool(batch)`), so utterances come and go without
    remaking buffers; a batch made for several rows is simply dropped."""

    pool: Callable[[Any], None] | None = None

    def close(self) -> None:
        give_back, self.pool = self.pool, None
        if give_back is not None:
            give_back(self)

    def idle(self) -> None:
        """Back in the pool: what a long utterance grew may go."""


def own_rows(batch: object, sessions: list[Any], kind: type) -> list[Any]:
    """`sessions` as rows of `batch` (a batch steps only the rows it opened)."""
    rows = [s for s in sessions if isinstance(s, kind) and getattr(s, "batch", None) is batch]
    if len(rows) != len(sessions):
        raise ValueError("a batch steps only the rows it opened")
    return rows


def padded_rows(inputs: dict[str, np.ndarray], rows: int) -> dict[str, np.ndarray]:
    """`inputs` (each [B, ...], or a scalar shared by every row) with copies of the last row appended
    up to `rows` rows."""
    return {name: np.concatenate([value, np.repeat(value[-1:], rows - len(value), axis=0)])
            if value.ndim and len(value) < rows else value for name, value in inputs.items()}


def first_result(results: list[Any]) -> Any:  # noqa: ANN401
    """A one-row call's result, or its exception raised."""
    if isinstance(results[0], BaseException):
        raise results[0]
    return results[0]


def predict_rows(rows: list[SampledRow], cb0: list[int], embed_codec: Callable[[list[int]], np.ndarray],
                 run: PredictorRun) -> list[tuple[list[int], np.ndarray] | BaseException]:
    """Codebooks 1..G-1 and the summed embedding for each row: one predictor call per top-k."""
    out: list[tuple[list[int], np.ndarray] | BaseException] = [RuntimeError("not computed")] * len(rows)
    by_top_k: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        by_top_k.setdefault(row.top_k, []).append(i)
    for top_k, members in by_top_k.items():
        group = [rows[i] for i in members]
        try:
            for row in group:
                row.check_open()
            codes, summed = run({
                "hidden": np.concatenate([r.hidden for r in group]),
                "first": embed_codec([cb0[i] for i in members]).reshape(len(group), 1, -1),
                "draws": np.concatenate([r.draws() for r in group]),
                "temperature": np.array([r.temperature for r in group], np.float32),
                "top_k": np.array(top_k, np.int64),
                "top_p": np.array([r.top_p for r in group], np.float32),
            })
        except Exception as e:  # noqa: BLE001 - one runtime call: every row in it failed
            for i in members:
                out[i] = e
            continue
        for k, i in enumerate(members):
            out[i] = (codes[k], summed[k : k + 1].copy())
    return out


class PooledLanguageModel:
    """What a compiled backend's language model shares: the prompt embeddings (its `embedder`), and
    one-row batches (a session's, the solo loop's) from a small pool of idle ones (`_new_batch`
    makes a batch; a batch given back is reused, after its `idle()`)."""

    MAX_IDLE = 2  # idle one-row batches kept for reuse; each holds its buffers (tens of MB at 0.6B)

    config: Any
    embedder: Any

    def __init__(self) -> None:
        self._idle: list[Any] = []
        self._pool_lock = threading.Lock()

    def _new_batch(self, max_rows: int) -> Any:  # noqa: ANN401
        raise NotImplementedError

    def embed_text(self, ids: list[int]) -> np.ndarray:
        return self.embedder.embed_text(ids)

    @property
    def trailing_block(self) -> int | None:
        return self.embedder.trailing_block

    def embed_trailing(self, ids: list[int]) -> np.ndarray:
        return self.embedder.embed_trailing(ids)

    def embed_codec(self, ids: list[int]) -> np.ndarray:
        return self.embedder.embed_codec(ids)

    def embed_frames(self, codes: np.ndarray) -> np.ndarray:
        return self.embedder.embed_frames(codes)

    def session(self, options: SamplingOptions, seed: int | None, prompt_length: int,
                prefix: int = 0) -> SampledRow:
        """One utterance: the row of a pooled one-row batch, which its `close` gives back."""
        row: SampledRow = self.batch(1).open(options, seed, prompt_length, prefix)
        row.sole = True
        return row

    def batch(self, max_rows: int) -> Any:  # noqa: ANN401
        """A batch of `max_rows`; one row: from the pool, to be closed (given back) after use."""
        if max_rows != 1:
            return self._new_batch(max_rows)
        with self._pool_lock:
            batch = self._idle.pop() if self._idle else None
        if batch is None:
            batch = self._new_batch(1)
        batch.pool = self._give_back
        return batch

    def _give_back(self, batch: Any) -> None:  # noqa: ANN401
        with self._pool_lock:
            if len(self._idle) < self.MAX_IDLE:
                batch.idle()
                self._idle.append(batch)

    def _warm(self, prompt_length: int) -> None:
        """A short utterance through a pooled session (the runtime's lazy set-up is paid here)."""
        s = self.session(SamplingOptions().greedy(), None, prompt_length)
        s.prefill(np.zeros((1, prompt_length, self.config.talker.stack.hidden_size), np.float32))
        _, summed = s.predict(0)
        s.step(summed)
        s.close()
