"""Errors every layer raises: bad input, with a message that says what to change."""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(ValueError):
    """A request the engine cannot serve as given; the message says what to change."""
