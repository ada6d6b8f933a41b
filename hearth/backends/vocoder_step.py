"""What the compiled vocoders (OpenVINO's and ONNX Runtime's) share at run time: one stream's state,
primed states kept on disk, and the decode loop over calls of at most `VOCODER_FRAMES` frames. Each
runtime supplies `_infer`, one call of the step (exported by `hearth.convert.vocoder_export`)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import cast

import numpy as np

from hearth.backends.conversions import ConvertedModel, weights_mb
from hearth.backends.formats import VOCODER_FRAMES
from hearth.checkpoint.config import CodecDecoderConfig

__all__ = ["VOCODER_FRAMES", "VOCODER_VERSION", "SteppedVocoder", "VocoderState"]

log = logging.getLogger(__name__)

VOCODER_VERSION = "vocoder-3"  # 3: the number of frames per call is dynamic (1 to VOCODER_FRAMES)
_PRIMED_ON_DISK = 32  # cloned voices' primed vocoder states kept per converted vocoder


class VocoderState:
    """One audio stream's vocoder state: the state tensors and the frames decoded so far."""

    def __init__(self, tensors: list[np.ndarray]):
        self.tensors = tensors
        self.frames = 0


class SteppedVocoder:
    """`start()` / `decode(codes, state)` like `CodecDecoder`, one runtime call per at most
    `frames` frames. The state travels in and out of every call, so streams are independent and
    streams on several threads can decode at once."""

    # A call costs about in proportion to its frames (AVX2 path: 1 frame 60-70 ms, 5 frames 250-280
    # ms), so the first chunk is one frame: the earliest audio.
    first_chunk_frames = 1

    def __init__(self, cfg: CodecDecoderConfig, converted: ConvertedModel, frames: int, device: str):
        self.cfg = cfg
        self.converted = converted
        self.frames = frames  # the most frames one call of the graph takes
        self.call_frames = frames  # the most it is given per call (fewer: smaller buffers, more calls)
        self.device = device
        self._state_shapes = [tuple(s) for s in cast(list[list[int]], converted.manifest["state_shapes"])]

    def infer(self, codes: np.ndarray, position: int, valid: int, tensors: list[np.ndarray]
               ) -> tuple[np.ndarray, list[np.ndarray]]:
        """One call: (audio of all the frames in `codes`, the new state tensors, owned by the caller)."""
        raise NotImplementedError

    def start(self) -> VocoderState:
        return VocoderState([np.zeros(s, np.float32) for s in self._state_shapes])

    def fork(self, state: VocoderState) -> VocoderState:
        other = VocoderState(list(state.tensors))  # decode rebinds the list, never writes into it
        other.frames = state.frames
        return other

    def _state_file(self, key: str) -> Path:
        return self.converted.directory / "primed" / f"{self.device.lower()}-{key}.npz"

    def save_state(self, state: VocoderState, key: str) -> None:
        """Keep `state` on disk under `key` (a cloned voice's primed state: later processes load it
        instead of decoding the reference again). Best effort: a failure to write is only logged."""
        path = self._state_file(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.stem}.{os.getpid()}.part.npz")
            np.savez(tmp, *state.tensors, frames=np.array(state.frames, np.int64))
            tmp.replace(path)
            kept = sorted(path.parent.glob("*.npz"), key=lambda p: p.stat().st_mtime)
            for old in kept[:-_PRIMED_ON_DISK]:
                old.unlink(missing_ok=True)
        except OSError as e:
            log.warning("could not keep a primed vocoder state in %s: %s", path.parent, e)

    def drop_state(self, key: str) -> None:
        self._state_file(key).unlink(missing_ok=True)

    def load_state(self, key: str) -> VocoderState | None:
        """A state kept by `save_state`, or None (absent, or not of this vocoder's shapes)."""
        path = self._state_file(key)
        try:
            with np.load(path, allow_pickle=False) as data:
                tensors = [data[f"arr_{i}"] for i in range(len(self._state_shapes))]
                frames = int(data["frames"])
        except (OSError, KeyError, ValueError):
            return None
        if [t.shape for t in tensors] != list(self._state_shapes) or any(t.dtype != np.float32 for t in tensors):
            return None
        path.touch()
        state = VocoderState(tensors)
        state.frames = frames
        return state

    def decode(self, codes: np.ndarray, state: VocoderState) -> np.ndarray:
        """A lone frame after a stream's first call goes in a 2-frame call, the second padding
        (`valid` 1): a CPU's kernels may take another path for one row than for several (on a Xeon
        with AMX, OpenVINO's bf16 vocoder then rounds a value the other way now and then, and the
        state carries it: up to 74 steps of 16-bit PCM), and that would make the audio depend on
        where a live session's calls fall: 20 of 600 random partitions differed there, 0 of 600
        padded (docs/determinism.md). The first call stays one frame (the earliest audio), as in
        every chunk plan."""
        if codes.ndim != 2 or codes.shape[1] != self.cfg.num_quantizers or codes.shape[0] == 0:
            raise ValueError(
                f"expected codes of shape [frames >= 1, {self.cfg.num_quantizers}], got {tuple(codes.shape)}"
            )
        pieces = []
        step = min(self.call_frames, self.frames)
        for start in range(0, codes.shape[0], step):  # calls of at most `call_frames` frames
            piece = np.ascontiguousarray(codes[start : start + step], np.int64)
            valid = piece.shape[0]
            if valid == 1 and state.frames and step > 1:  # a lone frame mid-stream: padded (see `decode`)
                piece = np.repeat(piece, 2, axis=0)
            audio, state.tensors = self.infer(piece, state.frames, valid, state.tensors)
            pieces.append(audio[: valid * self.cfg.upsample])
            state.frames += valid
        return np.concatenate(pieces)

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        return self.decode(codes, self.start())

    def warm_up(self) -> None:
        self.decode(np.zeros((1, self.cfg.num_quantizers), np.int64), self.start())

    def weights_mb(self) -> dict[str, dict[str, float]]:
        return weights_mb(self.converted)
