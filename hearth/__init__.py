"""Hearth: on-device streaming speech synthesis for Qwen3-TTS-12Hz CustomVoice."""

from .backends import BackendOptions
from .checkpoint import DEFAULT_MODEL, CheckpointError
from .engine import Audio, Codes, Engine, InputError, load
from .generate import FrameBudget, SamplingOptions

__all__ = [
    "DEFAULT_MODEL",
    "Audio",
    "BackendOptions",
    "CheckpointError",
    "Codes",
    "Engine",
    "FrameBudget",
    "InputError",
    "SamplingOptions",
    "load",
]
__version__ = "0.1.0"
