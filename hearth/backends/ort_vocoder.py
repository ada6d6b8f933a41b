"""The streaming vocoder on ONNX Runtime, in fp32 (`vocoder="onnxruntime"`), or with the weights of
its products in 8 bits (`vocoder="onnxruntime-int8"`, the small preset's: 457 -> 237 MB on disk,
about 200 MB less at peak, where OpenVINO's bf16 vocoder becomes fp32 on CPUs without bf16).

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
from pathlib import Path
from typing import Any

import numpy as np

from hearth.backends.conversions import (
    ConvertedModel,
    Converter,
    cache_entry,
    handed_in,
    require_converter,
    tool_version,
)
from hearth.backends.formats import ORT_VOCODERS
from hearth.backends.vocoder_step import VOCODER_FRAMES, VOCODER_VERSION, SteppedVocoder
from hearth.checkpoint.loading import Checkpoint
from hearth.errors import CONVERT_EXTRA

__all__ = ["ORTVocoder", "convert_vocoder"]

log = logging.getLogger(__name__)


def convert_vocoder(ckpt: Checkpoint, root: Path | None = None, frames: int = VOCODER_FRAMES,
                    weights: str = "fp32", converter: Converter | None = None) -> ConvertedModel:
    """vocoder.onnx (its weights beside it, in `weights`: fp32 or int8) for 1 to `frames` frames per
    call, built once, then cached."""
    import onnxruntime as ort

    from hearth.backends.ort import cache_root

    if weights not in ORT_VOCODERS.values():
        raise ValueError(f"the onnxruntime vocoder's weights are {', '.join(ORT_VOCODERS.values())}, got {weights!r}")
    path = ckpt.path / "speech_tokenizer/model.safetensors"
    options: dict[str, object] = {"graph": VOCODER_VERSION, "torch": tool_version("torch"),
                                  "onnxruntime": ort.__version__, "onnxscript": tool_version("onnxscript"),
                                  "frames": frames, "sine": "exact"}
    if weights != "fp32":  # (fp32's key as before: its conversions stay valid)
        options["weights"] = weights
    directory, key_source, done = cache_entry(f"vocoder-{weights}", options, path, root or cache_root(),
                                              openvino=False)
    if done is not None:
        return done
    what = "The vocoder (ONNX Runtime)"
    require_converter(what)
    if options["onnxscript"] is None:
        raise ValueError(f"the onnxruntime vocoder is converted by torch's ONNX exporter, which needs onnxscript: "
                         f"{CONVERT_EXTRA} (or choose vocoder bf16)")
    return handed_in(converter, what).onnxruntime_vocoder(ckpt, frames, directory, key_source, weights)


class ORTVocoder(SteppedVocoder):
    """The streaming vocoder run by ONNX Runtime (`weights` fp32 or int8). One session serves every
    stream: ONNX Runtime runs a session from several threads at once."""

    def __init__(self, ckpt: Checkpoint, threads: int | None = None, cache: Path | None = None,
                 frames: int = VOCODER_FRAMES, weights: str = "fp32", converter: Converter | None = None):
        import onnxruntime as ort

        from hearth.backends.ort import session_options

        super().__init__(ckpt.codec, convert_vocoder(ckpt, cache, frames, weights, converter), frames, "CPU")
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

    def infer(self, codes: np.ndarray, position: int, valid: int, tensors: list[np.ndarray]
               ) -> tuple[np.ndarray, list[np.ndarray]]:
        feed: dict[str, Any] = {self._codes: codes, self._position: np.array(position, np.int64),
                                self._valid: np.array(valid, np.int64)}
        feed.update(zip(self._state_names, tensors, strict=True))
        audio, *state = self.session.run(None, feed)
        return audio, state
