"""A voice agent's turn: an LLM's answer spoken while it is being written.

    llm = ChatStream("http://127.0.0.1:11434/v1", "llama3.2", messages)   # OpenAI chat completions, streamed
    report = speak_turn(scheduler, sink, llm, voice="ryan", barge_in=event, seed=7)   # + any speech options
    report.spoken          # what was actually spoken (what goes into the history after a barge-in)

Tokens go into a live scheduler request (`Scheduler.open`, interleaved text mode) as they arrive,
so speech starts after the first words rather than the first sentence. Playback writes 40 ms
blocks; setting `barge_in` stops generation within a frame, closes the LLM stream and silences
the sink within a block. The report times the first LLM token to the first audio, and the gaps:
moments when the sink had played everything it had been given before the answer was over. Where
the machine is slower than real time, audio is held until enough has come that the rest plays
without a gap (`hearth.streaming.pacing`, `playback`).

`ChatStream` is a small client of OpenAI's streamed chat completions (server-sent events) on the
standard library, so that `hearth chat` needs no further package; `close()` from any thread ends it.
"""

from __future__ import annotations

import contextlib
import http.client
import inspect
import json
import logging
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hearth.runtime.scheduler import Request, Scheduler
from hearth.streaming.pacing import Pacer, paced

__all__ = ["BargeIn", "ChatStream", "LLMError", "TurnReport", "chat_url", "speak_turn"]

log = logging.getLogger(__name__)

BLOCK_S = 0.04  # playback granularity: a barge-in is heard within one block
_FADE_S = 0.01


class BargeIn(threading.Event):
    """Set when the user speaks over the agent; remembers when (for the stop time)."""

    at: float | None = None

    def set(self) -> None:
        self.at = time.monotonic()
        super().set()

    def clear(self) -> None:
        self.at = None
        super().clear()


class LLMError(RuntimeError):
    """The LLM endpoint could not be reached or answered with an error; the message says which."""


def chat_url(url: str) -> str:
    """The chat-completions address for a server's base URL (`http://host:port`, `.../v1`, or the full path)."""
    parts = urllib.parse.urlsplit(url if "://" in url else "http://" + url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--llm must be an http(s) URL such as http://127.0.0.1:11434/v1, got {url!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path = (path if path.endswith("/v1") else path + "/v1") + "/chat/completions"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


class ChatStream:
    """One streamed chat completion: iterate it for the answer's text pieces as they come."""

    def __init__(self, url: str, model: str | None, messages: list[dict[str, str]], *, api_key: str | None = None,
                 timeout: float = 60.0, options: dict[str, Any] | None = None):
        self.url = chat_url(url)
        self.model = model
        self.messages = messages
        self.api_key = api_key
        self.timeout = timeout
        self.options = options or {}
        self._conn: http.client.HTTPConnection | None = None
        self._closed = threading.Event()

    def _connect(self) -> http.client.HTTPResponse:
        parts = urllib.parse.urlsplit(self.url)
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.netloc, timeout=self.timeout)
        self._conn = conn
        body: dict[str, Any] = {"messages": self.messages, "stream": True, **self.options}
        if self.model:
            body["model"] = self.model
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            conn.request("POST", parts.path, json.dumps(body).encode(), headers)
            response = conn.getresponse()
        except OSError as e:
            raise LLMError(f"cannot reach the LLM at {self.url}: {e}") from e
        if response.status != 200:
            detail = response.read(2000).decode("utf-8", "replace").strip()
            raise LLMError(f"the LLM at {self.url} answered {response.status} {response.reason}: {detail}")
        return response

    def __iter__(self) -> Iterator[str]:
        if self._closed.is_set():
            return
        response = self._connect()
        try:
            while not self._closed.is_set():
                try:
                    line = response.readline()
                except Exception as e:
                    if self._closed.is_set():  # closed from another thread: whatever the read ran into
                        return
                    raise LLMError(f"the LLM stream broke: {type(e).__name__}: {e}") from e
                if not line:
                    return
                text = line.decode("utf-8", "replace").strip()
                if not text.startswith("data:"):
                    continue  # blank separators, comments, event names
                data = text[5:].strip()
                if data == "[DONE]":
                    return
                try:
                    event = json.loads(data)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get("error"):
                    raise LLMError(f"the LLM reported an error: {event['error']}")
                for choice in event.get("choices") or [] if isinstance(event, dict) else []:
                    piece = (choice.get("delta") or {}).get("content")
                    if isinstance(piece, str) and piece:
                        yield piece
        finally:
            self._closed.set()
            response.close()
            if self._conn is not None:
                self._conn.close()

    def close(self) -> None:
        """End the stream now, from any thread: the socket is shut down (the reading thread, which
        owns the connection, then closes it)."""
        self._closed.set()
        conn = self._conn
        sock = conn.sock if conn is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


@dataclass
class TurnReport:
    answer: str = ""  # everything the LLM wrote
    spoken: str = ""  # what was spoken: the answer, or after a barge-in the part the model had taken in
    first_token_at: float | None = None  # monotonic times
    first_audio_at: float | None = None
    gaps: list[float] = field(default_factory=list)  # seconds of silence inside the answer
    boundary_gaps: list[float] = field(default_factory=list)  # those of them where a sentence began
    audio_s: float = 0.0
    barged_in: bool = False
    stop_s: float | None = None  # from the barge-in to the last sample handed to the sink
    error: str | None = None
    request: Request | None = None

    @property
    def token_to_audio_s(self) -> float | None:
        if self.first_token_at is None or self.first_audio_at is None:
            return None
        return self.first_audio_at - self.first_token_at

    def summary(self) -> str:
        parts = []
        if self.token_to_audio_s is not None:
            parts.append(f"first LLM token to first audio {self.token_to_audio_s:.2f} s")
        parts.append(f"{self.audio_s:.1f} s of audio")
        parts.append(f"{len(self.gaps)} gap{'s' if len(self.gaps) != 1 else ''}"
                     + (f" ({sum(self.gaps):.2f} s in all, longest {max(self.gaps):.2f} s)" if self.gaps else ""))
        if self.barged_in:
            parts.append(f"barge-in: silent after {self.stop_s or 0.0:.3f} s, {len(self.spoken)} of "
                         f"{len(self.answer)} characters spoken")
        if self.error:
            parts.append(f"error: {self.error}")
        return "; ".join(parts)


def speak_turn(scheduler: Scheduler, sink: Any, tokens: Iterable[str], *, voice: str, language: str = "auto",
               barge_in: BargeIn | None = None, on_text: Any = None, playback: str = "auto",
               **options: Any) -> TurnReport:
    """Speak `tokens` (an LLM's answer as it streams) on `sink` while they arrive; see the module.
    `playback`: when audio starts playing (`hearth.streaming.pacing`): "eager" as it comes, "smooth" late
    enough that the rest plays without a gap, "auto" smooth where the machine is slower than real
    time. `options`: the turn's speech options (the scheduler's: seed, max_new_tokens, speed, ...;
    `hearth chat` hands its command line's whole), spoken interleaved unless they say otherwise."""
    report = TurnReport()
    barge_in = barge_in or BargeIn()
    request = scheduler.open(voice, language, **{"text_mode": "interleaved", **options,
                                                 "paced": bool(getattr(sink, "realtime", False))})
    report.request = request

    def write() -> None:
        try:
            for piece in tokens:
                if report.first_token_at is None:
                    report.first_token_at = time.monotonic()
                report.answer += piece
                if on_text is not None:
                    on_text(piece)
                request.push(piece)
                if barge_in.is_set() or request.finished:
                    break
        except Exception as e:  # noqa: BLE001 - reported with the turn; what came is still spoken
            report.error = str(e)
        finally:
            request.end()

    writer = threading.Thread(target=write, name="hearth-llm", daemon=True)
    writer.start()
    block = max(1, int(BLOCK_S * sink.sample_rate))
    played: dict[int, int] = {}  # sentence -> samples handed to the sink
    plays_until: float | None = None  # when the audio given so far has played out (real time)
    encode = scheduler.engine.tokenizer.encode
    told: dict[str, int] = {}  # the answer as tokenized last -> its tokens

    def text_tokens() -> int:
        answer = report.answer
        if answer not in told:
            told.clear()
            told[answer] = len(encode(answer))
        return told[answer]

    pacer = Pacer(playback if getattr(sink, "realtime", False) else "eager", scheduler.rate)  # (a file: as it comes)
    for chunk in paced(request, pacer, text_tokens=text_tokens, stop=barge_in.is_set):
        now = time.monotonic()
        if plays_until is not None and now > plays_until + 0.001:
            report.gaps.append(now - plays_until)
            if chunk.sentence not in played:  # the roll-over into a fresh utterance
                report.boundary_gaps.append(now - plays_until)
        start = max(now, plays_until or now)
        plays_until = start + chunk.duration_s
        samples = chunk.samples
        for k in range(0, len(samples), block):
            if barge_in.is_set():
                _fade_out(sink, samples[k : k + int(_FADE_S * sink.sample_rate)])
                break
            sink.write(samples[k : k + block])
            if report.first_audio_at is None:
                report.first_audio_at = time.monotonic()
            played[chunk.sentence] = played.get(chunk.sentence, 0) + min(block, len(samples) - k)
            report.audio_s += min(block, len(samples) - k) / sink.sample_rate
    if barge_in.is_set():
        _barge(request, tokens)
    if barge_in.is_set():
        report.barged_in = True
        report.stop_s = time.monotonic() - (barge_in.at or time.monotonic())
    writer.join(timeout=10)
    if report.barged_in:
        per_frame = scheduler.engine.samples_per_frame
        taken = [request.text_taken(i, n // per_frame) for i, n in sorted(played.items())]
        report.spoken = " ".join(t for t in taken if t)
    else:
        with contextlib.suppress(Exception):
            sink.drain()
        report.spoken = report.answer.strip()
    return report


def _barge(request: Request, tokens: Iterable[str]) -> None:
    """Stop now: generation (within a frame) and the LLM stream."""
    request.cancel()
    # A stream with a close() that works from any thread (ChatStream) ends now; a plain iterator
    # (a generator cannot be closed while it runs) ends at its next token, when the writer looks.
    if not inspect.isgenerator(tokens):
        close = getattr(tokens, "close", None)
        if close is not None:
            close()


def _fade_out(sink: Any, samples: np.ndarray) -> None:
    if len(samples):
        with contextlib.suppress(Exception):
            sink.write(samples * np.linspace(1.0, 0.0, len(samples), dtype=np.float32))
