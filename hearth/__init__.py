"""Hearth: on-device streaming speech synthesis for Qwen3-TTS-12Hz (CustomVoice, Base voice cloning, VoiceDesign)."""

# First of all: nothing Hearth imports may report home (OpenVINO's telemetry is chosen at its import).
from hearth.platform.privacy import block_telemetry  # isort: skip

block_telemetry()

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
