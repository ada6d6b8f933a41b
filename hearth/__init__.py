"""Hearth: on-device streaming speech synthesis for Qwen3-TTS-12Hz (CustomVoice, Base voice cloning, VoiceDesign)."""

from .backends import BackendOptions
from .checkpoint import DEFAULT_MODEL, CheckpointError
from .engine import Audio, AudioChunk, AudioStream, Engine, Generation, InputError, load
from .prompt import ClonedVoice
from .sampling import FrameBudget, SamplingOptions

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
    "load",
]
__version__ = "0.1.0"
