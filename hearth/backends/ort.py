"""The language model on ONNX Runtime: the same generation algorithm, executed by ONNX Runtime's
CPU kernels (`ort_graphs`), whose block-quantized products read 4-bit weights at about the
machine's memory bandwidth on CPUs without AVX-512, where OpenVINO's int8 and int4 kernels run at
half of it (docs/performance.md). The vocoder stays on OpenVINO.

The first load converts the checkpoint into the cache (<cache>/onnxruntime); later starts read
the ONNX files there. Each utterance is a row of a `SlotBatch`: one slot of per-layer key/value
buffers that the talker's attention writes in place; a lone session is a one-slot batch of its
own, taken from a small pool.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from hearth.backends.conversions import (
    ConvertedModel,
    Converter,
    cache_entry,
    handed_in,
    release_mapped_files,
    require_converter,
    weights_mb,
)
from hearth.backends.embedder import load_embedder
from hearth.backends.formats import BLOCKS, MAX_POSITIONS, ONNXRUNTIME_FORMATS, PART_FORMATS, part_formats
from hearth.backends.interfaces import LMSession
from hearth.backends.row_pairs import (
    PooledBatch,
    PooledLanguageModel,
    SampledRow,
    own_rows,
    padded_rows,
    paired,
    predict_rows,
)
from hearth.checkpoint.loading import Checkpoint
from hearth.checkpoint.safetensors_mmap import SafetensorsFile
from hearth.checkpoint.sampling import SamplingOptions
from hearth.errors import InputError

__all__ = ["ORTLanguageModel", "SlotBatch", "SlotRow", "check_shapes", "convert_language_model"]

log = logging.getLogger(__name__)

GRAPH_VERSION = "ort-2"  # 2: int8 in blocks of 128  # bump when a graph changes, so stale conversions are never reused
START_CAPACITY = 256  # key/value positions per slot at first; doubled when a row needs more


def cache_root() -> Path:
    from hearth.platform.process import cache_dir

    return cache_dir() / "onnxruntime"


def convert_language_model(ckpt: Checkpoint, weights: str, root: Path | None = None,
                           converter: Converter | None = None) -> ConvertedModel:
    """talker.onnx and predictor.onnx (weights beside them in .data files) for this checkpoint and
    weight format, built once by `converter`, then cached (refused first if ONNX Runtime cannot run
    the checkpoint's attention: `check_shapes`)."""
    import onnxruntime as ort

    check_shapes(ckpt)
    predictor_format = part_formats(weights)[1]
    if predictor_format not in ONNXRUNTIME_FORMATS:
        allowed = ", ".join([*ONNXRUNTIME_FORMATS, *PART_FORMATS])
        raise ValueError(f"weights must be one of {allowed} with ONNX Runtime, got {weights!r}")
    path = ckpt.path / "model.safetensors"
    options = {"graph": GRAPH_VERSION, "weights": weights, "blocks": BLOCKS, "onnxruntime": ort.__version__,
               "positions": MAX_POSITIONS}
    directory, key_source, done = cache_entry(f"lm-{weights}", options, path, root or cache_root(), openvino=False)
    if done is not None:
        return done
    what = "The language model (ONNX Runtime)"
    require_converter(what, ("torch", "onnx"))
    return handed_in(converter, what).onnxruntime_language_model(ckpt, weights, directory, key_source)


def check_shapes(ckpt: Checkpoint) -> None:
    """Refuses, before anything converts, a checkpoint whose attention ONNX Runtime cannot run: its
    GroupQueryAttention takes head sizes that are multiples of 8 only (the released models' are
    128; the official classes also write others, which OpenVINO and torch run)."""
    from hearth.backends.openvino import language_model_refusal

    talker = ckpt.config.talker
    instead = ("backend='torch' (`--backend torch`; OpenVINO's language model does not run on this CPU)"
               if language_model_refusal() else
               "backend='openvino' (`--backend openvino`, not --fast or --small) or backend='torch'")
    for part, stack in (("talker", talker.stack), ("code predictor", talker.predictor)):
        if stack.head_dim % 8:
            raise InputError(f"this checkpoint's {part} has attention heads of {stack.head_dim} values, and ONNX "
                             f"Runtime's attention takes multiples of 8 only: load it with {instead}", "backend")


def session_options(threads: int | None) -> Any:  # noqa: ANN401 - onnxruntime.SessionOptions
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads or 0  # 0: one per physical core
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Idle workers sleep instead of spinning: the vocoder runs on the same cores between frames.
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.log_severity_level = 3
    return so


class ORTLanguageModel(PooledLanguageModel):
    """The talker and the 15-step predictor loop, each one ONNX Runtime session, serving single
    sessions and batches alike (see `SlotBatch`). Sessions are independent: each is the one row of
    a batch of its own, taken from a small pool of idle ones and given back when it closes."""

    def __init__(self, ckpt: Checkpoint, weights: str = "int8", threads: int | None = None,
                 cache: Path | None = None, converter: Converter | None = None):
        import onnxruntime as ort

        self.config = ckpt.config
        self.weights = weights
        self.converted = convert_language_model(ckpt, weights, cache, converter)
        self.embedder = load_embedder(ckpt, SafetensorsFile(ckpt.path / "model.safetensors"))
        super().__init__()
        self.prefixes = Prefixes()
        t0 = time.perf_counter()
        directory = self.converted.directory

        def open_session(network: str) -> Any:  # noqa: ANN401 - onnxruntime.InferenceSession
            session = ort.InferenceSession(str(directory / f"{network}.onnx"), session_options(threads),
                                           providers=["CPUExecutionProvider"])
            # ONNX Runtime maps its weights' file and packs the products' weights into its own
            # memory while it makes the session (writing into the mapping meanwhile: nothing may
            # be released before it returns); the mapped pages it read are then only a second copy.
            release_mapped_files([directory / f"{network}.onnx.data"])
            return session

        with ThreadPoolExecutor(1, thread_name_prefix="hearth-load") as pool:  # laid out side by side
            talker = pool.submit(open_session, "talker")
            self.predictor = open_session("predictor")
            self.talker = talker.result()
        self._warm(2)
        release_mapped_files([directory])  # what the first calls read (what it reads on use pages back in)
        log.debug("sessions made and warmed up in %.1f s", time.perf_counter() - t0)

    def _new_batch(self, max_rows: int) -> SlotBatch:
        return SlotBatch(self, max_rows)

    def warm_up(self) -> None:
        self._warm(8)

    def weights_mb(self) -> dict[str, dict[str, float]]:
        return weights_mb(self.converted)


class Prefixes:
    """Keys and values of prompt prefixes (role, codec tags, speaker: the same for every sentence
    in a voice and language), by their input embeddings, the most recently used kept. Computing
    them once saves their share of every later prompt: about a third of a sentence's prefill in
    the whole-text mode, nearly all of it in the interleaved mode."""

    KEEP = 16  # 2 MB each at 0.6B

    def __init__(self) -> None:
        self._kept: OrderedDict[bytes, dict[str, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(prefix: np.ndarray) -> bytes:
        return hashlib.sha256(np.ascontiguousarray(prefix, np.float32).tobytes()).digest()

    def get(self, prefix: np.ndarray) -> dict[str, np.ndarray] | None:
        key = self._key(prefix)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
            return kept

    def put(self, prefix: np.ndarray, values: dict[str, np.ndarray]) -> None:
        with self._lock:
            self._kept[self._key(prefix)] = values
            while len(self._kept) > self.KEEP:
                self._kept.popitem(last=False)

    def __len__(self) -> int:
        """Prefixes kept."""
        return len(self._kept)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


class SlotRow(SampledRow):
    """One utterance in a `SlotBatch`: its slot, its length so far and its sampling."""

    def __init__(self, batch: SlotBatch, slot: int, options: SamplingOptions, seed: int | None):
        super().__init__(batch, batch.lm.config.talker, options, seed)
        self.slot = slot
        self.position = 0
        self.prefix = 0  # leading prompt positions whose keys and values the model keeps (see `Prefixes`)

    def _release(self) -> None:
        self.batch._release(self.slot)


class SlotBatch(PooledBatch):
    """`LMBatch` on ONNX Runtime: `max_rows` slots of key/value buffers, per layer
    [slots, kv_heads, capacity, head_dim], that the talker's attention reads and writes in place.

    Single steps of several rows go in one call over the slots from the first to the last of them
    (a slot in between that takes no step this time gets a placeholder token, whose key and value
    land where that row's next real token will overwrite them). A prompt runs in a call of its own
    over its slot alone (the attention kernel takes several new tokens per row only where the rows
    start empty). Capacity doubles, for every slot, when a row needs more."""

    shared_calls = True  # one call for every row: its failure fails them all

    def __init__(self, lm: ORTLanguageModel, max_rows: int):
        self.lm = lm
        self.max_rows = max_rows
        self._slots = paired(max_rows)  # (an odd span of steps takes a placeholder beside it)
        self._free = list(range(max_rows))
        self._rows: dict[int, SlotRow] = {}  # the open row of each taken slot
        self._lock = threading.Lock()
        self._stack = lm.config.talker.stack
        self._capacity = 0
        self._buffers: dict[str, np.ndarray] = {}
        self._grow(START_CAPACITY)

    def open(self, options: SamplingOptions, seed: int | None, prompt_length: int,
             prefix: int = 0) -> SlotRow:
        with self._lock:
            if not self._free:
                raise RuntimeError(f"this batch holds at most {self.max_rows} rows at once")
            self._free.sort()  # the lowest slots first: rows stepped together stay close
            slot = self._free.pop(0)
            row = self._rows[slot] = SlotRow(self, slot, options, seed)
        # An exact (fp32) model computes its prompt in one piece, as the reference does.
        row.prefix = prefix if 0 < prefix < prompt_length and self.lm.weights != "fp32" else 0
        return row

    def _release(self, slot: int) -> None:
        with self._lock:
            self._rows.pop(slot, None)
            self._free.append(slot)

    def _grow(self, capacity: int) -> None:
        s = self._stack
        shape = (self._slots, s.num_kv_heads, capacity, s.head_dim)
        for i in range(s.num_layers):
            for kind in ("key", "value"):
                name = f"{kind}_{i}"
                new = np.zeros(shape, np.float32)
                if name in self._buffers:
                    new[:, :, : self._capacity] = self._buffers[name]
                self._buffers[name] = new
        if self._capacity:
            log.debug("key/value buffers grown to %d positions per row", capacity)
        self._capacity = capacity

    @property
    def capacity(self) -> int:
        """Positions each slot's key/value buffers hold now."""
        return self._capacity

    def idle(self) -> None:
        """Back to the first capacity (an idle pooled batch should not keep a long utterance's)."""
        if self._capacity > START_CAPACITY:
            self._buffers.clear()
            self._capacity = 0
            self._grow(START_CAPACITY)

    # -- calls -----------------------------------------------------------------------------------------

    def talker(self, rows: list[LMSession], embeds: list[np.ndarray], prefill: list[bool]
               ) -> list[np.ndarray | BaseException]:
        try:
            own: list[SlotRow] = own_rows(self, rows, SlotRow)
            for row in own:
                row.check_open()
            out: list[np.ndarray | BaseException] = [RuntimeError("not computed")] * len(own)
            singles = [i for i, x in enumerate(embeds) if x.shape[1] == 1 and own[i].position > 0]
            for i, (row, x) in enumerate(zip(own, embeds, strict=True)):
                if i not in singles:
                    if row.position > 0:
                        raise RuntimeError("only the first call of a row takes several tokens")
                    if row.prefix:
                        self._start_with_prefix(row, x[:, : row.prefix])
                    out[i] = self._run([row], [x[:, row.position :]])[0]
            if singles:
                for i, result in zip(singles, self._run([own[i] for i in singles], [embeds[i] for i in singles]),
                                     strict=True):
                    out[i] = result
            return out
        except Exception as e:  # noqa: BLE001 - one runtime call: every row in it failed
            return [e] * len(rows)

    def _run(self, rows: list[SlotRow], embeds: list[np.ndarray]) -> list[np.ndarray]:
        """One talker call over the slots from the first to the last of `rows`; single steps over an
        even number of slots (a placeholder beside an odd span: the rule in `lm_rows`)."""
        import onnxruntime as ort

        first, last = min(r.slot for r in rows), max(r.slot for r in rows)
        if embeds[0].shape[1] == 1 and (last - first + 1) % 2:
            if last + 1 < self._slots:
                last += 1
            else:
                first -= 1
        span = last - first + 1
        width = max(x.shape[1] for x in embeds)
        hidden_size = self._stack.hidden_size
        feed = np.zeros((span, width, hidden_size), np.float32)
        select = np.arange(span, dtype=np.int64) * width
        lengths = np.zeros(span, np.int32)  # the length after this call, per slot
        by_slot = {r.slot: (r, x) for r, x in zip(rows, embeds, strict=True)}
        for b in range(span):
            taken = by_slot.get(first + b)
            if taken is None:  # a placeholder: the slot's row (if any) stays where it is
                lengths[b] = self._length_of(first + b) + 1
                continue
            row, x = taken
            n = x.shape[1]
            feed[b, :n] = x[0]
            select[b] += n - 1
            lengths[b] = row.position + n
        if lengths.max() > self._capacity:  # (a placeholder needs room for its token too)
            self._grow(max(2 * self._capacity, int(lengths.max())))
        io = self.lm.talker.io_binding()
        io.bind_cpu_input("embeds", feed)
        io.bind_cpu_input("select", select)
        io.bind_cpu_input("seqlens_k", lengths - 1)
        io.bind_cpu_input("total", np.array(int(lengths.max()), np.int32))
        io.bind_output("hidden")
        io.bind_output("logits")
        views = []
        for name, buffer in self._buffers.items():
            view = ort.OrtValue.ortvalue_from_numpy(buffer[first : last + 1])
            views.append(view)
            io.bind_ortvalue_input(name, view)
            io.bind_ortvalue_output("present_" + name, view)
        self.lm.talker.run_with_iobinding(io)
        hidden, logits = (v.numpy() for v in io.get_outputs()[:2])
        results = []
        for row, x in zip(rows, embeds, strict=True):
            b = row.slot - first
            row.position += x.shape[1]
            row.hidden = hidden[b : b + 1].copy()
            results.append(logits[b : b + 1].copy())
        return results

    def _start_with_prefix(self, row: SlotRow, prefix: np.ndarray) -> None:
        """Put the keys and values of `prefix` (the prompt's first positions) in the row's slot: kept
        from an earlier prompt that started the same way, or computed now (alone, so that a prompt
        gives the same numbers whether its prefix was kept or not) and kept."""
        kept = self.lm.prefixes.get(prefix)
        if kept is None:
            self._run([row], [prefix])
            kept = {name: buffer[row.slot, :, : row.position].copy() for name, buffer in self._buffers.items()}
            self.lm.prefixes.put(prefix, kept)
        else:
            n = prefix.shape[1]
            if n > self._capacity:
                self._grow(max(2 * self._capacity, n))
            for name, values in kept.items():
                self._buffers[name][row.slot, :, :n] = values
            row.position = n

    def _length_of(self, slot: int) -> int:
        """The length of the row in `slot` (0 for a free slot): where a placeholder may write."""
        row = self._rows.get(slot)
        return row.position if row is not None else 0

    def predict(self, sessions: list[LMSession], cb0: list[int]
                ) -> list[tuple[list[int], np.ndarray] | BaseException]:
        return predict_rows(own_rows(self, sessions, SlotRow), cb0, self.lm.embed_codec, self._predictor)

    def _predictor(self, inputs: dict[str, np.ndarray]) -> tuple[list[list[int]], np.ndarray]:
        """One call for the rows, paired (an odd count padded with a copy of the last: dropped)."""
        n = len(inputs["hidden"])
        codes, summed = self.lm.predictor.run(["codes", "summed"], padded_rows(inputs, paired(n)))
        return codes[:n].tolist(), summed[:n]

