"""Hearth: on-device streaming speech synthesis for Qwen3-TTS-12Hz (CustomVoice, Base voice cloning, VoiceDesign)."""

# First of all: nothing Hearth imports may report home (OpenVINO's telemetry is chosen at its import).
from hearth.platform.privacy import block_telemetry  # isort: skip

block_telemetry()

import importlib  # noqa: E402
import importlib.abc  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402
from types import ModuleType  # noqa: E402
from typing import Any  # noqa: E402

from hearth.backends import BackendOptions  # noqa: E402
from hearth.checkpoint.loading import DEFAULT_MODEL, CheckpointError  # noqa: E402
from hearth.checkpoint.sampling import FrameBudget, SamplingOptions  # noqa: E402
from hearth.engine import Audio, AudioChunk, AudioStream, Engine, Generation, load  # noqa: E402
from hearth.errors import InputError  # noqa: E402
from hearth.options import SpeechOptions  # noqa: E402
from hearth.text.prompt import ClonedVoice  # noqa: E402

__all__ = [
    "DEFAULT_MODEL",
    "Audio",
    "AudioChunk",
    "AudioStream",
    "BackendOptions",
    "CheckpointError",
    "ClonedVoice",
    "Engine",
    "FrameBudget",
    "Generation",
    "InputError",
    "SamplingOptions",
    "SpeechOptions",
    "load",
]
__version__ = "0.1.0"

# The resident runtime, imported on first use (`import hearth` stays light): `hearth.Scheduler` ...
_RUNTIME = {"Busy": "hearth.runtime.scheduler", "Scheduler": "hearth.runtime.scheduler",
            "Player": "hearth.runtime.player", "Service": "hearth.runtime.service",
            "DeviceSink": "hearth.streaming.sinks", "NullSink": "hearth.streaming.sinks",
            "RawSink": "hearth.streaming.sinks", "WavWriter": "hearth.streaming.sinks"}
__all__ += sorted(_RUNTIME)


def __getattr__(name: str) -> Any:  # noqa: ANN401 - whichever class is named
    if name in _RUNTIME:
        return getattr(importlib.import_module(_RUNTIME[name]), name)
    raise AttributeError(f"module 'hearth' has no attribute {name!r}")


# Modules the Python API documented at the package's top before it was laid out by concern: the
# old paths import the new modules themselves (`from hearth.scheduler import Scheduler` goes on working).
MOVED = {"hearth.scheduler": "hearth.runtime.scheduler", "hearth.service": "hearth.runtime.service",
         "hearth.player": "hearth.runtime.player", "hearth.request": "hearth.runtime.request",
         "hearth.audio": "hearth.streaming.sinks", "hearth.sentences": "hearth.text.sentences",
         "hearth.pacing": "hearth.streaming.pacing", "hearth.stretch": "hearth.streaming.stretch"}


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:  # noqa: ANN401
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        pass  # the new module ran when it was imported


sys.meta_path.append(_Moved())
