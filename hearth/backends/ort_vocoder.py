"""The streaming vocoder on ONNX Runtime, in fp32 (`vocoder="onnxruntime"`).

Beside ONNX Runtime's language model the whole engine then runs on one runtime: OpenVINO is
never loaded, the sessions and the tokenizer load side by side, and on CPUs without bf16 (where
OpenVINO computes the vocoder in fp32 too) it holds 100 MB less and is ready 1.3 s sooner. Its
chunks cost 5-10 % more than OpenVINO's there, so it is not the default (docs/performance.md).
The graph is torch's own ONNX export (`torch.onnx.export`, through onnxscript) of the same
streaming step the OpenVINO vocoder runs.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..checkpoint import Checkpoint, verify_weights
from ..errors import CONVERT_EXTRA
from .conversions import ConvertedModel, cache_entry, progress, require_converter, staging, tool_version
from .vocoder_step import VOCODER_FRAMES, VOCODER_VERSION, SteppedVocoder, export_step, publish_vocoder

__all__ = ["ORTVocoder", "convert_vocoder"]

log = logging.getLogger(__name__)


# The exporter's own lines (optional torchvision operators it skips, each initializer it merges):
# nothing a user can act on, so not shown among the conversion's lines.
_EXPORTER_LOGGERS = ("torch.onnx", "onnx_ir", "onnxscript")


@contextmanager
def _quiet(names: tuple[str, ...]) -> Iterator[None]:
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def convert_vocoder(ckpt: Checkpoint, root: Path | None = None, frames: int = VOCODER_FRAMES) -> ConvertedModel:
    """vocoder.onnx (fp32 weights beside it) for 1 to `frames` frames per call, built once, then cached."""
    import onnxruntime as ort

    from .ort import cache_root

    path = ckpt.path / "speech_tokenizer/model.safetensors"
    options = {"graph": VOCODER_VERSION, "torch": tool_version("torch"), "onnxruntime": ort.__version__,
               "onnxscript": tool_version("onnxscript"), "frames": frames, "sine": "exact"}
    directory, key_source, done = cache_entry("vocoder-fp32", options, path, root or cache_root(), openvino=False)
    if done is not None:
        return done
    require_converter("The vocoder (ONNX Runtime)")
    if options["onnxscript"] is None:
        raise ValueError(f"the onnxruntime vocoder is converted by torch's ONNX exporter, which needs onnxscript: "
                         f"{CONVERT_EXTRA} (or choose vocoder bf16)")
    verify_weights(ckpt)
    import torch
    t0 = time.perf_counter()
    log.info("converting the vocoder to ONNX into %s; once per checkpoint", directory)
    with staging(directory) as tmp, progress("converting the vocoder", log):
        # ONNX Runtime's Sin is a vector kernel (OpenVINO's is scalar, hence its polynomial): with
        # it a 1-frame call took 64-73 ms against 72-88, a 5-frame one 265-307 against 276-346
        # (AVX2 path, two interleaved runs of six calls each).
        exported, state, fp32_bytes = export_step(ckpt, frames, polynomial_sine=False)
        with warnings.catch_warnings(), _quiet(_EXPORTER_LOGGERS):
            # As for OpenVINO's conversion: torch's decompositions trip a deprecation of its own.
            warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)` is deprecated",
                                    category=FutureWarning)
            program = torch.onnx.export(exported, dynamo=True, optimize=True, verbose=False)
        assert program is not None
        program.save(str(tmp / "vocoder.onnx"), external_data=True)
        return publish_vocoder(tmp, directory, key_source, state, fp32_bytes, fp32_bytes, frames, t0)


class ORTVocoder(SteppedVocoder):
    """The streaming vocoder run by ONNX Runtime (fp32). One session serves every stream: ONNX
    Runtime runs a session from several threads at once."""

    def __init__(self, ckpt: Checkpoint, threads: int | None = None, cache: Path | None = None,
                 frames: int = VOCODER_FRAMES):
        import onnxruntime as ort

        from .ort import session_options

        super().__init__(ckpt.codec, convert_vocoder(ckpt, cache, frames), frames, "CPU")
        t0 = time.perf_counter()
        so = session_options(threads)
        # Without the arena, buffers go back to the allocator after each call: 100 MB less held
        # between calls and 40-50 MB less at peak, for a 5-frame call within noise of its time
        # (AVX2 path, three interleaved pairs).
        so.enable_cpu_mem_arena = False
        self.session = ort.InferenceSession(str(self.converted.directory / "vocoder.onnx"), so,
                                            providers=["CPUExecutionProvider"])
        names = [i.name for i in self.session.get_inputs()]
        self._codes, self._position, self._valid = names[:3]
        self._state_names = names[3:]
        if len(self._state_names) != len(self._state_shapes):
            raise RuntimeError(f"the converted vocoder in {self.converted.directory} takes {len(self._state_names)} "
                               f"state tensors, its manifest says {len(self._state_shapes)}: delete that folder "
                               "to convert it again")
        log.debug("session made in %.1f s (warmed up with the engine's other networks)", time.perf_counter() - t0)

    def _infer(self, codes: np.ndarray, position: int, valid: int, tensors: list[np.ndarray]
               ) -> tuple[np.ndarray, list[np.ndarray]]:
        feed: dict[str, Any] = {self._codes: codes, self._position: np.array(position, np.int64),
                                self._valid: np.array(valid, np.int64)}
        feed.update(zip(self._state_names, tensors, strict=True))
        audio, *state = self.session.run(None, feed)
        return audio, state
