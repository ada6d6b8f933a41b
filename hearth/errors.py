"""Errors every layer raises: bad input, with a message that says what to change."""

from __future__ import annotations

__all__ = ["CONVERT_EXTRA", "ConversionUnavailable", "InputError"]

# What installs the converting tools (torch, onnx, onnxscript, nncf) beside the runtime.
CONVERT_EXTRA = "pip install 'hearth-tts[convert]'"


class InputError(ValueError):
    """A request the engine cannot serve as given; the message says what to change, and `param`
    names the option at fault where there is one ("voice", "language", "seed", "text", "speed", ...:
    the engine's names; a server maps them to its own, e.g. OpenAI's "input" for "text")."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param

    def about(self, param: str) -> InputError:
        """This error, naming `param` unless it names one already (for re-raising)."""
        if self.param is None:
            self.param = param
        return self


class ConversionUnavailable(InputError):
    """The model asked for needs converting, and this install has no converter (the runtime alone):
    load an export made elsewhere (`hearth export`), or install the convert extra."""

    def __init__(self, message: str):
        super().__init__(message, "model")
