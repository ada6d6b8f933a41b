"""Batched streams: several utterances stepped together, frame by frame, on one thread.

On a CPU one stream's frame is bound by memory bandwidth: the talker's weights are read once per
frame and the predictor's fifteen times, while the cores mostly wait. Rows stepped together share
those reads. The batcher loops: it takes every row that can compute its next frame (its prompt,
or its next text row, is known, and its consumer has room), runs the talker once for all of them
(a new row's prompt rides along: it joins at the next frame boundary), samples each row's
codebook 0, and runs the predictor once for all. A row leaves as soon as it ends, and the next
waiting utterance takes its place (continuous batching). A row that waits for text or for its
consumer is simply left out of the next call; nobody waits for it.

Each row keeps its own session (caches, position), sampling generator, history and frame budget,
and a frame is computed by `generate.step`, as it is for an utterance alone. So a row's codes are the ones it would have
alone whenever the backend's batch computes each row as it would alone (the torch reference's
does; OpenVINO's batched kernels round differently, see `hearth bench --streams`).

A failure stays with its row: anything raised for one row (reading its text, its input, its
sampling) ends that row with the error, and the others go on in the same step; a runtime call that
fails as a whole fails the rows of that call (`generate.step`), not the rows that come after. If
the batcher's thread dies anyway (a bug in the batcher itself), its `Supervisor` fails the rows it
was stepping, starts it again with a fresh batch, and serves the waiting rows and new ones.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator

import numpy as np

from hearth.backends import LanguageModel, LMBatch
from hearth.generation.frame_loop import Stop, TurnTaking, Utterance, step
from hearth.reliability import faults
from hearth.reliability.health import Health, Supervisor

__all__ = ["FrameBatcher"]

log = logging.getLogger(__name__)


class _Row:
    """One utterance in the batcher. Fields are guarded by the batcher's lock, except the
    utterance's own state, which only the batcher's thread touches once the row is queued."""

    def __init__(self, utterance: Utterance, turn: TurnTaking | None):
        self.utterance = utterance
        self.turn = turn
        self.frames: deque[np.ndarray] = deque()  # made, not yet taken by the consumer
        self.done = False  # no more frames will be made (the stop reason is in the utterance's stats)
        self.error: BaseException | None = None
        self.abandoned = False  # the consumer has gone
        self.idle = False  # waiting for text (told to the utterance's turn)
        self.starving = False  # waiting for text, and the consumer not yet told


class FrameBatcher:
    """Steps up to `max_rows` utterances together (see the module). `run(utterance, ...)` is what a
    batched `FrameGenerator` iterates; rows beyond `max_rows` wait, in order, for a place.

    `ahead_frames` bounds the frames made but not taken per row: a consumer that is slow (or busy
    decoding) costs the others nothing, its row just sits out until it has taken some.
    """

    def __init__(self, lm: LanguageModel, max_rows: int, ahead_frames: int = 10, health: Health | None = None):
        if max_rows < 1:
            raise ValueError("max_rows must be at least 1")
        self.lm = lm
        self.max_rows = max_rows
        self.ahead_frames = max(1, ahead_frames)
        self.health = health if health is not None else Health()
        self._cond = threading.Condition()
        self._waiting: deque[_Row] = deque()
        self._rows: list[_Row] = []
        self._closed = False
        self._supervisor: Supervisor | None = None
        self.calls = 0  # talker calls made (with `rows_stepped`: the mean batch size)
        self.rows_stepped = 0
        self.joined_mid_batch = 0  # rows whose prompt went in one call with other rows' steps

    # -- the consumer's side (the thread iterating a batched FrameGenerator) ---------------------------

    def run(self, utterance: Utterance, on_starve: Callable[[], None] | None = None, stop: Stop | None = None,
            turn: TurnTaking | None = None) -> Iterator[np.ndarray]:
        """The utterance's frames as the batcher makes them. `on_starve`: called when it waits for
        text (the frames made so far can go out); `stop`: once set, no more frames (stop reason
        "closed"); `turn`: told when the utterance waits for text (it lets others compute)."""
        row = _Row(utterance, turn)
        utterance.embeds.watch(self._wake)
        if stop is not None:
            stop.on_set(self._wake)
        with self._cond:
            if self._closed:
                raise RuntimeError("the batcher is closed")
            if self.health.fatal is not None:
                raise RuntimeError(f"the batcher is not running: {self.health.fatal}")
            utterance.started_at = time.perf_counter()
            self._waiting.append(row)
            if self._supervisor is None:
                self._supervisor = Supervisor("batcher", self._loop, self.health, self._died)
                self._supervisor.start()
            self._cond.notify_all()
        try:
            while True:
                frame = None
                with self._cond:
                    while True:
                        if row.frames:
                            frame = row.frames.popleft()
                            self._cond.notify_all()  # room: the row may compute again
                            break
                        if row.error is not None:
                            raise row.error
                        if row.done:
                            return
                        if stop is not None and stop.is_set():
                            utterance.stats.stop_reason = "closed"
                            return
                        if row.starving:
                            row.starving = False
                            break
                        self._cond.wait()
                if frame is None:  # waiting for text: the frames made so far go out now
                    if on_starve is not None:
                        on_starve()
                    continue
                yield frame
        finally:
            with self._cond:
                row.abandoned = True
                self._cond.notify_all()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def wake(self) -> None:
        """Something a row waits on changed (its consumer let it go on): look again."""
        self._wake()

    def close(self) -> None:
        """End every row (its consumer sees the end, stop reason "closed") and stop the thread."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            supervisor = self._supervisor
        if supervisor is not None:
            supervisor.stop()
            if supervisor.thread is not threading.current_thread():
                supervisor.thread.join(timeout=30)
        self._end_all()  # (rows queued while no thread ran: between a death and its restart)

    def rows(self) -> int:
        """Rows being stepped now (waiting ones not counted)."""
        with self._cond:
            return len(self._rows)

    # -- the batcher's thread --------------------------------------------------------------------------

    def _loop(self) -> None:
        """The batcher's thread (supervised): steps rows until closed. Raises only on a bug of its own."""
        batch = self.lm.batch(self.max_rows)
        try:
            while self._cycle(batch):
                pass
        finally:
            if self._closed:
                self._end_all()
            batch.close()

    def _end_all(self) -> None:
        """Every row ends (stop reason "closed"), its session closed."""
        with self._cond:
            for row in [*self._rows, *self._waiting]:
                if not row.done:
                    stats = row.utterance.stats
                    stats.stop_reason = stats.stop_reason or "closed"
                    row.done = True
                self._close_session(row)
            self._rows.clear()
            self._waiting.clear()
            self._cond.notify_all()

    def _died(self, error: BaseException) -> None:
        """The thread died (a bug here, not a row's failure): the rows it was stepping fail with
        the error; the waiting ones stay queued for the next thread."""
        faults.tag(error, "batcher")
        with self._cond:
            for row in self._rows:
                row.error = error
                row.done = True
                self._close_session(row)
            self._rows.clear()
            self._cond.notify_all()

    def _cycle(self, batch: LMBatch) -> bool:
        """One step of every row that can take one; False once closed."""
        while True:
            told: list[tuple[_Row, bool]] = []
            with self._cond:
                if self._closed:
                    return False
                self._retire()
                while self._waiting and len(self._rows) < self.max_rows:
                    row = self._waiting.popleft()
                    if not row.abandoned:
                        self._rows.append(row)
                faults.hit("batcher", frozenset().union(*(row.utterance.embeds.marks for row in self._rows)))
                work, riders = [], []
                for row in list(self._rows):
                    try:
                        state = self._state(row)
                    except Exception as e:  # noqa: BLE001 - this row fails, the others go on
                        self._fail(row, faults.tag(e, "text_feed"))
                        continue
                    waits_for_text = state == "text"
                    if waits_for_text != row.idle:
                        row.idle = waits_for_text
                        told.append((row, waits_for_text))
                        if waits_for_text:
                            row.starving = True
                            self._cond.notify_all()
                    if state == "go":
                        work.append(row)
                    elif state == "held":
                        riders.append(row)
                if work:  # a step costs about the same for a few more rows (it reads the weights once):
                    work += riders  # held rows ride along while others step, and wait while none does
                if not work and not told:
                    self._cond.wait()
            for row, idle in told:  # outside the lock: a turn takes the scheduler's lock
                if row.turn is not None:
                    try:
                        row.turn.waiting(idle)
                    except Exception as e:  # noqa: BLE001 - as above
                        self._end(row, error=faults.tag(e, "text_feed"))
                        if row in work:
                            work.remove(row)
            if work:
                self._step(batch, work)
                return True

    def _state(self, row: _Row) -> str:
        """Under the lock: "go" (can compute its next frame), "held" (could, but its consumer asked
        for no more now: it rides along with rows that go), "text" (waits for text) or "full" (its
        consumer has not taken enough)."""
        if row.utterance.session is not None and len(row.frames) >= self.ahead_frames:
            return "full"
        if row.utterance.session is not None and row.utterance.held:
            return "held" if row.utterance.input_ready() else "full"
        return "go" if row.utterance.input_ready() else "text"

    def _retire(self) -> None:
        """Under the lock: rows whose consumer has gone leave (their sessions close)."""
        for row in [r for r in self._rows if r.abandoned]:
            self._rows.remove(row)
            self._close_session(row)

    def _close_session(self, row: _Row) -> None:
        try:
            row.utterance.close()
        except Exception:  # noqa: BLE001 - closing must not take the others down
            log.exception("closing a row's session failed")

    def _end(self, row: _Row, reason: str | None = None, error: BaseException | None = None) -> None:
        """A row ends (its stop reason, or its own failure); the others go on."""
        with self._cond:
            if error is not None:
                self._fail(row, error)
                return
            row.utterance.stats.stop_reason = reason or "closed"
            row.done = True
            if row in self._rows:
                self._rows.remove(row)
            self._close_session(row)
            self._cond.notify_all()

    def _fail(self, row: _Row, error: BaseException) -> None:
        """Under the lock: the row ends with its own failure (its consumer raises it)."""
        row.error = error
        row.done = True
        if row in self._rows:
            self._rows.remove(row)
        self._close_session(row)
        self._cond.notify_all()

    def _step(self, batch: LMBatch, work: list[_Row]) -> None:
        try:
            done = step(batch, [row.utterance for row in work])
        except Exception as e:  # noqa: BLE001 - `step` catches its rows' failures; this is its own: its rows fail
            faults.tag(e, "batch_step")
            for row in work:
                self._end(row, error=e)
            return
        if done.rows:
            self.calls += 1
            self.rows_stepped += done.rows
            if 0 < done.prompts < done.rows:
                self.joined_mid_batch += done.prompts
        ended: list[tuple[_Row, str | BaseException]] = []
        with self._cond:
            for row, outcome in zip(work, done.outcomes, strict=True):
                if isinstance(outcome, np.ndarray):
                    row.frames.append(outcome)
                else:
                    ended.append((row, outcome))
            self._cond.notify_all()
        for row, why in ended:
            if isinstance(why, BaseException):
                self._end(row, error=why)
            else:
                self._end(row, why)
