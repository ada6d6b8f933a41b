"""Shared fixtures: tiny random checkpoints in the official layout, Hearth engines and official models."""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import importlib
import importlib.util
import json
import locale
import os
import shutil
import signal
import sys
import tempfile
import traceback
import zlib
from pathlib import Path
from typing import NoReturn

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# Tests see neither a developer's `hearth tune` settings nor their model cache: converted models go
# to a private cache for this run (subprocesses inherit both). One cache for the whole run, its
# xdist workers included (they start with this environment): a conversion of the shared tiny
# checkpoints (`_same_for_every_worker`) made by one worker is read by the other.
os.environ["HEARTH_IGNORE_TUNED"] = "1"
# torch's and the BLAS libraries' thread pools one thread wide in every process of the suite (set
# before anything imports them; the processes it starts inherit it): the tiny checkpoints' products
# are too small to share out, and two test workers on two cores would otherwise run four threads.
# test_official_equality alone on an idle 2-vCPU machine: 86 s on one thread, 114 s on two. The
# runtimes' own pools (OpenVINO, ONNX Runtime) keep their sizes: their thread plans are tested.
for _pool in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_pool, "1")
_MADE_HERE: list[str] = []  # temporary folders this process made, removed when it ends (`pytest_unconfigure`)
if "PYTEST_XDIST_WORKER" not in os.environ or "HEARTH_TEST_RUN_CACHE" not in os.environ:
    os.environ["HEARTH_TEST_RUN_CACHE"] = tempfile.mkdtemp(prefix="hearth-test-cache-")
    _MADE_HERE.append(os.environ["HEARTH_TEST_RUN_CACHE"])
os.environ["HEARTH_CACHE"] = os.environ["HEARTH_TEST_RUN_CACHE"]

# Every Python process of the session runs under the audit hook of tests/audit/sitecustomize.py (this
# one loads it now, the processes it starts through PYTHONPATH): a fork without exec, or a connection
# or name lookup for anything but loopback, anywhere in the suite, fails it at the end
# (`nothing_left_the_machine`). `CI=true` would hide OpenVINO's and NNCF's telemetry from it (both
# stay silent in CI jobs), so it is taken out of the environment; the tests that must not skip in CI
# read HEARTH_REQUIRE_ALL_TESTS instead.
AUDIT_DIR = Path(__file__).parent / "audit"
AUDIT_LOG = Path(tempfile.mkdtemp(prefix="hearth-test-audit-")) / "audit.log"
os.environ["HEARTH_AUDIT_LOG"] = str(AUDIT_LOG)
_MADE_HERE.append(str(AUDIT_LOG.parent))
os.environ["PYTHONPATH"] = os.pathsep.join([str(AUDIT_DIR), *filter(None, [os.environ.get("PYTHONPATH")])])
if os.environ.pop("CI", "").lower() in ("1", "true", "yes"):
    os.environ["HEARTH_REQUIRE_ALL_TESTS"] = "1"
for name in ("TF_BUILD", "JENKINS_URL"):
    os.environ.pop(name, None)
_spec = importlib.util.spec_from_file_location("hearth_test_audit", AUDIT_DIR / "sitecustomize.py")
assert _spec is not None and _spec.loader is not None
_spec.loader.exec_module(importlib.util.module_from_spec(_spec))

from hearth.listen.units import import_nagisa  # noqa: E402
from hearth.tools.random_checkpoint import tiny_configs, write_checkpoint  # noqa: E402

# qwen-asr imports nagisa, whose library sets flush-to-zero and denormals-are-zero in the thread
# that loads it: loaded here on a thread of its own first, so that no test's thread computes
# without subnormals (hypothesis refuses to generate floats then).
with contextlib.suppress(ImportError):
    import_nagisa()

# A test process that ends on a signal says which, and where every thread was: pytest's fault
# handler covers the fatal ones (SIGSEGV, SIGFPE, SIGABRT, SIGBUS, SIGILL); these end a process as
# silently otherwise (an xdist worker would only be "not properly terminated"). So does os._exit.
# Written to the process's own stderr, which `make test` leaves uncaptured (--capture=sys).
for _sig in ("SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGXCPU", "SIGXFSZ", "SIGSYS", "SIGTRAP"):
    if hasattr(signal, _sig):
        faulthandler.register(getattr(signal, _sig), file=sys.__stderr__, all_threads=True, chain=True)
_real_exit = os._exit


def _loud_exit(code: int) -> NoReturn:
    print(f"os._exit({code}) in test process {os.getpid()}:", file=sys.__stderr__)
    traceback.print_stack(file=sys.__stderr__)
    faulthandler.dump_traceback(file=sys.__stderr__, all_threads=True)
    _real_exit(code)


os._exit = _loud_exit


@pytest.fixture(scope="session", autouse=True)
def nothing_left_the_machine():
    """After the whole session: no process of it forked without exec or reached past loopback."""
    yield
    lines = AUDIT_LOG.read_text(encoding="utf-8").splitlines() if AUDIT_LOG.exists() else []
    records = [json.loads(line) for line in lines]
    assert records == [], f"the suite's processes forked or reached past loopback: {records[:20]}"


def _process_state() -> dict[str, object]:
    """What a library can change for the whole process (or this thread) without saying so: the
    locale (OpenVINO's cached compiles on two threads left it "C": hearth.platform.process.locale_kept),
    the floating-point mode (nagisa's DyNet sets flush-to-zero: hearth.listen.units.import_nagisa),
    and the handlers of the signals that end a process."""
    import numpy as np

    made = np.array([1e-30], np.float32) * np.float32(1e-10)  # a subnormal result: 0 under flush-to-zero
    read = np.array([1e-39], np.float32) * np.float32(1e10)  # a subnormal operand: 0 under denormals-are-zero
    return {"locale": locale.setlocale(locale.LC_ALL), "subnormals": bool(made[0] != 0 and read[0] != 0),
            **{name: signal.getsignal(getattr(signal, name)) for name in ("SIGINT", "SIGTERM", "SIGHUP")}}


@pytest.fixture(autouse=True)
def process_state_stays():
    """Each test leaves the process as it found it (see `_process_state`); one that does not fails,
    and the locale is put back so that later tests are not blamed."""
    before = _process_state()
    yield
    after = _process_state()
    if after != before:
        locale.setlocale(locale.LC_ALL, str(before["locale"]))
        changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
        pytest.fail(f"the test changed the process's state: {changed}")


def _same_for_every_worker(directory: Path) -> Path:
    """Every worker writes the same bytes for a session checkpoint; with one modification time as
    well, its converted models have one cache key (`conversions.cache_entry`), so they are made once.
    The time is the file's own (from a hash of its bytes): files of one size and tensor table but
    other values (tiny06's and tiny17's speech tokenizers) must not share a key, and the same file in
    two checkpoints (tiny06's speech tokenizer in base06) shares its conversions."""
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            stamp = (1_700_000_000 + zlib.crc32(path.read_bytes()) % 10**8) * 10**9
            os.utime(path, ns=(stamp, stamp))
    return directory


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> Path:
    """0.6B-style: talker and predictor of the same width, instruct ignored. Its speech tokenizer has
    the encoder, as a released one has (base_dir shares it)."""
    config, codec = tiny_configs("0b6", hidden=64, layers=2)
    return _same_for_every_worker(write_checkpoint(tmp_path_factory.mktemp("tiny06"), config, codec, seed=11,
                                                   speech_encoder=True))


@pytest.fixture(scope="session")
def tiny17_dir(tmp_path_factory) -> Path:
    """1.7B-style: a talker wider than its predictor (small_to_mtp_projection), instruct honoured."""
    config, codec = tiny_configs("1b7", hidden=96, layers=2, predictor_hidden=48)
    return _same_for_every_worker(write_checkpoint(tmp_path_factory.mktemp("tiny17"), config, codec, seed=23))


@pytest.fixture(scope="session")
def base_dir(tmp_path_factory, tiny_dir) -> Path:
    """A tiny Base checkpoint (voice cloning: speaker encoder and speech-tokenizer encoder included).
    Its speech tokenizer is tiny06's, as every released model of a size ships the same one: their
    vocoders are converted once."""
    from hearth.tools.random_checkpoint import as_model_type

    config, codec = tiny_configs("0b6", hidden=64, layers=2)
    base = as_model_type(config, "base", speaker_channels=32)
    out = write_checkpoint(tmp_path_factory.mktemp("base06"), base, codec, seed=31)
    shutil.copyfile(tiny_dir / "speech_tokenizer/model.safetensors", out / "speech_tokenizer/model.safetensors")
    return _same_for_every_worker(out)


@pytest.fixture(scope="session")
def tiny_export(tiny_dir, tmp_path_factory) -> Path:
    """`hearth export` of the tiny checkpoint for both runtimes: what a board without torch loads."""
    from hearth.convert.export_model import export_model

    out = tmp_path_factory.mktemp("export") / "export"
    export_model(str(tiny_dir), out, "default", ["openvino", "onnxruntime"])
    return out


@pytest.fixture(scope="session")
def engine(tiny_dir):
    """The torch reference: what the parity tests compare with the official package."""
    import hearth

    return hearth.load(tiny_dir, backend="torch")


def default_backend_here() -> str:
    """The backend `hearth.load` should choose on this machine, by the rule docs/backends-and-presets.md
    states (written out here, not asked of Hearth): the language model on ONNX Runtime on ARM and on
    x86 without AVX-512, whose quantized kernels are the faster ones there; OpenVINO elsewhere."""
    import platform

    if platform.machine() in ("aarch64", "arm64"):
        return "onnxruntime"
    cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    flags = next((line.split(":", 1)[1].split() for line in cpuinfo.splitlines() if line.startswith("flags")), [])
    return "openvino" if "avx512f" in flags else "onnxruntime"


DEFAULT_BACKEND = default_backend_here()


@pytest.fixture(scope="session")
def fast_engine(tiny_dir):
    """What `hearth.load` gives by default on this machine: int8 weights on OpenVINO (AVX-512) or on
    ONNX Runtime (AVX2, ARM). The servers load the same, so their audio is compared with this one's."""
    import hearth

    engine = hearth.load(tiny_dir)
    assert engine.options.backend == DEFAULT_BACKEND and engine.options.weights == "int8", engine.options
    return engine


@pytest.fixture(scope="session", params=["torch", "compiled"])
def any_engine(request, engine, fast_engine):
    """Each backend in turn (the torch reference, then this machine's default), for tests of
    behaviour every backend must share."""
    return engine if request.param == "torch" else fast_engine


def _loaded(checkpoint: str, how: str, **kwargs: object):
    """A session fixture: `how` ("module:name.attr", imported when first asked for) called on the
    checkpoint the fixture named `checkpoint` writes, with `kwargs`."""

    @pytest.fixture(scope="session")
    def loaded(request):
        module, _, name = how.partition(":")
        load = functools.reduce(getattr, name.split("."), importlib.import_module(module))
        return load(request.getfixturevalue(checkpoint), **kwargs)

    return loaded


engine17 = _loaded("tiny17_dir", "hearth:load", backend="torch")
official = _loaded("tiny_dir", "official:load_official")
official17 = _loaded("tiny17_dir", "official:load_official")


@pytest.fixture(scope="session")
def reference_tokenizer(tiny_dir):
    from official import reference_tokenizer

    return reference_tokenizer(tiny_dir)


# Hearing (Qwen3-ASR, Qwen3-ForcedAligner): tiny checkpoints written by qwen-asr's own classes, and by
# Hearth's writer (hearth.tools.random_asr_checkpoint); see tests/official_asr.py.
@pytest.fixture(scope="session")
def asr_dir(tmp_path_factory) -> Path:
    """0.6B-style (the head is the token embeddings), 2-second attention windows (26 positions)."""
    from official_asr import write_official_checkpoint

    from hearth.tools.random_asr_checkpoint import tiny_asr_config

    config = tiny_asr_config("asr", hidden=48, n_window_infer=200)
    return _same_for_every_worker(write_official_checkpoint(tmp_path_factory.mktemp("asr06"), config, seed=41))


@pytest.fixture(scope="session")
def asr17_dir(tmp_path_factory) -> Path:
    """1.7B-style (a head of its own), the released 8-second windows."""
    from official_asr import write_official_checkpoint

    from hearth.tools.random_asr_checkpoint import tiny_asr_config

    config = tiny_asr_config("asr", hidden=64, layers=3, tie=False, n_window_infer=800)
    return _same_for_every_worker(write_official_checkpoint(tmp_path_factory.mktemp("asr17"), config, seed=43))


@pytest.fixture(scope="session")
def aligner_dir(tmp_path_factory) -> Path:
    """A forced aligner of 400 classes (32 s at 80 ms), 2-second attention windows."""
    from official_asr import write_official_checkpoint

    from hearth.tools.random_asr_checkpoint import tiny_asr_config

    config = tiny_asr_config("aligner", hidden=48, n_window_infer=200, classify_num=400)
    return _same_for_every_worker(write_official_checkpoint(tmp_path_factory.mktemp("align"), config, seed=47))


@pytest.fixture(scope="session")
def own_asr_dir(tmp_path_factory) -> Path:
    from hearth.tools.random_asr_checkpoint import tiny_asr_config, write_asr_checkpoint

    return _same_for_every_worker(write_asr_checkpoint(tmp_path_factory.mktemp("ownasr"), tiny_asr_config("asr"), 5))


@pytest.fixture(scope="session")
def own_aligner_dir(tmp_path_factory) -> Path:
    from hearth.tools.random_asr_checkpoint import tiny_asr_config, write_asr_checkpoint

    config = tiny_asr_config("aligner", classify_num=400)
    return _same_for_every_worker(write_asr_checkpoint(tmp_path_factory.mktemp("ownalign"), config, 7))


listener = _loaded("asr_dir", "hearth.listen:Listener.load", backend="torch")  # the reference: equal to qwen-asr
official_asr = _loaded("asr_dir", "official_asr:load_official_asr")
aligner = _loaded("aligner_dir", "hearth.listen:Aligner.load", backend="torch")
official_aligner = _loaded("aligner_dir", "official_asr:load_official_aligner")


@pytest.fixture(scope="module")
def server(tiny_dir):
    """A `hearth serve` process on the tiny checkpoint (one per test module), stopped cleanly."""
    from servers import Server

    with Server(tiny_dir) as s:
        yield s


# The tiers. `make test-fast` (for working) runs what needs neither a process of its own nor a
# compiled backend: the tokenizer, the torch engine against the official package, streaming,
# live text, scheduling and the service in this process, and one OpenVINO smoke test
# (`pytest.mark.smoke`). `make test` (CI) runs everything.
PROCESS_MODULES = {  # they start `hearth` commands or servers
    "test_bench", "test_chat", "test_cli", "test_cluster", "test_page", "test_privacy", "test_serve",
    "test_serve_voices", "test_speak_soak", "test_speaker", "test_voice_cli", "test_websocket", "test_wyoming",
    "test_fuzz", "test_clients", "test_schema", "test_live_fuzz", "test_fault_matrix", "test_runtime_only",
    "test_release", "test_text_surfaces", "test_listen_surfaces", "test_locale", "test_realtime_transcription",
}
COMPILED_MODULES = {"test_compiled_backends", "test_onnxruntime", "test_openvino"}
COMPILED_FIXTURES = {"fast_engine", "ov_fp32", "ov_int8", "base_fp32", "openvino_int8"}
COMPILED_PARAMS = {"openvino", "onnxruntime", "compiled"}


def _needs_compiled_backend(item: pytest.Item) -> bool:
    if item.module.__name__ in COMPILED_MODULES or COMPILED_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and any(str(v) in COMPILED_PARAMS for v in callspec.params.values())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("smoke"):
            continue
        if item.module.__name__ in PROCESS_MODULES or _needs_compiled_backend(item):
            item.add_marker(pytest.mark.slow)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's converted models (hundreds of MB) and audit log go with the process that made them
    (the run's cache with the one that started the workers, after they have ended)."""
    for directory in _MADE_HERE:
        shutil.rmtree(directory, ignore_errors=True)
