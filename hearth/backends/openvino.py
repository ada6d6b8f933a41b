"""The OpenVINO backend: the same generation algorithm, executed by the OpenVINO runtime.

Converted models are cached on disk, keyed by the checkpoint (its files' size, time and tensor
table), the weight format and the versions of this converter and of OpenVINO; a second start reads
the cached IR and the runtime's compiled blobs instead of the safetensors. Prompt embeddings (a few
rows of the text table through a small projection) stay in torch, as in the reference backend.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
import torch
from torch import nn

from ..checkpoint import Checkpoint, talker_tensor_shapes
from ..config import TalkerConfig
from ..generate import LMSession, SamplingOptions
from ..model.layers import Rotary
from ..model.talker import TextProjection
from ..safetensors_mmap import SafetensorsFile

__all__ = [
    "DEFAULT_CACHE",
    "ConvertedModel",
    "OpenVINOLanguageModel",
    "PromptEmbedder",
    "available",
    "cache_root",
]

log = logging.getLogger(__name__)

# Bump when a graph changes, so stale cached conversions are never reused.
GRAPH_VERSION = "lm-2"
DEFAULT_CACHE = Path.home() / ".cache" / "hearth"


def available() -> bool:
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


def _core():  # noqa: ANN202 - openvino is an optional dependency
    try:
        import openvino as ov
    except ImportError as e:
        raise RuntimeError(
            "the OpenVINO backend needs the 'fast' extra: pip install 'hearth-tts[fast]'"
        ) from e
    return ov.Core()


def cache_root() -> Path:
    """Converted models live in $HEARTH_CACHE/openvino (default ~/.cache/hearth/openvino)."""
    return Path(os.environ.get("HEARTH_CACHE") or DEFAULT_CACHE) / "openvino"


class PromptEmbedder(nn.Module):
    """The talker's input embeddings only: text table -> projection, and codec ids. Both tables stay
    memory-mapped in the checkpoint's dtype (rows are widened as they are looked up)."""

    def __init__(self, cfg: TalkerConfig):
        super().__init__()
        self.text_projection = TextProjection(cfg.text_hidden_size, cfg.stack.hidden_size)
        self.text_embedding: torch.Tensor = torch.empty(0)
        self.codec_embedding: torch.Tensor = torch.empty(0)

    def embed_text(self, ids: list[int]) -> torch.Tensor:
        rows = self.text_embedding[torch.tensor(ids, dtype=torch.long)].to(torch.float32)
        return self.text_projection(rows[None])

    def embed_codec(self, ids: list[int]) -> torch.Tensor:
        return self.codec_embedding[torch.tensor([ids], dtype=torch.long)].to(torch.float32)


def load_embedder(ckpt: Checkpoint, f: SafetensorsFile) -> PromptEmbedder:
    with torch.device("meta"):
        emb = PromptEmbedder(ckpt.config.talker)
    state = {
        "text_projection.linear_fc1.weight": "talker.text_projection.linear_fc1.weight",
        "text_projection.linear_fc1.bias": "talker.text_projection.linear_fc1.bias",
        "text_projection.linear_fc2.weight": "talker.text_projection.linear_fc2.weight",
        "text_projection.linear_fc2.bias": "talker.text_projection.linear_fc2.bias",
    }
    emb.load_state_dict({k: f.get(v).to(torch.float32) for k, v in state.items()}, strict=True, assign=True)
    for name in state.values():
        f.release(name)  # widened copies (or, for float32 checkpoints, paged back in on use)
    emb.eval().requires_grad_(False)
    emb.text_embedding = f.get("talker.model.text_embedding.weight")
    emb.codec_embedding = f.get("talker.model.codec_embedding.weight")
    return emb


def _file_identity(path: Path) -> dict[str, object]:
    st = path.stat()
    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        header = fh.read(min(n, 100_000_000))
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "header": hashlib.sha256(header).hexdigest()}


def _openvino_version() -> str:
    import openvino as ov

    return ov.get_version()


@dataclass
class ConvertedModel:
    """One cached conversion: IR files per network plus what each part weighs."""

    directory: Path
    manifest: dict[str, object] = field(default_factory=dict)

    def xml(self, network: str) -> Path:
        return self.directory / f"{network}.xml"


def _cache_entry(
    name: str, options: Mapping[str, object], weights_file: Path, root: Path | None
) -> tuple[Path, dict[str, object], ConvertedModel | None]:
    """The cache directory for converting `weights_file` (with the config.json beside it) with
    `options`, the full key it is named after, and its conversion if one was finished before."""
    key_source = {
        **options,
        "openvino": _openvino_version(),
        "model": _file_identity(weights_file),
        "config": hashlib.sha256((weights_file.parent / "config.json").read_bytes()).hexdigest(),
    }
    key = hashlib.sha256(json.dumps(key_source, sort_keys=True).encode()).hexdigest()[:20]
    directory = (root or cache_root()) / f"{name}-{key}"
    manifest_path = directory / "manifest.json"
    if manifest_path.is_file():
        return directory, key_source, ConvertedModel(directory, json.loads(manifest_path.read_text()))
    return directory, key_source, None


def _staging(directory: Path) -> Path:
    """A private directory beside the final one, to convert into."""
    tmp = directory.with_name(directory.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    return tmp


def _publish(tmp: Path, directory: Path, manifest: Mapping[str, object]) -> ConvertedModel:
    """Write the manifest last and move the finished conversion into place in one rename."""
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
    try:
        tmp.rename(directory)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return ConvertedModel(directory, dict(manifest))


def convert_language_model(ckpt: Checkpoint, weights: str, root: Path | None = None) -> ConvertedModel:
    """The talker and predictor-loop IRs for this checkpoint and weight format (built once, then cached)."""
    from .ov_graphs import WEIGHT_FORMATS, build_predictor_loop, build_talker

    if weights not in WEIGHT_FORMATS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHT_FORMATS)}, got {weights!r}")
    path = ckpt.path / "model.safetensors"
    options = {"graph": GRAPH_VERSION, "weights": weights}
    directory, key_source, done = _cache_entry(f"lm-{weights}", options, path, root)
    if done is not None:
        return done

    import openvino as ov

    t0 = time.perf_counter()
    log.info("converting the language model to OpenVINO (%s weights) into %s; once per checkpoint", weights, directory)
    f = SafetensorsFile(path)
    expected = talker_tensor_shapes(ckpt.config)
    missing = [n for n in expected if n not in f.tensors]
    if missing:
        raise RuntimeError(f"{path} lacks {len(missing)} tensors (first: {missing[0]}); re-download the checkpoint")

    def source(name: str) -> np.ndarray:
        t = f.get(name).to(torch.float32).numpy().copy()
        f.release(name)
        return t

    tmp = _staging(directory)
    parts = {}
    for network, build in (("talker", build_talker), ("predictor", build_predictor_loop)):
        model, builder = build(ckpt.config.talker, source, weights)
        ov.save_model(model, tmp / f"{network}.xml", compress_to_fp16=False)
        parts[network] = {"fp32_bytes": builder.bytes_fp32, "stored_bytes": builder.bytes_stored}
        del model, builder
    manifest = {"key": key_source, "weights": weights, "parts": parts, "convert_s": time.perf_counter() - t0}
    log.info("converted in %.1f s", manifest["convert_s"])
    return _publish(tmp, directory, manifest)


def runtime_properties(
    device: str, weights: str, threads: int | None, precise: bool, core_type: str = "ANY_CORE"
) -> dict[str, object]:
    """Compile options: latency first; fp32 arithmetic where the weights are fp32 (the accurate mode)."""
    props: dict[str, object] = {"PERFORMANCE_HINT": "LATENCY"}
    if device == "CPU":
        if threads:
            props["INFERENCE_NUM_THREADS"] = threads
        props["SCHEDULING_CORE_TYPE"] = core_type
        props["ENABLE_HYPER_THREADING"] = False  # memory-bound: one thread per physical core
        if precise or weights != "fp32":
            # int8 weights: f32 activations with dynamic int8 quantization of the activations is
            # faster here than bf16 arithmetic (measured, see docs), and more accurate.
            props["INFERENCE_PRECISION_HINT"] = "f32"
        if weights == "int8":
            props["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = 128
        # The unrolled predictor has ~700 fusable element-wise groups. As JIT "snippets" they cost
        # ~70 MB of code and buffers for a predictor loop 10-15 % faster here (medians of repeated
        # runs); off, the engine stays within 1.5 GB at 0.6B. Memory first on small machines.
        props["SNIPPETS_MODE"] = "DISABLE"
        if precise:
            props["KV_CACHE_PRECISION"] = "f32"
    return props


class OpenVINOLanguageModel:
    """Talker (stateful KV cache) and the 15-step predictor loop, each one compiled OpenVINO model."""

    def __init__(
        self,
        ckpt: Checkpoint,
        weights: str = "int8",
        device: str = "CPU",
        threads: int | None = None,
        cache: Path | None = None,
        core_type: str = "ANY_CORE",
    ):
        core = _core()
        return_large_buffers_to_os()
        self.config = ckpt.config
        self.weights = weights
        self.device = device
        self.converted = convert_language_model(ckpt, weights, cache)
        compiled_dir = self.converted.directory / "compiled"
        compiled_dir.mkdir(exist_ok=True)
        core.set_property({"CACHE_DIR": str(compiled_dir)})
        props = runtime_properties(device, weights, threads, precise=weights == "fp32", core_type=core_type)
        f = SafetensorsFile(ckpt.path / "model.safetensors")
        self.embedder = load_embedder(ckpt, f)
        stack = ckpt.config.talker.stack
        self.rotary = Rotary(stack.head_dim, stack.rope_theta)
        t0 = time.perf_counter()
        # One network at a time: compile, run once (the runtime lays out its weights on the first
        # call), and meanwhile keep dropping the pages of the cache files it has read, so the
        # mapped originals and the runtime's copy never sit in memory side by side.
        with bounded_mapping([self.converted.directory]):
            self.talker = core.compile_model(str(self.converted.xml("talker")), device, props)
            self._talker_req = self.talker.create_infer_request()
            warm = _OpenVINOSession(self, SamplingOptions(do_sample=False, sub_do_sample=False), None)
            warm.prefill(torch.zeros(1, 2, stack.hidden_size))
            warm.step(torch.zeros(1, 1, stack.hidden_size))
        with bounded_mapping([self.converted.directory]):
            self.predictor = core.compile_model(str(self.converted.xml("predictor")), device, props)
            self._predictor_req = self.predictor.create_infer_request()
            warm.predict(0)
        self._talker_req.reset_state()
        self.compile_s = time.perf_counter() - t0

    def embed_text(self, ids: list[int]) -> torch.Tensor:
        return self.embedder.embed_text(ids)

    def embed_codec(self, ids: list[int]) -> torch.Tensor:
        return self.embedder.embed_codec(ids)

    def session(self, options: SamplingOptions, rng: torch.Generator | None, prompt_length: int) -> LMSession:
        return _OpenVINOSession(self, options, rng)


class _OpenVINOSession:
    """One utterance. The engine serves one request at a time, so sessions share the infer requests."""

    def __init__(self, lm: OpenVINOLanguageModel, options: SamplingOptions, rng: torch.Generator | None):
        self.lm = lm
        self.rng = rng
        self.position = 0
        self.hidden = np.zeros(0, np.float32)
        groups = lm.config.talker.num_code_groups
        vocab = lm.config.talker.predictor.vocab_size
        self.sample = options.sub_do_sample
        self.draw_count = groups - 1
        self.params = {
            "temperature": np.float32(options.sub_temperature if self.sample else 1.0),
            "top_k": np.int64(min(options.sub_top_k or vocab, vocab) if self.sample else 1),
            "top_p": np.float32(options.sub_top_p if self.sample else 1.0),
        }
        self._beam = np.zeros(1, np.int32)
        lm._talker_req.reset_state()

    def _talker(self, embeds: torch.Tensor) -> torch.Tensor:
        n = embeds.shape[1]
        cos, sin = self.lm.rotary.get(self.position, n, torch.float32)
        past = self.position
        mask = np.zeros((1, 1, n, past + n), np.float32)
        if n > 1:
            mask[0, 0, :, past:] = np.triu(np.full((n, n), -np.inf, np.float32), 1)
        req = self.lm._talker_req
        req.infer({
            "embeds": embeds.to(torch.float32).numpy(), "cos": cos.numpy(), "sin": sin.numpy(),
            "mask": mask, "beam_idx": self._beam,
        })
        self.position += n
        self.hidden = req.get_tensor("hidden").data.copy()
        return torch.from_numpy(req.get_tensor("logits").data.copy())

    def prefill(self, embeds: torch.Tensor) -> torch.Tensor:
        return self._talker(embeds)

    def step(self, embeds: torch.Tensor) -> torch.Tensor:
        return self._talker(embeds)

    def predict(self, cb0: int) -> tuple[list[int], torch.Tensor]:
        if self.sample:
            draws = torch.rand(self.draw_count, generator=self.rng).numpy()  # [0, 1)
        else:
            draws = np.zeros(self.draw_count, np.float32)
        first = self.lm.embed_codec([cb0]).numpy()
        req = self.lm._predictor_req
        req.infer({"hidden": self.hidden, "first": first, "draws": draws, **self.params})
        codes = req.get_tensor("codes").data.tolist()
        summed = torch.from_numpy(req.get_tensor("summed").data.copy())
        return codes, summed


VOCODER_VERSION = "vocoder-2"
VOCODER_FRAMES = 5  # frames per vocoder call (the default chunk); shorter chunks are padded
_RUNTIME_PRECISION = {"bf16": "bf16", "fp16": "f16", "fp32": "f32"}


def convert_vocoder(
    ckpt: Checkpoint, precision: str, root: Path | None = None, frames: int = VOCODER_FRAMES
) -> ConvertedModel:
    """The streaming vocoder step for `frames` frames per call as an IR (weights stored fp16 unless
    fp32), built once, then cached."""
    if precision not in _RUNTIME_PRECISION:
        raise ValueError(f"vocoder precision must be one of {', '.join(_RUNTIME_PRECISION)}, got {precision!r}")
    path = ckpt.path / "speech_tokenizer/model.safetensors"
    stored = "fp32" if precision == "fp32" else "fp16"
    options = {"graph": VOCODER_VERSION, "torch": torch.__version__, "stored": stored, "frames": frames}
    directory, key_source, done = _cache_entry(f"vocoder-{stored}", options, path, root)
    if done is not None:
        return done

    import openvino as ov

    from ..checkpoint import load_codec
    from .ov_codec import StreamingStep, initial_state

    t0 = time.perf_counter()
    log.info("converting the vocoder to OpenVINO into %s; once per checkpoint", directory)
    decoder = load_codec(ckpt, torch.float32)
    fp32_bytes = sum(p.numel() * 4 for p in decoder.parameters())
    step = StreamingStep(decoder).eval()
    state = initial_state(decoder)
    codes = torch.zeros(frames, ckpt.codec.num_quantizers, dtype=torch.long)
    with torch.no_grad():
        exported = torch.export.export(step, (codes, torch.tensor(0), torch.tensor(frames), *state))
    model = ov.convert_model(exported)
    tmp = _staging(directory)
    ov.save_model(model, tmp / "vocoder.xml", compress_to_fp16=stored == "fp16")
    stored_bytes = fp32_bytes // 2 if stored == "fp16" else fp32_bytes
    manifest = {
        "key": key_source, "parts": {"vocoder": {"fp32_bytes": fp32_bytes, "stored_bytes": stored_bytes}},
        "state_shapes": [list(s.shape) for s in state], "frames": frames, "convert_s": time.perf_counter() - t0,
    }
    log.info("converted the vocoder in %.1f s", manifest["convert_s"])
    return _publish(tmp, directory, manifest)


class OpenVINOCodecStream:
    """One vocoder stream: the state tensors and the frames decoded so far."""

    def __init__(self, state: list[np.ndarray]):
        self.state = state
        self.frames = 0


class OpenVINOVocoder:
    """`start()` / `decode(codes, stream)` like `CodecDecoder`, run by OpenVINO (bf16 by default)."""

    def __init__(
        self,
        ckpt: Checkpoint,
        precision: str = "bf16",
        device: str = "CPU",
        threads: int | None = None,
        cache: Path | None = None,
        core_type: str = "ANY_CORE",
        frames: int = VOCODER_FRAMES,
    ):
        core = _core()
        return_large_buffers_to_os()
        self.cfg = ckpt.codec
        self.precision = precision
        self.device = device
        self.frames = frames
        self.converted = convert_vocoder(ckpt, precision, cache, frames)
        compiled_dir = self.converted.directory / "compiled"
        compiled_dir.mkdir(exist_ok=True)
        core.set_property({"CACHE_DIR": str(compiled_dir)})
        props: dict[str, object] = {
            "PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": _RUNTIME_PRECISION[precision]
        }
        if device == "CPU":
            if threads:
                props["INFERENCE_NUM_THREADS"] = threads
            props["SCHEDULING_CORE_TYPE"] = core_type
        t0 = time.perf_counter()
        shapes = cast(list[list[int]], self.converted.manifest["state_shapes"])
        self._state_shapes = [tuple(s) for s in shapes]
        with bounded_mapping([self.converted.directory]):  # as for the language model
            self.model = core.compile_model(str(self.converted.xml("vocoder")), device, props)
            self._request = self.model.create_infer_request()
            self.decode(torch.zeros(1, self.cfg.num_quantizers, dtype=torch.long), self.start())
        self.compile_s = time.perf_counter() - t0

    def start(self) -> OpenVINOCodecStream:
        return OpenVINOCodecStream([np.zeros(s, np.float32) for s in self._state_shapes])

    def decode(self, codes: torch.Tensor, stream: OpenVINOCodecStream) -> torch.Tensor:
        if codes.ndim != 2 or codes.shape[1] != self.cfg.num_quantizers or codes.shape[0] == 0:
            raise ValueError(
                f"expected codes of shape [frames >= 1, {self.cfg.num_quantizers}], got {tuple(codes.shape)}"
            )
        req = self._request
        pieces = []
        for start in range(0, codes.shape[0], self.frames):  # calls of `self.frames` frames, padded
            piece = codes[start : start + self.frames].to(torch.long).numpy()
            valid = piece.shape[0]
            padded = np.zeros((self.frames, piece.shape[1]), np.int64)
            padded[:valid] = piece
            req.infer([padded, np.array(stream.frames, np.int64), np.array(valid, np.int64), *stream.state])
            pieces.append(req.get_output_tensor(0).data[: valid * self.cfg.upsample].copy())
            stream.state = [req.get_output_tensor(i + 1).data.copy() for i in range(len(stream.state))]
            stream.frames += valid
        return torch.from_numpy(np.concatenate(pieces))

    def __call__(self, codes: torch.Tensor) -> torch.Tensor:
        return self.decode(codes, self.start())


@contextmanager
def bounded_mapping(directories: list[Path], interval_s: float = 0.02) -> Iterator[None]:
    """While the runtime reads weights from mapped cache files (compiling, first inference), drop
    the pages it has read every `interval_s`, and all of them at the end: the peak resident memory
    is then the runtime's own copy plus a few pages, not both copies whole."""
    stop = threading.Event()

    def release_periodically() -> None:
        while not stop.wait(interval_s):
            release_mapped_files(directories)

    worker = threading.Thread(target=release_periodically, name="hearth-release-pages", daemon=True)
    worker.start()
    try:
        yield
    finally:
        stop.set()
        worker.join()
        release_mapped_files(directories)


def return_large_buffers_to_os(threshold: int = 256 << 10) -> bool:
    """Have glibc's malloc serve buffers of `threshold` bytes and more from their own mappings.

    The runtime allocates its intermediate buffers per call for networks with dynamic shapes (the
    talker, the vocoder: ~100 MB for a 5-frame chunk). glibc's default raises its mmap threshold
    after the first such buffer is freed, so later ones come from the heap and stay resident;
    fixed, they are returned on free (measured: -80 MB of peak resident memory, no measurable
    cost per call). A process-wide setting; does nothing where malloc is not glibc's."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_mmap_threshold = -3
    return bool(mallopt(ctypes.c_int(m_mmap_threshold), ctypes.c_int(threshold)))


def trim_heap() -> None:
    """Give the heap's free pages back to the system (glibc), e.g. after loading."""
    import ctypes

    with suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(ctypes.c_size_t(0))


def release_mapped_files(directories: list[Path]) -> int:
    """Drop this process's resident pages of files mapped from `directories` (the cached IR and
    compiled blobs). The runtime copies weights into its own layout on the first inference, after
    which the mapped originals only double the resident memory; should they be read again, the
    kernel pages them back in from the file. Returns the bytes released (Linux; 0 elsewhere)."""
    import ctypes

    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return 0
    prefixes = tuple(str(d.resolve()) + os.sep for d in directories)
    madv_dontneed = 4
    released = 0
    for line in maps:
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or not fields[5].startswith(prefixes) or "w" in fields[1]:
            continue  # only read-only mappings of our files: nothing there can differ from the file
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        if libc.madvise(ctypes.c_void_p(lo), ctypes.c_size_t(hi - lo), madv_dontneed) == 0:
            released += hi - lo
    return released
