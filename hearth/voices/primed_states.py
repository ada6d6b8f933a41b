"""Cloned voices' primed vocoder states: a state that has heard a voice's reference codes, decoded
once per reference (a 10 s reference is 125 frames of vocoder work), kept (the last few in memory;
on disk where the backend keeps states), and forked for every utterance in that voice."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["PrimedStates", "prime_on_disk"]

_KEPT = 8  # cloned voices whose primed vocoder state is kept in memory


def _primed(vocoder: Any, codes: np.ndarray) -> Any:  # noqa: ANN401 - a backend's vocoder and state
    """A vocoder state that has heard a cloned voice's reference codes: read from disk where the
    backend keeps states (the compiled vocoders: once per machine), else decoded (and then kept there)."""
    key = _reference_key(codes).hex()
    load, save = getattr(vocoder, "load_state", None), getattr(vocoder, "save_state", None)
    state = load(key) if load is not None else None
    if state is None:
        state = vocoder.start()
        vocoder.decode(codes, state)
        if save is not None:
            save(state, key)
    return state


def prime_on_disk(vocoder: Any, codes: np.ndarray) -> bool:  # noqa: ANN401 - a backend's vocoder
    """Decode a cloned voice's reference with `vocoder` and keep the state on disk, as an engine's
    first utterance in that voice would (False: this vocoder keeps no states on disk)."""
    if not hasattr(vocoder, "save_state"):
        return False
    _primed(vocoder, codes)
    return True


def _reference_key(codes: np.ndarray) -> bytes:
    """What a cloned voice's primed vocoder state is kept under: its reference codes' digest."""
    return hashlib.sha256(np.ascontiguousarray(codes, np.int64).tobytes()).digest()[:16]


class PrimedStates:
    """The primed states of one engine's vocoder, the last `_KEPT` used kept in memory."""

    def __init__(self, vocoder: Any):  # noqa: ANN401 - a backend's vocoder
        self.vocoder = vocoder
        self._states: OrderedDict[bytes, Any] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, codes: np.ndarray) -> Callable[[], Any]:
        """A function making a fresh vocoder state that has heard these reference codes (for the
        vocoder's worker: the first call decodes the reference, later ones fork the kept state)."""
        key = _reference_key(codes)
        vocoder = self.vocoder

        def start() -> Any:  # noqa: ANN401 - the backend's vocoder state
            with self._lock:
                primed = self._states.get(key)
                if primed is not None:
                    self._states.move_to_end(key)
            if primed is None:
                primed = _primed(vocoder, codes)
                with self._lock:
                    self._states[key] = primed
                    while len(self._states) > _KEPT:
                        self._states.popitem(last=False)
            return vocoder.fork(primed)

        return start

    def forget(self, codes: np.ndarray | None = None) -> None:
        """Drop the states kept in memory, and the one of `codes` kept on disk."""
        with self._lock:
            self._states.clear()
        drop = getattr(self.vocoder, "drop_state", None)
        if codes is not None and drop is not None:
            drop(_reference_key(codes).hex())
