"""`hearth chat`: a local voice agent. Each line typed goes to an OpenAI-compatible LLM (Ollama,
llama.cpp's server, vLLM...); its answer is spoken while it is written, and printed on stdout.

A line typed while Hearth speaks (an empty one too) is a barge-in: speech stops within a frame,
the LLM stream is closed, and only what was spoken goes into the conversation; a non-empty line is
then the next question. Per turn, stderr reports the time from the LLM's first token to the first
audio, and any gaps in the speech.
"""

from __future__ import annotations

import argparse
import logging
import os
import queue
import sys
import threading
from pathlib import Path
from typing import Any

from hearth.cli import arguments
from hearth.engine import load
from hearth.errors import InputError
from hearth.runtime.agent import BargeIn, ChatStream, chat_url, speak_turn
from hearth.runtime.scheduler import Scheduler
from hearth.streaming.sinks import SAMPLE_FORMATS, DeviceSink, WavWriter, default_output_available

__all__ = ["add_parsers"]

log = logging.getLogger("hearth")


def add_parsers(sub: Any) -> None:
    chat = sub.add_parser("chat", help="talk with a local LLM: its answers are spoken while they are written")
    chat.add_argument("--llm", required=True,
                      help="the LLM server's OpenAI-compatible URL, e.g. http://127.0.0.1:11434/v1 (Ollama), "
                           "http://127.0.0.1:8080/v1 (llama.cpp)")
    chat.add_argument("--llm-model", default=None, help="the LLM's model name (default: the server's first model)")
    chat.add_argument("--llm-key", default=None,
                      help="API key for the LLM server (default: $HEARTH_LLM_KEY, else $OPENAI_API_KEY)")
    chat.add_argument("--system", default="You are a helpful voice assistant. Answer briefly, in plain spoken "
                                          "sentences, without lists or markdown.",
                      help="the system prompt")
    chat.add_argument("--voice", default=None, help="speaker (default vivian; a stored voice with a Base checkpoint)")
    arguments.add_voice_alias(chat)
    arguments.add_resident_options(chat)  # every answer's: the language, seed, speed, ... (hearth.options.FIELDS)
    arguments.add_lexicon(chat)
    arguments.add_playback(chat)
    chat.add_argument("--out", type=Path, default=None,
                      help="write the speech to a WAV file instead of the speaker")
    chat.add_argument("--sample-format", choices=SAMPLE_FORMATS, default="s16")
    arguments.add_model_group(chat)
    chat.set_defaults(run=_chat)


def _say(msg: str) -> None:
    print(f"hearth: {msg}", file=sys.stderr, flush=True)


def _lines(into: queue.Queue[str | None]) -> None:
    """stdin, line by line, into a queue (None at its end); a side thread, as reading blocks."""
    for line in sys.stdin:
        into.put(line.rstrip("\n"))
    into.put(None)


def _first_model(url: str, key: str | None) -> str:
    """The first model the LLM server lists (GET .../v1/models)."""
    import json
    import urllib.error
    import urllib.request

    models = chat_url(url).removesuffix("/chat/completions") + "/models"
    request = urllib.request.Request(models, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            data = json.load(r).get("data") or []
    except (OSError, ValueError, urllib.error.URLError) as e:
        raise InputError(f"cannot list the LLM's models at {models} ({e}); give one with --llm-model") from e
    if not data or not isinstance(data[0], dict) or not data[0].get("id"):
        raise InputError(f"the LLM server at {models} lists no models; give one with --llm-model")
    return str(data[0]["id"])


def _chat(args: argparse.Namespace) -> int:
    arguments.check_backend(args)
    arguments.check_voice_language(args)
    try:
        chat_url(args.llm)
    except ValueError as e:
        raise InputError(str(e)) from e
    if args.out is not None:
        arguments.check_output(args.out)
    elif not default_output_available():
        raise InputError("no audio output device (or sounddevice is not installed: pip install 'hearth-tts[play]'); "
                         "write the speech to a file instead: --out chat.wav")
    key = args.llm_key or os.environ.get("HEARTH_LLM_KEY") or os.environ.get("OPENAI_API_KEY")
    model = args.llm_model or _first_model(args.llm, key)
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_lines, args=(lines,), name="hearth-stdin", daemon=True).start()
    with (load(args.model, **arguments.load_flags(args)) as engine,
          Scheduler(engine, max_active=1, max_waiting=1) as scheduler):
        sink = (WavWriter(args.out, engine.sample_rate, args.sample_format) if args.out is not None
                else DeviceSink(engine.sample_rate))
        _say(f"ready: talking with {model} at {chat_url(args.llm)}; type a line (Ctrl-D ends)")
        with sink:
            turns = _converse(scheduler, sink, lines, args, model, key)
    _say(f"{turns} turn{'s' if turns != 1 else ''}")
    return 0


def _converse(scheduler: Scheduler, sink: Any, lines: queue.Queue[str | None], args: argparse.Namespace, model: str,
              key: str | None) -> int:
    history: list[dict[str, str]] = [{"role": "system", "content": args.system}] if args.system else []
    options = arguments.option_values(args)  # every answer's request options, handed whole to the agent
    turns = 0
    line = lines.get()
    while line is not None:
        if not line.strip():
            line = lines.get()
            continue
        turns += 1
        history.append({"role": "user", "content": line.strip()})
        llm = ChatStream(args.llm, model, list(history), api_key=key)
        barge = BargeIn()
        result: dict[str, Any] = {}

        def turn(llm: ChatStream = llm, barge: BargeIn = barge, result: dict[str, Any] = result) -> None:
            try:
                result["report"] = speak_turn(scheduler, sink, llm, voice=args.voice, barge_in=barge,
                                              on_text=_print, playback=args.playback, **options)
            except Exception as e:  # noqa: BLE001 - this turn failed; the conversation goes on
                result["error"] = e

        speaking = threading.Thread(target=turn, name="hearth-turn", daemon=True)
        speaking.start()
        line = None
        ended = False  # stdin ended during the turn: finish it, then stop
        while speaking.is_alive():
            try:
                new = lines.get(timeout=0.02)
            except queue.Empty:
                continue
            if new is None:
                ended = True
                continue
            barge.set()  # the user spoke over the answer
            line = new
            break
        speaking.join()
        print(flush=True)
        report = result.get("report")
        if report is None:
            error = result.get("error")
            _say(f"turn {turns} failed: {error}")
            history.pop()
        else:
            if report.error:
                _say(f"turn {turns}: the LLM stream ended early: {report.error}")
            if report.spoken:
                history.append({"role": "assistant", "content": report.spoken})
            elif not report.answer:
                history.pop()  # nothing was said: the question goes unanswered
            _say(f"turn {turns}: {report.summary()}")
        if line is None and not ended:
            line = lines.get()
    return turns


def _print(piece: str) -> None:
    sys.stdout.write(piece)
    sys.stdout.flush()
