"""The on-disk cache of converted models (OpenVINO's IR and ONNX Runtime's graphs, each runtime in
its own folder: <cache>/openvino, <cache>/onnxruntime), and how its mapped files are read.

A conversion is keyed by the checkpoint (its files' size, time and tensor table, and config.json),
the options and the versions of the converter and of the runtime; an export's own conversions
come first (hearth/exported.py). It is written into a private
directory and moved into place in one rename, manifest last, so a cache entry is either whole or
absent. A process converting holds a lock on `<entry>.lock` (released however the process ends),
and another process that needs the same entry meanwhile waits for it instead of converting the same
thing beside it (two services started at once on a fresh machine convert once). While the runtime
reads the cached weights (compiling, first inference) their mapped pages are dropped as they are
read, so the mapped originals and the runtime's own copy never sit in memory side by side.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from hearth.errors import CONVERT_EXTRA, ConversionUnavailable

if TYPE_CHECKING:
    from hearth.checkpoint.loading import Checkpoint

log = logging.getLogger(__name__)

__all__ = ["ConvertedModel", "Converter", "bounded_mapping", "cache_entry", "cache_root", "compiled_dir", "handed_in",
           "progress", "publish", "release_mapped_files", "staging", "weights_mb"]


def cache_root() -> Path:
    """Converted models live in <cache>/openvino (see `hearth.platform.process.cache_dir`)."""
    from hearth.platform.process import cache_dir

    return cache_dir() / "openvino"


def _file_identity(path: Path) -> dict[str, object]:
    st = path.stat()
    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        header = fh.read(min(n, 100_000_000))
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "header": hashlib.sha256(header).hexdigest()}


# Key fields that name the tools a conversion was made with, not what loads it: an export made with
# one torch (say the x86 build) loads where another is installed (an arm64 board's).
CONVERTER_ONLY = ("torch", "onnxscript", "nncf")


def _same_conversion(made: Mapping[str, object], wanted: Mapping[str, object]) -> bool:
    """Whether an export's conversion (its key `made`) is the one a load wants: the same key but
    for the converting tools' versions and the weights files' times (an export's files are copies)."""
    def runtime_side(key: Mapping[str, object]) -> dict[str, object]:
        kept = {k: v for k, v in key.items() if k not in CONVERTER_ONLY}
        if isinstance(kept.get("model"), dict):
            kept["model"] = {k: v for k, v in cast(dict[str, object], kept["model"]).items() if k != "mtime_ns"}
        return kept

    return runtime_side(made) == runtime_side(wanted)


def tool_version(package: str) -> str | None:
    """An installed package's version, without importing it (None: not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


class Converter(Protocol):
    """What builds a conversion the cache lacks, handed in by whoever loads: the backends never
    import the converter (`hearth.convert`, which needs torch); `hearth.convert.ConvertOnFirstUse`
    imports it only when something must be converted. Each writes into `directory` (staged) and
    returns the published conversion."""

    def openvino_language_model(self, ckpt: Checkpoint, weights: str, directory: Path,
                                key_source: dict[str, object]) -> ConvertedModel: ...

    def openvino_vocoder(self, ckpt: Checkpoint, stored: str, frames: int, directory: Path,
                         key_source: dict[str, object]) -> ConvertedModel: ...

    def onnxruntime_language_model(self, ckpt: Checkpoint, weights: str, directory: Path,
                                   key_source: dict[str, object]) -> ConvertedModel: ...

    def onnxruntime_vocoder(self, ckpt: Checkpoint, frames: int, directory: Path, key_source: dict[str, object],
                            weights: str) -> ConvertedModel: ...


def handed_in(converter: Converter | None, what: str) -> Converter:
    """The converter for `what`, which is missing from the cache (a clear error when none was given)."""
    if converter is None:
        raise ConversionUnavailable(
            f"{what} has not been converted and no converter was handed in: load through hearth.load (which "
            "converts on first use), or convert once with `hearth export MODEL DIR` and load that directory")
    return converter


def require_converter(what: str, tools: tuple[str, ...] = ("torch",)) -> None:
    """Raise a clear error when `what` must be converted here and the converting tools are not
    installed: the runtime-only install loads exported or cached conversions only."""
    missing = [t for t in tools if tool_version(t) is None]
    if missing:
        raise ConversionUnavailable(
            f"{what} has not been converted for this Hearth and this install cannot convert: converting needs "
            f"{' and '.join(missing)} ({CONVERT_EXTRA}). Or convert once on another machine with `hearth export "
            "MODEL DIR` and load that directory here (--model DIR).")


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


def cache_entry(
    name: str, options: Mapping[str, object], weights_file: Path, root: Path | None, openvino: bool = True
) -> tuple[Path, dict[str, object], ConvertedModel | None]:
    """The cache directory for converting `weights_file` (with the config.json beside it) with
    `options` (and OpenVINO's version, for its conversions), the full key it is named after, and its
    conversion if one was finished before."""
    from hearth.checkpoint.exported import find_export

    key_source = {
        **options,
        **({"openvino": _openvino_version()} if openvino else {}),
        "model": _file_identity(weights_file),
        "config": hashlib.sha256((weights_file.parent / "config.json").read_bytes()).hexdigest(),
    }
    export = find_export(weights_file.parent)
    if export is not None:  # a model directory `hearth export` wrote: its own conversions first
        runtime = "openvino" if openvino else "onnxruntime"
        for directory in export.entries(runtime, name):
            manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
            if _same_conversion(manifest.get("key", {}), key_source):
                return directory, key_source, ConvertedModel(directory, manifest)
        log.warning("the export %s holds no %s %s for this Hearth and %s; converting it into the cache (export "
                    "again with this version to skip that)", export.root, runtime, name,
                    ", ".join(f"{k} {v}" for k, v in key_source.items() if k in ("graph", "openvino", "onnxruntime")))
    key = hashlib.sha256(json.dumps(key_source, sort_keys=True).encode()).hexdigest()[:20]
    directory = (root or cache_root()) / f"{name}-{key}"
    manifest_path = directory / "manifest.json"
    if not manifest_path.is_file():
        _wait_for_a_converter(directory)
    if manifest_path.is_file():
        return directory, key_source, ConvertedModel(directory, json.loads(manifest_path.read_text(encoding="utf-8")))
    if any(k in options and options[k] is None for k in CONVERTER_ONLY):
        # A converting tool is missing, so this cannot be converted here: one made by other tools will do.
        for other in sorted((root or cache_root()).glob(f"{name}-*/manifest.json")):
            manifest = json.loads(other.read_text(encoding="utf-8"))
            if _same_conversion(manifest.get("key", {}), key_source):
                return other.parent, key_source, ConvertedModel(other.parent, manifest)
    return directory, key_source, None


def _lock_path(directory: Path) -> Path:
    return directory.with_name(directory.name + ".lock")


_converting_here: set[Path] = set()  # entries this process converts into (it never waits for itself)


def _wait_for_a_converter(directory: Path) -> None:
    """If another process is converting into `directory` (it holds the lock), wait until it is done.
    Where advisory locks do not exist (no fcntl: Windows; some network file systems) nothing waits."""
    if directory in _converting_here:
        return
    try:
        import fcntl
        fd = os.open(_lock_path(directory), os.O_RDONLY)
    except (ImportError, OSError):  # no converter has ever locked this entry
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another process is converting into %s; waiting for it", directory)
            fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def _converting(directory: Path) -> Iterator[None]:
    """Hold `directory`'s lock while converting into it (see `_wait_for_a_converter`)."""
    try:
        import fcntl
        directory.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(_lock_path(directory), os.O_RDWR | os.O_CREAT, 0o644)
    except (ImportError, OSError):
        yield
        return
    _converting_here.add(directory)
    try:
        with suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        _converting_here.discard(directory)
        os.close(fd)  # releases the lock


@contextmanager
def _every(interval_s: float, fn: Callable[[], object], name: str) -> Iterator[None]:
    """Call `fn` every `interval_s` from a side thread while the block runs."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(interval_s):
            fn()

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@contextmanager
def progress(what: str, log: logging.Logger, every_s: float = 10.0) -> Iterator[None]:
    """A line on the log every `every_s` while a long step runs (a conversion takes a minute)."""
    t0 = time.monotonic()
    with _every(every_s, lambda: log.info("%s: %.0f s so far", what, time.monotonic() - t0), "hearth-progress"):
        yield


@contextmanager
def staging(directory: Path) -> Iterator[Path]:
    """A private directory beside the final one, to convert into; removed if the conversion fails
    or is interrupted, so an unfinished conversion never lingers in the cache. The entry's lock is
    held until the block ends (the caller publishes inside it)."""
    tmp = directory.with_name(directory.name + f".tmp{os.getpid()}")
    with _converting(directory):
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            yield tmp
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def publish(tmp: Path, directory: Path, manifest: Mapping[str, object]) -> ConvertedModel:
    """Write the manifest last and move the finished conversion into place in one rename."""
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    try:
        tmp.rename(directory)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return ConvertedModel(directory, dict(manifest))


def compiled_dir(converted: ConvertedModel, isa: str) -> Path:
    """Where OpenVINO keeps the compiled blobs of a conversion for this instruction set: beside it,
    or in the cache where that is read-only (an export on a read-only mount)."""
    for directory in (converted.directory / f"compiled-{isa}",
                      cache_root() / "compiled" / f"{converted.directory.name}-{isa}"):
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(directory, os.W_OK):
            return directory
    raise OSError(f"no writable folder for OpenVINO's compiled blobs of {converted.directory}")


def weights_mb(converted: ConvertedModel) -> dict[str, dict[str, float]]:
    parts = cast(dict[str, dict[str, int]], converted.manifest["parts"])
    return {name: {"fp32_mb": p["fp32_bytes"] / 1e6, "stored_mb": p["stored_bytes"] / 1e6} for name, p in parts.items()}


class _Loads:
    """The `bounded_mapping` loads under way in this process (their directories, counted), and the
    directories whose release waits for a load of theirs to end."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # also held through a release: one at a time
        self.under_way: dict[Path, int] = {}
        self.waiting: set[Path] = set()

    def busy(self, directory: Path) -> bool:
        """Whether a load under way reads files of `directory` (it, inside it, or around it)."""
        return any(d == directory or d in directory.parents or directory in d.parents for d in self.under_way)

    def release(self, directories: list[Path]) -> int:
        """Under the lock: release those of `directories` no load under way touches, the rest later."""
        free = [d for d in directories if not self.busy(d)]
        self.waiting.update(d for d in directories if d not in free)
        return release_spans(mapped_spans(free)) if free else 0


_loads = _Loads()


@contextmanager
def bounded_mapping(directories: list[Path]) -> Iterator[None]:
    """A network's load (compile, first inference) from mapped cache files in `directories`, after
    which this process's pages of those files are dropped (`release_mapped_files`): the runtime
    holds its own copy by then, and only a few pages of the originals are read again.

    Loads run side by side (the language model beside the vocoder, an engine beside another). A
    release of files that a load under way also reads waits for that load to end, and releases run
    one at a time, so nothing maps, writes or unmaps the released files between the release's
    reading of the mappings and its madvise. (Waiting for every load instead kept the language
    model's files resident while the vocoder compiled: peak RSS +12 %, 1916 against 1708 MB.)

    Dropped once, at the end, not every 20 ms while it compiled (as before 2026-12-06): on a 2-vCPU
    Zen 3 with OpenVINO's 0.6B (talker, predictor, vocoder) the load's peak RSS was the same either
    way (2274 against 2279 MB), and the pages the compile reads twice came back from the page cache
    instead of the disk (start to ready 4.1-4.9 s against 12-14 s with MADV_PAGEOUT every 20 ms)."""
    mine = [d.resolve() for d in directories]
    with _loads.lock:
        for d in mine:
            _loads.under_way[d] = _loads.under_way.get(d, 0) + 1
    try:
        yield
    finally:
        with _loads.lock:
            for d in mine:
                _loads.under_way[d] -= 1
                if not _loads.under_way[d]:
                    del _loads.under_way[d]
            waiting = sorted(_loads.waiting | set(mine))
            _loads.waiting.clear()
            _loads.release(waiting)


def release_mapped_files(directories: list[Path]) -> int:
    """Give back this process's resident pages of files mapped from `directories` (or those files:
    the cached IR and compiled blobs, ONNX Runtime's external weights). A runtime copies weights into
    its own layout on load or on the first inference, after which the mapped originals only double
    the resident memory; should they be read again, the kernel pages them back in from the file.
    Only mappings that hold nothing but the file's own pages are asked (`mapped_spans`). Files a
    `bounded_mapping` load under way also reads are released when it ends. Returns the bytes
    released now (0 where madvise is not Linux's)."""
    with _loads.lock:
        return _loads.release([d.resolve() for d in directories])


Span = tuple[int, int, str]  # a mapping's first and end address, and the file it maps


def _file_mappings() -> list[tuple[int, int, str, str]]:
    """This process's mappings of files: (first address, end address, permissions, path)."""
    try:
        maps = Path("/proc/self/maps").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    found = []
    for line in maps:
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5].startswith("/"):
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            found.append((lo, hi, fields[1], fields[5]))
    return found


def mapped_spans(directories: list[Path]) -> list[Span]:
    """This process's mappings of files in `directories` that hold only the file's own pages: shared
    ones, and private ones without an anonymous page (`Anonymous` 0 in /proc/self/smaps; not
    `Private_Dirty`, which counts a tmpfs file's pages too). A private mapping's written page is the
    process's own copy, and it stays so when the mapping is made read-only afterwards (a runtime
    that converts weights in place, as a loader relocates a library): dropping it would put the
    file's bytes back under live data, so read-only mappings are checked as writable ones are. A
    snapshot: `release_spans` checks each is still there."""
    prefixes = tuple(str(d.resolve()) + (os.sep if d.is_dir() else "") for d in directories)
    if not any(path.startswith(prefixes) for _, _, _, path in _file_mappings()):
        return []  # (smaps takes tens of ms to read: only when there is something to ask)
    try:
        smaps = Path("/proc/self/smaps").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    spans: list[Span] = []
    current: Span | None = None
    private = own = False
    for line in smaps + ["0-0 ---- 0 0:0 0"]:  # (a last header closes the last mapping)
        fields = line.split(maxsplit=5)
        if fields and "-" in fields[0] and not fields[0].endswith(":"):  # a mapping's header line
            if current is not None and own:
                spans.append(current)
            current, own = None, True
            if len(fields) == 6 and fields[5].startswith(prefixes):
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                current, private = (lo, hi, fields[5]), fields[1].endswith("p")
        elif current is not None and private and fields and fields[0] == "Anonymous:":
            own = fields[1].split()[0] == "0"
    return spans


MADV_DONTNEED = 4


def release_spans(spans: list[Span]) -> int:
    """Drop this process's pages of `spans` (MADV_DONTNEED): a file's clean page leaves this
    process and stays in the page cache, so a later touch maps it again without reading the disk.
    Only spans still mapped as they were in the snapshot are asked: on memory that stopped being the
    file's mapping (a runtime unmaps its weights when compiling ends, and malloc may map the same
    addresses at once) MADV_DONTNEED would zero live data (that crashed an OpenVINO load on Zen 4,
    2026-12-06). The maps are read again just before, and the callers release on the thread that
    loaded the network, after its runtime calls have returned: nothing unmaps those files between
    that reading and the release. Returns the bytes released (0 where madvise is not Linux's)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return 0
    still = {(lo, hi, path) for lo, hi, _, path in _file_mappings()}
    released = 0
    for lo, hi, path in spans:
        if (lo, hi, path) in still and libc.madvise(ctypes.c_void_p(lo), ctypes.c_size_t(hi - lo), MADV_DONTNEED) == 0:
            released += hi - lo
    return released
