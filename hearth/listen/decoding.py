"""Greedy decoding, as transformers' `generate` does it for qwen-asr: one prefill of the prompt, then
the highest-scoring token each step (the first of equals), stopping after a stop token (which is
kept, and dropped later with the other special tokens) or after `max_new_tokens` tokens.

The loop only drives a session of any backend (`hearth.backends.asr_interfaces.AsrSession`);
what a session holds is the backend's business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from hearth.backends.asr_interfaces import AsrModel
from hearth.listen.prompt import Prompt
from hearth.listen.reuse import HeldDecoder

__all__ = ["greedy_tokens"]


def greedy_tokens(model: AsrModel, prompt: Prompt, audio: np.ndarray, stop_ids: frozenset[int],
                  max_new_tokens: int, held: HeldDecoder | None = None) -> Iterator[int]:
    """The generated tokens, as they are chosen. The session is closed when the tokens run out or
    the caller stops early (closing the generator); with `held`, the held one is used and kept
    (a live segment's, `hearth.listen.reuse`)."""
    if max_new_tokens <= 0:
        return
    capacity = len(prompt.ids) + max_new_tokens
    if held is not None:
        logits = held.start(prompt, audio, capacity)
        yield from _chosen(logits, held.step, stop_ids, max_new_tokens)
        return
    session = model.session(capacity)
    try:
        logits = session.prefill(prompt.ids, audio, prompt.audio_at)
        yield from _chosen(logits, session.step, stop_ids, max_new_tokens)
    finally:
        session.close()


def _chosen(logits: np.ndarray, step: Callable[[int], np.ndarray], stop_ids: frozenset[int],
            max_new_tokens: int) -> Iterator[int]:
    for count in range(1, max_new_tokens + 1):
        token = int(np.argmax(logits))
        yield token
        if token in stop_ids or count == max_new_tokens:
            return
        logits = step(token)
