"""Turn-taking between sentences generated side by side on one machine, frame by frame.

Running sentences compute in the order they started: before each frame a sentence waits until
every earlier one is idle (waits for text) or has stopped. One that waits for text computes
nothing, so it lets the next compute. Turns have a condition of their own: a frame turn neither
waits on nor wakes the scheduler's lock; only a change of idleness is told to the scheduler (its
next sentence may start when every running one waits for text).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Turn", "Turns"]


class Turns:
    """The running sentences' turns. `on_idle_change` is called (outside this lock) when a sentence
    starts or stops waiting for text."""

    def __init__(self, on_idle_change: Callable[[], None]):
        self._cond = threading.Condition()
        self._turns: list[Turn] = []  # in the order the sentences started
        self._tickets = 0
        self._on_idle_change = on_idle_change

    def join(self) -> Turn:
        """A new sentence's turn: after every sentence running now."""
        with self._cond:
            self._tickets += 1
            turn = Turn(self, self._tickets)
            self._turns.append(turn)
            return turn

    def leave(self, turn: Turn) -> None:
        """The sentence has ended: the ones after it no longer wait for it."""
        with self._cond:
            turn.stopped = True
            if turn in self._turns:
                self._turns.remove(turn)
            self._cond.notify_all()

    def computing(self) -> int:
        """Running sentences not waiting for text (a stopped one counts until it has left)."""
        with self._cond:
            return sum(1 for t in self._turns if not t.idle)

    def running(self) -> int:
        with self._cond:
            return len(self._turns)


class Turn:
    """One sentence's turns (what `generate.TurnTaking` asks for). Fields are guarded by its `Turns`' lock."""

    def __init__(self, turns: Turns, ticket: int):
        self._turns = turns
        self.ticket = ticket
        self.idle = False
        self.stopped = False

    def take(self) -> bool:
        """Before each frame: wait until every earlier sentence is idle or stopped; False once this
        one is stopped."""
        turns = self._turns
        with turns._cond:
            while not self.stopped:
                if all(t.idle or t.stopped for t in turns._turns if t.ticket < self.ticket):
                    return True
                turns._cond.wait()
            return False

    def waiting(self, idle: bool) -> None:
        """The sentence starts (True) or stops (False) waiting for text."""
        turns = self._turns
        with turns._cond:
            changed = self.idle != idle
            self.idle = idle
            turns._cond.notify_all()
        if changed:
            turns._on_idle_change()

    def stop(self) -> None:
        """No more turns: `take` returns False from now on (also to a thread waiting in it)."""
        with self._turns._cond:
            self.stopped = True
            self._turns._cond.notify_all()
