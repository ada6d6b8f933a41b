"""Qwen3-ASR and Qwen3-ForcedAligner on OpenVINO: the encoder's convolutions and windowed transformer
and the decoder (its keys and values kept as each infer request's state), compiled from the IRs of
`hearth.convert.asr_ov`, found in the cache or converted on first use (`asr_compiled.convert_asr`).

A session is an infer request of the decoder (its state reset), taken from a small pool of idle
ones; any number may be open at once, on any threads.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from hearth.backends.asr_compiled import AsrConverter, CompiledAsrModel, CompiledSession, convert_asr
from hearth.backends.conversions import bounded_mapping, compiled_dir
from hearth.backends.openvino import open_runtime, runtime_properties
from hearth.backends.rotary import RotaryTable
from hearth.platform.process import locale_kept
from hearth.platform.topology import simd

if TYPE_CHECKING:
    from hearth.checkpoint.asr_loading import AsrCheckpoint

__all__ = ["OpenVINOAsrModel"]

log = logging.getLogger(__name__)


class OpenVINOAsrModel(CompiledAsrModel):
    runtime = "openvino"

    @locale_kept()  # (OpenVINO's compiles change the process's locale: see process.py)
    def __init__(self, ckpt: AsrCheckpoint, weights: str = "int8", threads: int | None = None,
                 converter: AsrConverter | None = None, core_type: str = "ANY_CORE"):
        import openvino as ov

        open_runtime("CPU")  # every library the runtime opens, opened on this thread (see `openvino._core`)
        super().__init__(ckpt, convert_asr(ckpt, "openvino", weights, converter), weights)
        core = ov.Core()
        props = runtime_properties("CPU", weights, threads, precise=weights == "fp32", core_type=core_type)
        props["CACHE_DIR"] = str(compiled_dir(self.converted, simd()))
        # The CPU plugin keeps kernels for each input shape it has met (every recording's length,
        # every prefill and cache length), 5000 by default: a live session, always meeting new
        # lengths, grew about 8 MB a transcription without end (+340 MB over 60, +595 MB over a
        # 10-minute `bench --listen-live`). 100 keep what a transcription reuses: RSS levels off
        # (+170 MB over 120 new lengths, the last 40 adding 20 MB) and the step is as fast (38.1 and
        # 54.3 ms against 38.3 and 53.7 at 5 and 20 s, medians of 3 alternating runs; 0 cost 40-55 %).
        # Zen 4, 2026-12-07.
        props["CPU_RUNTIME_CACHE_CAPACITY"] = 100
        t0 = time.perf_counter()
        with bounded_mapping([self.converted.directory]):
            self.conv, self.windows, self.decoder = (
                core.compile_model(str(self.converted.xml(n)), "CPU", props) for n in ("conv", "windows", "decoder"))
        self.rotary = RotaryTable(ckpt.config.decoder.head_dim, ckpt.config.decoder.rope_theta)
        self._idle: dict[str, list[Any]] = {"conv": [], "windows": [], "decoder": []}
        self._lock = threading.Lock()
        log.debug("compiled in %.1f s", time.perf_counter() - t0)

    def _request(self, network: str) -> Any:  # noqa: ANN401 - an openvino InferRequest
        with self._lock:
            idle = self._idle[network]
            if idle:
                return idle.pop()
        return getattr(self, network).create_infer_request()

    def _give_back(self, network: str, request: Any) -> None:  # noqa: ANN401
        with self._lock:
            if len(self._idle[network]) < 2:
                self._idle[network].append(request)

    def _once(self, network: str, x: np.ndarray) -> np.ndarray:
        request = self._request(network)
        try:
            request.infer([x])
            return request.get_output_tensor(0).data.copy()
        finally:
            self._give_back(network, request)

    def _convolve(self, chunks: np.ndarray) -> np.ndarray:
        return self._once("conv", chunks)

    def _transform(self, windows: np.ndarray) -> np.ndarray:
        return self._once("windows", windows)



class OpenVINOSession(CompiledSession):
    def __init__(self, model: OpenVINOAsrModel, capacity: int):
        super().__init__(model, capacity)
        self.ov_model = model
        self.request: Any = model._request("decoder")
        self.request.reset_state()

    def run(self, embeds: np.ndarray, select: np.ndarray) -> np.ndarray:
        n = embeds.shape[1]
        self._check(n)
        cos, sin = self.ov_model.rotary.get(self.position, n)
        self.request.infer([np.ascontiguousarray(embeds, np.float32), cos, sin, select])
        self.position += n
        return self.request.get_output_tensor(0).data.copy()

    def rewind(self, position: int) -> None:
        """Each layer's keys and values cut to `position` positions (the state's third axis)."""
        import openvino as ov

        held = self.position
        super().rewind(position)
        if position == held:
            return
        if not position:
            self.request.reset_state()
            return
        for state in self.request.query_state():
            state.state = ov.Tensor(np.ascontiguousarray(state.state.data[:, :, :position]))

    def close(self) -> None:
        if not self.closed and self.request is not None:
            self.request.reset_state()  # (its keys and values freed before it waits in the pool)
            self.ov_model._give_back("decoder", self.request)
            self.request = None
        super().close()


OpenVINOAsrModel.session_type = OpenVINOSession
