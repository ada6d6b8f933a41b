"""What the compiled hearing backends (OpenVINO, ONNX Runtime) share: finding or making their
conversion in the cache, the token embeddings (numpy, from the checkpoint's mapped file), the audio
encoder's driver (chunks padded and batched, windows batched) and the decoder session's bookkeeping.
A runtime module supplies three calls: the convolutions on a batch of chunks, the transformer on a
batch of windows, and one decoder pass of a session (`CompiledAsrModel`, `CompiledSession`).

No torch here: a conversion missing from the cache is made by the converter handed in
(`AsrConverter`, `hearth.convert`), or refused with what to install.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from hearth.backends.asr_formats import ASR_GRAPH_VERSION, ASR_WEIGHTS, MAX_ASR_POSITIONS
from hearth.backends.conversions import ConvertedModel, cache_entry, release_mapped_files, tool_version, weights_mb
from hearth.checkpoint.safetensors_mmap import SafetensorsFile, widen
from hearth.errors import CONVERT_EXTRA, ConversionUnavailable, InputError

if TYPE_CHECKING:
    from hearth.checkpoint.asr_loading import AsrCheckpoint

__all__ = ["AsrConverter", "CompiledAsrModel", "CompiledSession", "TokenTable", "convert_asr"]

log = logging.getLogger(__name__)

EMBEDDINGS = "thinker.model.embed_tokens.weight"


class AsrConverter(Protocol):
    """What builds a hearing model's conversion the cache lacks (`hearth.convert.ConvertOnFirstUse`),
    handed in by whoever loads: the backends never import the converter."""

    def asr_networks(self, ckpt: AsrCheckpoint, runtime: str, weights: str, directory: Path,
                     key_source: dict[str, object]) -> ConvertedModel: ...


def _runtime_version(runtime: str) -> dict[str, object]:
    if runtime == "onnxruntime":
        import onnxruntime as ort

        return {"onnxruntime": ort.__version__}
    return {}  # (OpenVINO's version is in every OpenVINO key: `cache_entry`)


def convert_asr(ckpt: AsrCheckpoint, runtime: str, weights: str, converter: AsrConverter | None,
                root: Path | None = None) -> ConvertedModel:
    """The conversion of `ckpt` for `runtime` ("openvino" or "onnxruntime") in `weights`: from the
    cache, else made by `converter`; refused, saying what to install, where nothing can make it."""
    from hearth.platform.process import cache_dir

    if weights not in ASR_WEIGHTS:
        raise InputError(f"weights must be one of {', '.join(ASR_WEIGHTS)} for {ckpt.kind}, got {weights!r}",
                         "weights")
    files = ckpt.weight_files
    options: dict[str, object] = {"graph": ASR_GRAPH_VERSION, "weights": weights, **_runtime_version(runtime),
                                  "files": [p.name for p in files], "sizes": [p.stat().st_size for p in files]}
    name = f"{'aligner' if ckpt.config.aligner else 'asr'}-{weights}"
    directory, key_source, done = cache_entry(name, options, files[0], root or cache_dir() / runtime,
                                              openvino=runtime == "openvino")
    if done is not None:
        return done
    what = f"{ckpt.kind} at {ckpt.path} ({runtime}, {weights} weights)"
    if tool_version("torch") is None or (runtime == "onnxruntime" and tool_version("onnx") is None):
        tools = "torch and onnx" if runtime == "onnxruntime" else "torch"
        raise ConversionUnavailable(
            f"{what} has not been converted in this cache ({directory.parent}) and this install cannot convert: "
            f"converting needs {tools} ({CONVERT_EXTRA}). Install it, or load the model once where it is installed "
            "with the same cache folder (HEARTH_CACHE), then load it here")
    if converter is None:
        raise ConversionUnavailable(f"{what} has not been converted and no converter was handed in: load it "
                                    "through hearth.listen (Listener.load, Aligner.load), which converts on first use")
    return converter.asr_networks(ckpt, runtime, weights, directory, key_source)


class TokenTable:
    """The decoder's token embeddings, read from the checkpoint's memory-mapped file in its stored
    dtype and widened to float32 row by row (exactly, as torch widens bf16): only the rows looked up
    are paged in."""

    def __init__(self, ckpt: AsrCheckpoint):
        for path in ckpt.weight_files:
            f = SafetensorsFile(path)
            if EMBEDDINGS in f.tensors:
                self.rows, self.dtype = f.array(EMBEDDINGS), f.tensors[EMBEDDINGS].dtype
                return
        raise InputError(f"{ckpt.path}: no {EMBEDDINGS} in the weight files", "model")

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        return widen(self.rows[np.asarray(ids, np.int64)], self.dtype)


class CompiledAsrModel:
    """`AsrModel` and `AlignerModel` over a runtime's three calls (see the module's docstring)."""

    runtime = ""
    session_type: type[CompiledSession]  # the runtime's session

    def __init__(self, ckpt: AsrCheckpoint, converted: ConvertedModel, weights: str):
        self.config = ckpt.config
        self.converted = converted
        self.weights = weights
        self.table = TokenTable(ckpt)
        self.hidden = ckpt.config.decoder.hidden_size

    # -- a runtime's calls -------------------------------------------------------------------------------

    def _convolve(self, chunks: np.ndarray) -> np.ndarray:
        """[C, 1, mel, T] -> [C, steps, d_model]"""
        raise NotImplementedError

    def _transform(self, windows: np.ndarray) -> np.ndarray:
        """[W, n, d_model] -> [W, n, output_dim]"""
        raise NotImplementedError

    def session(self, capacity: int) -> CompiledSession:
        return self.session_type(self, capacity)

    # -- shared -----------------------------------------------------------------------------------------

    def encode_audio(self, features: np.ndarray) -> np.ndarray:
        return self.audio_windows(self.audio_steps(features), features.shape[1])

    def audio_steps(self, features: np.ndarray, longest: int | None = None) -> np.ndarray:
        cfg = self.config.encoder
        features = np.ascontiguousarray(features, np.float32)
        lengths = cfg.chunk_lengths(features.shape[1])
        longest = longest or max(lengths)  # every chunk zero-padded to the longest, as the reference batches them
        starts = np.cumsum([0, *lengths[:-1]])
        steps = []
        per_call = max(cfg.chunks_per_window, 1)  # (memory stays bounded on long audio)
        for first in range(0, len(lengths), per_call):
            batch = np.zeros((min(per_call, len(lengths) - first), 1, cfg.num_mel_bins, longest), np.float32)
            for j in range(batch.shape[0]):
                start, n = starts[first + j], lengths[first + j]
                batch[j, 0, :, :n] = features[:, start : start + n]
            out = self._convolve(batch)
            steps += [out[j, : _conv_steps(lengths[first + j])] for j in range(batch.shape[0])]
        return np.concatenate(steps)  # [tokens, d_model]

    def audio_windows(self, steps: np.ndarray, frames: int) -> np.ndarray:
        windows = self.config.encoder.window_lengths(frames)
        full, width = (len(windows) - 1 if windows[-1] != windows[0] else len(windows)), windows[0]
        parts = []
        for first in range(0, full, 4):  # whole windows four at a time, as the rows of one batch
            count = min(4, full - first)
            block = steps[first * width : (first + count) * width].reshape(count, width, -1)
            parts.append(self._transform(block).reshape(count * width, -1))
        if full < len(windows):  # the shorter last window alone
            parts.append(self._transform(steps[full * width :][None])[0])
        return np.concatenate(parts)

    def embed(self, ids: np.ndarray, audio: np.ndarray | None = None, audio_at: int = 0) -> np.ndarray:
        """ids [n] -> [1, n, hidden], rows audio_at .. taken by `audio`."""
        x = self.table(ids)
        if audio is not None and audio.shape[0]:
            x[audio_at : audio_at + audio.shape[0]] = audio
        return x[None]

    def timestamp_logits(self, ids: np.ndarray, audio: np.ndarray, audio_at: int,
                         positions: np.ndarray) -> np.ndarray:
        session = self.session(len(ids))
        try:
            return session.run(self.embed(ids, audio, audio_at), np.asarray(positions, np.int64))
        finally:
            session.close()

    def warm_up(self) -> None:
        mel = self.config.encoder.num_mel_bins
        audio = self.encode_audio(np.zeros((mel, 2 * self.config.encoder.chunk_frames), np.float32))
        ids = np.zeros(audio.shape[0] + 2, np.int64)
        if self.config.aligner is not None:
            self.timestamp_logits(ids, audio, 1, np.array([1, 2]))
        else:
            s = self.session(len(ids) + 1)
            s.prefill(ids, audio, 1)
            s.step(0)
            s.close()
        release_mapped_files([self.converted.directory])  # the graphs' weights are the runtime's own now

    def weights_mb(self) -> dict[str, dict[str, float]]:
        return weights_mb(self.converted)

    def describe(self) -> dict[str, Any]:
        return {"backend": self.runtime, "weights": self.weights, "kind": self.config.kind}


def _conv_steps(frames: int) -> int:
    from hearth.checkpoint.asr_config import conv_output_length

    return conv_output_length(frames)


class CompiledSession:
    """One transcription's decoder state on a runtime: `run` is its one call (embeddings of the next
    positions and the rows whose logits are wanted); the rest is bookkeeping."""

    def __init__(self, model: CompiledAsrModel, capacity: int):
        if capacity > MAX_ASR_POSITIONS:
            raise InputError(f"a session of {capacity} positions: the compiled decoder holds at most "
                             f"{MAX_ASR_POSITIONS} (cut the audio into shorter pieces)", "audio")
        self.model = model
        self.capacity = max(capacity, 1)
        self.position = 0
        self.closed = False

    def run(self, embeds: np.ndarray, select: np.ndarray) -> np.ndarray:
        """embeds [1, n, hidden] at the next n positions -> float32 logits [len(select), head]."""
        raise NotImplementedError

    def _check(self, n: int) -> None:
        if self.closed:
            raise RuntimeError("this session is closed")
        if self.position + n > MAX_ASR_POSITIONS:
            raise InputError(f"the decoder reached its {MAX_ASR_POSITIONS} positions", "max_new_tokens")

    def prefill(self, ids: np.ndarray, audio: np.ndarray, audio_at: int) -> np.ndarray:
        embeds = self.model.embed(ids, audio, audio_at)
        return self.run(embeds, np.array([len(ids) - 1], np.int64))[0]

    def step(self, token: int) -> np.ndarray:
        if not self.position and not self.closed:
            raise RuntimeError("step before prefill")
        return self.run(self.model.embed(np.array([token])), np.zeros(1, np.int64))[0]

    def rewind(self, position: int) -> None:
        if self.closed:
            raise RuntimeError("this session is closed")
        if not 0 <= position <= self.position:
            raise ValueError(f"cannot rewind a session of {self.position} positions to {position}")
        self.position = position

    def close(self) -> None:
        self.closed = True
