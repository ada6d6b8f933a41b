"""Failure stages, and faults injected at them to test that a failure stays with its request.

Each place where one request's work can fail has a stage name; a failure caught there is counted
under it (`/metrics`, `/health`) and carries it (`stage_of`). The same names arm injected faults:

    HEARTH_FAULTS=talker,vocoder hearth serve ...     (or HEARTH_FAULTS=all)

raises `InjectedFault` at an armed stage for every utterance whose text holds that stage's marker
(`marker("talker")`: "fault_talker"), and nowhere else: other requests run as they
would. Read once, when this module is imported (`inject` arms stages in a running process, for
tests); unset (always, outside tests) every check is one test of an empty set.

Stages, in the order a sentence meets them:

- "text_feed": the batcher reads a row's live text (is its next row known?)
- "embedding": an utterance's next talker input (its prompt, or its next text row)
- "talker", "predictor": the language model's calls (a shared call in a batch: every row in it)
- "vocoder": decoding a chunk
- "channel": a chunk landing in its request's channel
- "batcher", "scheduler", "vocoder_thread": the worker thread itself dies (supervision's test)
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator

__all__ = ["STAGES", "InjectedFault", "active", "hit", "inject", "marker", "marks", "stage_of", "tag"]

STAGES = ("text_feed", "embedding", "talker", "predictor", "vocoder", "channel", "batcher", "scheduler",
          "vocoder_thread")


def _armed(value: str) -> frozenset[str]:
    names = frozenset(n.strip() for n in value.split(",") if n.strip())
    if names == {"all"}:
        return frozenset(STAGES)
    unknown = sorted(names - set(STAGES))
    if unknown:
        raise ValueError(f"HEARTH_FAULTS names unknown stages {', '.join(unknown)}; known: {', '.join(STAGES)}")
    return names


_ARMED: set[str] = set(_armed(os.environ.get("HEARTH_FAULTS", "")))


class InjectedFault(RuntimeError):
    """A fault injected at a stage (`HEARTH_FAULTS`)."""

    def __init__(self, stage: str):
        super().__init__(f"injected fault at stage {stage!r}")
        self.stage = stage


def marker(stage: str) -> str:
    """The text that makes an armed stage fail: a lower-case word the text front end leaves as it
    is in every language (it spelled "FAULT" out as an initialism)."""
    return f"fault_{stage}"


def active() -> bool:
    """Whether any stage is armed (never outside tests)."""
    return bool(_ARMED)


def marks(text: str) -> frozenset[str]:
    """The armed stages whose marker `text` holds (none, always, when no stage is armed)."""
    if not _ARMED:
        return frozenset()
    return frozenset(s for s in _ARMED if re.search(rf"(?<!\w){re.escape(marker(s))}(?!\w)", text))  # (whole
    # words: "fault_vocoder" is not in "fault_vocoder_thread")


def hit(stage: str, stages: frozenset[str]) -> None:
    """Raise `stage`'s fault if it is among an utterance's marked `stages`."""
    if stage in stages:
        raise tag(InjectedFault(stage), stage)


@contextlib.contextmanager
def inject(*stages: str) -> Iterator[None]:
    """Arm `stages` (besides HEARTH_FAULTS's) in this process while the block runs; for tests."""
    before = set(_ARMED)
    _ARMED.update(_armed(",".join(stages)))
    try:
        yield
    finally:
        _ARMED.clear()
        _ARMED.update(before)


def tag(error: BaseException, stage: str) -> BaseException:
    """`error`, marked as having happened at `stage` (the first stage that tags it wins)."""
    if getattr(error, "hearth_stage", None) is None:
        error.hearth_stage = stage  # type: ignore[attr-defined]
    return error


def stage_of(error: BaseException) -> str:
    """Where `error` happened ("other" when no stage caught it)."""
    return getattr(error, "hearth_stage", None) or "other"
