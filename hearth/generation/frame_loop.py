"""The frame loop: one utterance's frames from its prompt embeddings, until it ends.

On the torch reference this reproduces the official generation bit for bit (same tensor shapes
per call, same fp32 logits pipeline, same order of random draws: cb0, then cb1..cb15 for each
frame), with one difference by design: a generator per request instead of the global one, and a
runaway guard. The session (caches, the predictor loop, its sampler) belongs to the backend; the
loop asks it for codebook 0 with the history it keeps. Arrays are numpy: no torch here.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np

from hearth.backends import LanguageModel, LMBatch, LMSession
from hearth.checkpoint.config import ModelConfig
from hearth.checkpoint.sampling import DEFAULT_BUDGET, FrameBudget, SamplingOptions
from hearth.frames import FRAME_S
from hearth.reliability import faults

__all__ = ["Audio", "Embeds", "FrameGenerator", "Generation", "GenerationStats", "Outcome", "Step", "Stop",
           "TurnTaking", "Utterance", "step"]

log = logging.getLogger(__name__)


class Embeds(Protocol):
    """The talker's inputs: `PromptEmbeds` (the whole text) or `LiveEmbeds` (text still arriving)."""

    @property
    def prefill(self) -> np.ndarray | None: ...

    @property
    def prefix(self) -> int: ...  # leading prefill positions that depend on voice, language, instruction only

    def prefill_ready(self) -> bool: ...  # False: nothing to speak (or cancelled)

    def started(self) -> bool: ...  # prefill_ready() would not wait

    def watch(self, callback: Callable[[], None]) -> None: ...  # called after each change of the text

    def ready(self, step: int) -> bool: ...  # row(step) would not wait

    def row(self, step: int) -> np.ndarray | None: ...  # None: cancelled

    def final_tokens(self) -> int | None: ...  # text tokens, once the text is complete

    marks: frozenset[str]  # stages where injected faults fire for it (`hearth.reliability.faults`; none outside tests)


class TurnTaking(Protocol):
    """Turn-taking between utterances generated side by side on one machine (the scheduler's)."""

    def take(self) -> bool: ...  # before each frame: wait until this utterance may compute; False: stop

    def waiting(self, idle: bool) -> None: ...  # the utterance waits for text (it computes nothing)


class Batcher(Protocol):
    """What a batched `FrameGenerator` asks of its batcher (`hearth.generation.batch.FrameBatcher`)."""

    def run(self, utterance: Utterance, on_starve: Callable[[], None] | None = None, stop: Stop | None = None,
            turn: TurnTaking | None = None) -> Iterator[np.ndarray]: ...  # its frames, stepped with others'

    def wake(self) -> None: ...  # something a waiting row waits for has changed


@dataclass
class GenerationStats:
    frames: int = 0
    stop_reason: str = ""  # "eos", "max_new_tokens", "frame_budget", "closed", "empty" (live text, none came)
    prefill_s: float = 0.0
    talker_s: float = 0.0
    predictor_s: float = 0.0


class Utterance:
    """One utterance's generation state: its inputs, its language-model session (opened with its
    prompt), the codebook-0 history, the frames made so far and its statistics.

    `step` advances a list of them by one frame each; the solo loop (`FrameGenerator`) and the batcher
    (`hearth.generation.batch.FrameBatcher`) both drive it that way, so the per-frame logic exists once.
    """

    def __init__(
        self,
        config: ModelConfig,
        embeds: Embeds,
        options: SamplingOptions,
        seed: int | None = None,
        budget: FrameBudget | None = DEFAULT_BUDGET,
    ):
        self.embeds = embeds
        self.options = options
        self.seed = seed
        self.budget = budget
        self.max_frames = options.max_new_tokens - 1
        self.stats = GenerationStats()
        self.session: LMSession | None = None
        self.started_at = time.perf_counter()  # when it asked for its first frame (prefill time counts from it)
        self._eos = config.talker.codec_eos_id
        self._history: list[int] = []
        self._cb0 = 0
        self._made = 0
        self._summed: np.ndarray | None = None  # the last frame's summed embedding
        self._budget_frames: int | None = None
        self.hold_at: int | None = None  # make no frame beyond this many (`FrameGenerator.hold_until`)

    @property
    def held(self) -> bool:
        """Its consumer wants no more frames now (`FrameGenerator.hold_until`)."""
        return self.hold_at is not None and self._made >= self.hold_at

    def input_ready(self) -> bool:
        """Whether its next talker input is known (its prompt, or live text's next row), so that
        `step` would not wait for text."""
        if self.session is None:
            return self.embeds.started()
        return self.embeds.ready(self._made - 1)

    def empty_reason(self) -> str:
        """Why an utterance whose prompt never came ends: its text was empty, or it was cancelled."""
        return "empty" if self.embeds.final_tokens() == 0 else "closed"

    def close(self) -> None:
        """Give the session back (idempotent)."""
        if self.session is not None:
            session, self.session = self.session, None
            session.close()

    # -- the parts of a frame, in the order `step` runs them ----------------------------------------

    def talker_input(self, batch: LMBatch) -> tuple[np.ndarray, bool] | str:
        """Its next talker input and whether it is the prompt (the session is opened with it), or
        the reason it ends here. Live text may wait for its row."""
        if self.session is None:
            if not self.embeds.prefill_ready():
                return self.empty_reason()
            prompt = self.embeds.prefill
            assert prompt is not None
            self.session = batch.open(self.options, self.seed, prompt.shape[1], self.embeds.prefix)
            return prompt, True
        assert self._summed is not None
        extra = self.embeds.row(self._made - 1)
        if extra is None:  # live text, cancelled while waiting for it
            return "closed"
        return self._summed + extra, False

    def sampled(self, logits: np.ndarray) -> str | None:
        """Codebook 0 of the next frame from the talker's logits; then why generation ends before
        that frame, or None."""
        assert self.session is not None
        self._cb0 = self.session.sampler.first(logits, self._history)
        made = self._made
        if self._cb0 == self._eos:
            return "eos"
        if made >= self.max_frames:
            return "max_new_tokens"
        if self._budget_frames is None and self.budget is not None:  # known once the text is complete
            tokens = self.embeds.final_tokens()
            self._budget_frames = None if tokens is None else self.budget.frames(tokens)
        if self._budget_frames is not None and made >= self._budget_frames:
            log.warning(
                "runaway guard: no end of speech after %d frames (%.1f s) for %d text tokens; stopping",
                made, made * FRAME_S, self.embeds.final_tokens(),
            )
            return "frame_budget"
        return None

    def framed(self, rest: list[int], summed: np.ndarray) -> np.ndarray:
        """The frame made of codebook 0 and the predictor's codebooks 1..G-1."""
        frame = np.array([self._cb0] + rest, dtype=np.int64)
        self._history.append(self._cb0)
        self._summed = summed
        self._made += 1
        self.stats.frames = self._made
        return frame


Outcome = np.ndarray | str | BaseException  # a frame, the reason the utterance ended, or its failure


@dataclass
class Step:
    """What one `step` did: each utterance's outcome, in order, and how many rows the talker ran
    for (`prompts` of them were prompts)."""

    outcomes: list[Outcome]
    rows: int = 0
    prompts: int = 0


def step(batch: LMBatch, utterances: list[Utterance]) -> Step:
    """One frame of each utterance: its talker input (the prompt, which opens its session, or the
    last frame's embedding plus its next text row), one talker call for all of them, codebook 0
    sampled per utterance and its stopping checked, one predictor call for those that go on.

    An utterance that ends or fails gets its reason or exception as its outcome (tagged with the
    stage it failed at, `faults.stage_of`); the others go on (its session stays open until
    `Utterance.close`). A runtime call that fails as a whole fails every row in it, and only those.
    """
    result = Step([""] * len(utterances))
    t0 = time.perf_counter()
    stepping: list[int] = []
    inputs: list[np.ndarray] = []
    prompts: list[bool] = []
    for i, u in enumerate(utterances):
        try:
            faults.hit("embedding", u.embeds.marks)
            got = u.talker_input(batch)
        except Exception as e:  # noqa: BLE001 - this utterance fails, the others go on
            result.outcomes[i] = faults.tag(e, "embedding")
            continue
        if isinstance(got, str):
            result.outcomes[i] = got
            continue
        stepping.append(i)
        inputs.append(got[0])
        prompts.append(got[1])
    if not stepping:
        return result
    result.rows, result.prompts = len(stepping), sum(prompts)
    logits = _call(
        batch, "talker", [utterances[i] for i in stepping],
        lambda: batch.talker([utterances[i].session for i in stepping], inputs, prompts))  # type: ignore[misc]
    t1 = time.perf_counter()
    going: list[int] = []
    for i, out, prompt in zip(stepping, logits, prompts, strict=True):
        u = utterances[i]
        if prompt:
            u.stats.prefill_s = t1 - u.started_at
        else:
            u.stats.talker_s += t1 - t0
        if isinstance(out, BaseException):
            result.outcomes[i] = faults.tag(out, "talker")
            continue
        try:
            reason = u.sampled(out)
        except Exception as e:  # noqa: BLE001 - as above
            result.outcomes[i] = faults.tag(e, "sampling")
            continue
        if reason is not None:
            result.outcomes[i] = reason
        else:
            going.append(i)
    if not going:
        return result
    predicted = _call(
        batch, "predictor", [utterances[i] for i in going],
        lambda: batch.predict([utterances[i].session for i in going],  # type: ignore[misc]
                              [utterances[i]._cb0 for i in going]))
    t2 = time.perf_counter()
    for i, frame in zip(going, predicted, strict=True):
        u = utterances[i]
        u.stats.predictor_s += t2 - t1
        if isinstance(frame, BaseException):
            result.outcomes[i] = faults.tag(frame, "predictor")
            continue
        try:
            result.outcomes[i] = u.framed(*frame)
        except Exception as e:  # noqa: BLE001 - as above
            result.outcomes[i] = faults.tag(e, "predictor")
    return result


_T = TypeVar("_T")


def _call(batch: LMBatch, stage: str, rows: list[Utterance], call: Callable[[], list[_T | BaseException]]
          ) -> list[_T | BaseException]:
    """A call of `batch` for all `rows`: its per-row results (a row's own failure among them), or,
    when the call fails as a whole, its error for every row: the rows of that call fail, and
    whatever comes after runs as usual. An injected fault (`hearth.reliability.faults`) fails as the batch
    would: the whole call where one runtime call computes every row, else the marked rows alone."""
    try:
        if batch.shared_calls:
            faults.hit(stage, frozenset().union(*(u.embeds.marks for u in rows)))
        out = call()
        if len(out) != len(rows):
            raise RuntimeError(f"the {stage} call returned {len(out)} results for {len(rows)} rows")
    except Exception as e:  # noqa: BLE001 - this call's rows fail, and only they
        return [faults.tag(e, stage)] * len(rows)
    for k, u in enumerate(rows):
        try:
            faults.hit(stage, u.embeds.marks)
        except faults.InjectedFault as e:
            out[k] = e
    return out


class FrameGenerator:
    """Yields frames ([num_code_groups] int64 codes) until EOS, max_new_tokens or the frame budget.

    Backend-neutral: the language model's session holds the caches; codebook 0 is sampled here
    (repetition penalty needs the history), the rest by the session. The session is closed when
    the iterator ends, is closed, or is abandoned.

    Alone, it steps its `Utterance` itself, one frame per iteration (taking its `turn` before each).
    With a `batcher` (`hearth.generation.batch.FrameBatcher`), the batcher's thread steps it together with
    other utterances; iterating then only takes the frames as they come. `frames(...)` says what to
    call when it is about to wait for text and what stops it.
    """

    def __init__(
        self,
        lm: LanguageModel,
        config: ModelConfig,
        embeds: Embeds,
        options: SamplingOptions,
        seed: int | None = None,
        budget: FrameBudget | None = DEFAULT_BUDGET,
        turn: TurnTaking | None = None,
        batcher: Batcher | None = None,
    ):
        self.lm = lm
        self.config = config
        self.utterance = Utterance(config, embeds, options, seed, budget)
        self.turn = turn
        self.batcher = batcher

    @property
    def stats(self) -> GenerationStats:
        return self.utterance.stats

    def hold_until(self, frames: int | None) -> None:
        """Make no frame beyond the first `frames` (None: no bound) until told otherwise: its consumer
        decodes a chunk meanwhile and wants the CPU for it. Alone, the consumer's own thread makes the
        frames, so it pauses by itself; batched, once the row has made that many the batcher leaves it
        out while no other row steps (set before the chunk's last frame is made, so not one frame
        more slips in), and steps it along with rows that go: such a step costs about the same."""
        self.utterance.hold_at = frames
        if self.batcher is not None:
            self.batcher.wake()

    def __iter__(self) -> Iterator[np.ndarray]:
        return self.frames()

    def frames(self, on_starve: Callable[[], None] | None = None, stop: Stop | None = None) -> Iterator[np.ndarray]:
        """The frames. `on_starve` is called before generation waits for text (live text: the frames
        made so far can go out); once `stop` is set no more frames come (stop reason "closed")."""
        u = self.utterance
        if self.batcher is not None:
            yield from self.batcher.run(u, on_starve, stop, self.turn)
            return
        ready = u.embeds.prefill_ready()  # live text: waits for its first token
        if not ready:
            u.stats.stop_reason = u.empty_reason()
            return
        batch = self.lm.batch(1)  # a one-row batch (the compiled backends' from a pool)
        try:
            while True:
                if (stop is not None and stop.is_set()) or (self.turn is not None and not self.turn.take()):
                    u.stats.stop_reason = "closed"
                    return
                if u.session is None:
                    u.started_at = time.perf_counter()
                (outcome,) = step(batch, [u]).outcomes
                if isinstance(outcome, BaseException):
                    raise outcome
                if isinstance(outcome, str):
                    u.stats.stop_reason = outcome
                    return
                yield outcome  # before the next text row is fetched: with live text it may have to wait
                if on_starve is not None and not u.input_ready():
                    on_starve()
        finally:  # also when the consumer abandons the iterator
            u.close()
            batch.close()


class Stop(threading.Event):
    """A stop flag that also calls back whoever waits elsewhere for it (a batcher's consumer waits
    on the batcher's condition, not on this event)."""

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: list[Callable[[], None]] = []
        self._callbacks_lock = threading.Lock()

    def on_set(self, callback: Callable[[], None]) -> None:
        with self._callbacks_lock:
            self._callbacks.append(callback)
        if self.is_set():
            callback()

    def set(self) -> None:
        super().set()
        with self._callbacks_lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            callback()


@dataclass(frozen=True)
class Generation:
    """The codes of one utterance: `codes` [frames, 16] int64, the sampling seed (None when greedy)
    and how generation went (frames, stop reason, stage timings)."""

    codes: np.ndarray
    seed: int | None
    stats: GenerationStats


@dataclass(frozen=True)
class Audio:
    """One utterance's audio (float32 mono in [-1, 1]) and the codes it was decoded from."""

    samples: np.ndarray
    sample_rate: int
    codes: np.ndarray  # [frames, 16] int64
    seed: int | None
    stats: GenerationStats

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate
