"""Greedy decoding, as transformers' `generate` does it for qwen-asr: one prefill of the prompt, then
the highest-scoring token each step (the first of equals), stopping after a stop token (which is
kept, and dropped later with the other special tokens) or after `max_new_tokens` tokens.

The loop only drives a session of any backend (`hearth.backends.asr_interfaces.AsrSession`);
what a session holds is the backend's business.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from hearth.backends.asr_interfaces import AsrModel
from hearth.listen.prompt import Prompt

__all__ = ["greedy_tokens"]


def greedy_tokens(model: AsrModel, prompt: Prompt, audio: np.ndarray, stop_ids: frozenset[int],
                  max_new_tokens: int) -> Iterator[int]:
    """The generated tokens, as they are chosen. The session is closed when the tokens run out or
    the caller stops early (closing the generator)."""
    if max_new_tokens <= 0:
        return
    session = model.session(len(prompt.ids) + max_new_tokens)
    try:
        logits = session.prefill(prompt.ids, audio, prompt.audio_at)
        for count in range(1, max_new_tokens + 1):
            token = int(np.argmax(logits))
            yield token
            if token in stop_ids or count == max_new_tokens:
                return
            logits = session.step(token)
    finally:
        session.close()
