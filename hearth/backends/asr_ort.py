"""Qwen3-ASR and Qwen3-ForcedAligner on ONNX Runtime: the graphs of `hearth.convert.asr_ort`, found in
the cache (<cache>/onnxruntime) or converted on first use (`asr_compiled.convert_asr`).

A session owns its key/value buffers, per layer [1, kv_heads, capacity, head_dim], which the
decoder's GroupQueryAttention reads and writes in place (bound as both past and present); they
double when a session outgrows them.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from hearth.backends.asr_compiled import AsrConverter, CompiledAsrModel, CompiledSession, convert_asr
from hearth.backends.conversions import release_mapped_files
from hearth.backends.ort import session_options
from hearth.errors import InputError

if TYPE_CHECKING:
    from hearth.checkpoint.asr_loading import AsrCheckpoint

__all__ = ["ORTAsrModel"]

log = logging.getLogger(__name__)


def check_head_size(ckpt: AsrCheckpoint) -> None:
    """ONNX Runtime's GroupQueryAttention takes head sizes that are multiples of 8 only (the released
    models' are 128): anything else is refused before converting."""
    d = ckpt.config.decoder.head_dim
    if d % 8:
        raise InputError(f"this checkpoint's decoder has attention heads of {d} values, and ONNX Runtime's "
                         "attention takes multiples of 8 only: load it with backend='openvino' or 'torch'", "backend")


class ORTAsrModel(CompiledAsrModel):
    runtime = "onnxruntime"

    def __init__(self, ckpt: AsrCheckpoint, weights: str = "int8", threads: int | None = None,
                 converter: AsrConverter | None = None):
        import onnxruntime as ort

        check_head_size(ckpt)
        super().__init__(ckpt, convert_asr(ckpt, "onnxruntime", weights, converter), weights)
        directory = self.converted.directory
        t0 = time.perf_counter()

        def open_session(network: str) -> Any:  # noqa: ANN401 - onnxruntime.InferenceSession
            session = ort.InferenceSession(str(directory / f"{network}.onnx"), session_options(threads),
                                           providers=["CPUExecutionProvider"])
            release_mapped_files([directory / f"{network}.onnx.data"])  # (see `ort.ORTLanguageModel`)
            return session

        with ThreadPoolExecutor(2, thread_name_prefix="hearth-load") as pool:  # laid out side by side
            made = {n: pool.submit(open_session, n) for n in ("conv", "windows")}
            self.decoder = open_session("decoder")
            self.conv, self.windows = made["conv"].result(), made["windows"].result()
        s = ckpt.config.decoder
        self.cache_shape = (s.num_layers, s.num_kv_heads, s.head_dim)
        log.debug("sessions made in %.1f s", time.perf_counter() - t0)

    def _convolve(self, chunks: np.ndarray) -> np.ndarray:
        return self.conv.run(["steps"], {"chunks": chunks})[0]

    def _transform(self, windows: np.ndarray) -> np.ndarray:
        return self.windows.run(["embeddings"], {"windows": np.ascontiguousarray(windows, np.float32)})[0]



class ORTSession(CompiledSession):
    def __init__(self, model: ORTAsrModel, capacity: int):
        super().__init__(model, capacity)
        self.ort_model = model
        self.buffers: dict[str, np.ndarray] = {}
        self.views: list[tuple[str, Any]] = []  # the buffers as the runtime's values, made once per size
        self._grow(self.capacity)

    def _grow(self, capacity: int) -> None:
        layers, kv, d = self.ort_model.cache_shape
        for i in range(layers):
            for kind in ("key", "value"):
                name = f"{kind}_{i}"
                new = np.zeros((1, kv, capacity, d), np.float32)
                if name in self.buffers:
                    new[:, :, : self.position] = self.buffers[name][:, :, : self.position]
                self.buffers[name] = new
        self.capacity = capacity
        import onnxruntime as ort

        self.views = [(name, ort.OrtValue.ortvalue_from_numpy(b)) for name, b in self.buffers.items()]

    def run(self, embeds: np.ndarray, select: np.ndarray) -> np.ndarray:
        n = embeds.shape[1]
        self._check(n)
        if self.position + n > self.capacity:
            self._grow(max(2 * self.capacity, self.position + n))
        length = self.position + n
        io = self.ort_model.decoder.io_binding()
        io.bind_cpu_input("embeds", np.ascontiguousarray(embeds, np.float32))
        io.bind_cpu_input("select", select)
        io.bind_cpu_input("seqlens_k", np.array([length - 1], np.int32))
        io.bind_cpu_input("total", np.array(length, np.int32))
        io.bind_output("logits")
        for name, view in self.views:  # (each view wraps its buffer's memory: written in place)
            io.bind_ortvalue_input(name, view)
            io.bind_ortvalue_output("present_" + name, view)
        self.ort_model.decoder.run_with_iobinding(io)
        self.position = length
        return io.get_outputs()[0].numpy().copy()

    def close(self) -> None:
        self.buffers, self.views = {}, []
        super().close()


ORTAsrModel.session_type = ORTSession
