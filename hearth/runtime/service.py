"""The resident speaker in one object: a scheduler of its own and a player on one sink.

    with Service(engine, DeviceSink(engine.sample_rate), voice="ryan", language="english") as service:
        job = service.say("First sentence. Second sentence.", seed=1)
        job.wait()        # job.sentences: status, error, frames, seed of each; job.first_audio_s
        service.cancel()  # silence now; queued requests are dropped

A convenience over `hearth.runtime.scheduler.Scheduler` and `hearth.runtime.player.Player` for a process that has
one speaker and nothing else; servers give each client a request of the shared scheduler instead.
Its keywords beyond its own are every request's speech options, as the player's.
"""

from __future__ import annotations

from typing import Any

from hearth.engine import Engine
from hearth.runtime.player import Player, PlayerRequest, Sink
from hearth.runtime.scheduler import MAX_REQUEST_CHARS, Scheduler, SentenceResult
from hearth.text.prompt import Speaker

__all__ = ["MAX_REQUEST_CHARS", "Job", "SentenceResult", "Service", "Sink"]

Job = PlayerRequest


class Service(Player):
    def __init__(self, engine: Engine, sink: Sink, *, voice: Speaker = "vivian", language: str = "auto",
                 keep_codes: bool = False, max_queued: int = 64, playback: str = "auto", **options: Any):
        super().__init__(Scheduler(engine, max_active=1, max_waiting=max_queued), sink, voice=voice,
                         language=language, keep_codes=keep_codes, owns_scheduler=True, playback=playback, **options)
