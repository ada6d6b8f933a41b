"""OpenVINO's batched path: the talker steps of many utterances in one call over a paged KV cache,
and their predictor loops in one call.

The talker's batched form (`build_talker`) lays the tokens of every row end to end,
one token per graph row; OpenVINO's paged-attention transformation (the one its GenAI
continuous-batching pipeline applies) replaces the per-request KV state with cache tensors split
into fixed-size blocks, owned here: each row holds a list of blocks, and a call says, per row, how
many positions it has already and which blocks hold them. So rows of any length run together, a
new row's whole prompt can ride along with the others' single steps, and a finished row's blocks
go straight to the next. The predictor loop needs no cache across frames: its rows are simply
stacked (rows with different top-k go in separate calls, top-k being one number per call).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from hearth.backends.interfaces import LMSession
from hearth.backends.row_pairs import PooledBatch, SampledRow, own_rows, padded_rows, paired, predict_rows
from hearth.checkpoint.sampling import SamplingOptions

if TYPE_CHECKING:
    from hearth.backends.rotary import RotaryTable
    from hearth.checkpoint.config import ModelConfig


class PagedModel(Protocol):
    """What a `PagedBatch` uses of its language model (`openvino.OpenVINOLanguageModel`)."""

    config: ModelConfig
    rotary: RotaryTable
    rows: int  # the predictor's compiled batch
    talker: Any  # the compiled paged talker
    predictor: Any  # the compiled predictor loop

    def embed_codec(self, ids: list[int]) -> np.ndarray: ...

__all__ = ["PagedBatch", "PagedRow", "paged_talker_model"]

log = logging.getLogger(__name__)

START_BLOCKS_PER_ROW = 8  # the cache grows (doubling) when rows need more


def paged_talker_model(path: str) -> Any:  # noqa: ANN401 - the runtime's own type
    """The batched talker IR, read and transformed to paged attention."""
    import openvino as ov
    from openvino._offline_transformations import paged_attention_transformation

    model = ov.Core().read_model(path)
    paged_attention_transformation(model)
    return model


class PagedRow(SampledRow):
    """One utterance in a `PagedBatch`: its blocks, position, last hidden state and sampling."""

    def __init__(self, batch: PagedBatch, options: SamplingOptions, seed: int | None):
        super().__init__(batch, batch.lm.config.talker, options, seed)
        self.position = 0
        self.blocks: list[int] = []

    def _release(self) -> None:
        self.batch._free(self.blocks)
        self.blocks = []


class PagedBatch(PooledBatch):
    """`LMBatch` for OpenVINO: one infer request of the paged talker and one of the predictor loop."""

    shared_calls = True  # one call for every row: its failure fails them all

    def __init__(self, lm: PagedModel, max_rows: int):
        self.lm = lm
        self.max_rows = max_rows
        compiled = lm.talker
        self.request = compiled.create_infer_request()
        self.predictor = lm.predictor.create_infer_request()
        self._names = {i.get_any_name() for i in compiled.inputs}
        self._caches = [
            (i.get_any_name(), i.get_element_type(), [d.get_length() for d in list(i.get_partial_shape())[1:]])
            for i in compiled.inputs if i.get_any_name().startswith(("key_cache.", "value_cache."))
        ]
        # Blocks hold this many positions: the value cache's third dimension (the key cache's may
        # carry quantisation parameters in extra rows).
        self.block = next(shape[1] for name, _, shape in self._caches if name.startswith("value_cache."))
        self._lock = threading.Lock()
        self._capacity = 0
        self._free_blocks: list[int] = []
        self._grow(max_rows * START_BLOCKS_PER_ROW)
        self._scratch = self._free_blocks.pop()  # where a padding row's one key and value go

    def open(self, options: SamplingOptions, seed: int | None, prompt_length: int,
             prefix: int = 0) -> PagedRow:
        return PagedRow(self, options, seed)

    def idle(self) -> None:
        """(Pooled while idle: its blocks are kept for the next utterance.)"""

    # -- blocks ----------------------------------------------------------------------------------------

    @property
    def capacity(self) -> int:
        """Blocks the cache holds now (in use or free)."""
        return self._capacity

    def _grow(self, capacity: int) -> None:
        import openvino as ov

        old = self._capacity
        for name, kind, shape in self._caches:
            tensor = ov.Tensor(kind, [capacity, *shape])
            if old:
                tensor.data[:old] = self.request.get_tensor(name).data[:old]
            self.request.set_tensor(name, tensor)
        self._free_blocks.extend(range(old, capacity))
        self._capacity = capacity
        if old:
            log.debug("paged KV cache grown to %d blocks of %d positions", capacity, self.block)

    def _reserve(self, row: PagedRow, positions: int) -> None:
        need = -(-positions // self.block) - len(row.blocks)
        if need <= 0:
            return
        with self._lock:
            if len(self._free_blocks) < need:
                self._grow(max(2 * self._capacity, self._capacity + need))
            row.blocks.extend(self._free_blocks[:need])
            del self._free_blocks[:need]

    def _free(self, blocks: list[int]) -> None:
        with self._lock:
            self._free_blocks.extend(blocks)

    # -- calls -----------------------------------------------------------------------------------------

    def talker(self, rows: list[LMSession], embeds: list[np.ndarray], prefill: list[bool]
               ) -> list[np.ndarray | BaseException]:
        try:
            return self._talker(own_rows(self, rows, PagedRow), embeds)
        except Exception as e:  # noqa: BLE001 - one runtime call: every row in it failed
            return [e] * len(rows)

    def _talker(self, rows: list[PagedRow], embeds: list[np.ndarray]) -> list[np.ndarray | BaseException]:
        """Each prompt in a call of its own (as it runs alone), the single steps together in one call
        of an even number of rows (an odd count padded with a copy of a step into the scratch
        block): so no row's numbers depend on what else is stepping (the rule in `lm_rows`)."""
        for row in rows:
            row.check_open()
        out: list[np.ndarray | BaseException] = [RuntimeError("not computed")] * len(rows)
        steps = [i for i, x in enumerate(embeds) if x.shape[1] == 1]
        for i, (row, x) in enumerate(zip(rows, embeds, strict=True)):
            if x.shape[1] != 1:
                out[i] = self._call([row], [x])[0]
        if steps:
            for i, result in zip(steps, self._call([rows[i] for i in steps], [embeds[i] for i in steps]), strict=True):
                out[i] = result
        return out

    def _call(self, rows: list[PagedRow], embeds: list[np.ndarray]) -> list[np.ndarray]:
        """One talker call: the tokens of every row end to end (single steps paired)."""
        rotary = self.lm.rotary
        tokens: list[np.ndarray] = []
        cos: list[np.ndarray] = []
        sin: list[np.ndarray] = []
        positions: list[int] = []
        past: list[int] = []
        select: list[int] = []
        blocks: list[int] = []
        begins, block_begins = [0], [0]
        longest = 0

        def add(position: int, x: np.ndarray, its_blocks: list[int]) -> None:
            nonlocal longest
            n = x.shape[1]
            tokens.append(np.asarray(x[0], np.float32))
            c, s = rotary.get(position, n)
            cos.append(c)
            sin.append(s)
            positions.extend(range(position, position + n))
            past.append(position)
            begins.append(begins[-1] + n)
            select.append(begins[-1] - 1)
            blocks.extend(its_blocks[: -(-(position + n) // self.block)])
            block_begins.append(len(blocks))
            longest = max(longest, position + n)

        for row, x in zip(rows, embeds, strict=True):
            self._reserve(row, row.position + x.shape[1])
            add(row.position, x, row.blocks)
        if embeds[0].shape[1] == 1:
            for _ in range(paired(len(rows)) - len(rows)):  # computed into the scratch block and dropped
                add(0, embeds[-1], [self._scratch])
        inputs = {
            "inputs_embeds": np.concatenate(tokens),
            "cos": np.concatenate(cos)[:, None, None],
            "sin": np.concatenate(sin)[:, None, None],
            "select": np.array(select, np.int64),
            "past_lens": np.array(past, np.int32),
            "subsequence_begins": np.array(begins, np.int32),
            "block_indices": np.array(blocks, np.int32),
            "block_indices_begins": np.array(block_begins, np.int32),
            "max_context_len": np.int32(longest),
            "position_ids": np.array(positions, np.int64),
        }
        self.request.infer({k: v for k, v in inputs.items() if k in self._names})
        hidden = self.request.get_tensor("hidden").data
        logits = self.request.get_tensor("logits").data
        out: list[np.ndarray] = []
        for i, (row, x) in enumerate(zip(rows, embeds, strict=True)):
            row.position += x.shape[1]
            row.hidden = hidden[i : i + 1].copy()
            out.append(logits[i : i + 1].copy())
        return out

    def predict(self, sessions: list[LMSession], cb0: list[int]
                ) -> list[tuple[list[int], np.ndarray] | BaseException]:
        return predict_rows(own_rows(self, sessions, PagedRow), cb0, self.lm.embed_codec, self._predictor)

    def _predictor(self, inputs: dict[str, np.ndarray]) -> tuple[list[list[int]], np.ndarray]:
        """The predictor loop, compiled for `lm.rows` rows: a batch of fewer rows is padded with
        copies of its last row (computed and dropped), one of more goes in several calls."""
        width = self.lm.rows
        n = len(inputs["hidden"])
        codes: list[list[int]] = []
        summed = []
        for start in range(0, n, width):
            taken = min(width, n - start)
            part = {name: value[start : start + taken] if value.ndim else value for name, value in inputs.items()}
            self.predictor.infer(padded_rows(part, width))
            codes += self.predictor.get_tensor("codes").data[:taken].tolist()
            summed.append(self.predictor.get_tensor("summed").data[:taken].copy())
        return codes, summed[0] if len(summed) == 1 else np.concatenate(summed)
