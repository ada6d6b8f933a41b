"""`hearth speak` (a resident speaker driven line by line) and `hearth soak` (one speaker, many sentences).

`hearth speak` queues each line as it arrives. Commands start with a slash:

    /voice NAME      switch voice (no reload)       /language LANG   switch language
    /stop            stop speaking now (so do an empty line and Ctrl-C)
    /voices          list voices and languages      /quit            leave (so does Ctrl-D)

Progress and timings go to stderr; with `--sink raw` the audio is the only thing on stdout.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

from hearth.cli import arguments
from hearth.engine import Engine, load
from hearth.errors import InputError
from hearth.frames import FRAME_S
from hearth.runtime.player import PlayerRequest
from hearth.runtime.scheduler import Busy
from hearth.runtime.service import Service
from hearth.streaming.sinks import SAMPLE_FORMATS, DeviceSink, NullSink, RawSink, WavWriter, default_output_available

__all__ = ["add_parsers"]

HELP = "commands: /voice NAME, /language LANG, /stop, /voices, /quit; an empty line or Ctrl-C stops speech"


def add_parsers(sub: Any) -> None:
    speak = sub.add_parser("speak", help="speak each line typed or piped in (Ctrl-C or an empty line stops)")
    speak.add_argument("--voice", default=None, help="speaker (default vivian; a stored voice with a Base checkpoint)")
    arguments.add_voice_alias(speak)
    arguments.add_resident_options(speak)  # every line's: the language, seed, speed, ... (hearth.options.FIELDS)
    speak.add_argument("--sink", choices=("speaker", "wav", "raw", "null"), default=None,
                       help="where audio goes (default: the speaker if there is one, else raw PCM on a pipe)")
    speak.add_argument("--out", type=Path, default=None, help="the WAV file, with --sink wav")
    speak.add_argument("--sample-format", choices=SAMPLE_FORMATS, default="s16")
    arguments.add_lexicon(speak)
    arguments.add_playback(speak)
    arguments.add_model_group(speak)
    speak.set_defaults(run=_speak)

    soak = sub.add_parser("soak", help="speak many sentences in one process and check it stays correct and flat")
    soak.add_argument("--sentences", type=arguments.count(), default=300)
    soak.add_argument("--idle", type=arguments.seconds(allow_zero=True), default=0.0,
                      help="seconds of silence between sentences")
    soak.add_argument("--max-new-tokens", type=arguments.count(), default=None)
    soak.add_argument("--realtime", action="store_true", help="consume audio at playback speed")
    soak.add_argument("--duration", type=arguments.seconds(allow_zero=False), default=None,
                      help="stop submitting after this many seconds")
    soak.add_argument("--json", action="store_true")
    arguments.add_model_group(soak)
    soak.set_defaults(run=_soak)


def _say(msg: str) -> None:
    print(f"hearth: {msg}", file=sys.stderr, flush=True)


def _sink_kind(args: argparse.Namespace) -> str:
    """The sink `speak` will use, decided (and checked) before the model loads."""
    kind = args.sink
    if kind is None:
        if default_output_available():
            kind = "speaker"
        elif not sys.stdout.isatty():
            kind = "raw"
        else:
            raise InputError(
                "no audio output device (or sounddevice is not installed: pip install 'hearth-tts[play]'); "
                "pipe raw audio to a player instead: hearth speak --sink raw | aplay -f S16_LE -r 24000 -c 1"
            )
    if kind == "wav":
        if args.out is None:
            raise InputError("--sink wav needs --out FILE.wav")
        arguments.check_output(args.out)
    elif args.out is not None:
        raise InputError(f"--out is for --sink wav; the {kind} sink writes no file")
    return kind


def _open_sink(kind: str, args: argparse.Namespace, sample_rate: int) -> Any:
    if kind == "speaker":
        return DeviceSink(sample_rate)
    if kind == "wav":
        return WavWriter(args.out, sample_rate, args.sample_format)
    if kind == "raw":
        return RawSink(sys.stdout.buffer, sample_rate, args.sample_format)
    return NullSink(sample_rate)


def _report(request: PlayerRequest) -> None:
    spoken = sum(s.frames for s in request.sentences if s.status == "done") * FRAME_S
    first = f"{request.first_audio_s:.2f} s" if request.first_audio_s is not None else "-"
    line = (f"[{request.number}] {request.status}: {len(request.sentences)} sentence(s), {spoken:.1f} s of audio, "
            f"first audio after {first}")
    if request.underruns:
        line += f", {request.underruns} underrun(s)"
    _say(line)
    for s in request.errors:
        _say(f"[{request.number}] sentence {s.index + 1} failed: {s.error}")


def _watch(requests: list[PlayerRequest], stop: threading.Event) -> None:
    """Reports each request when it ends, in order, from a side thread (reading stdin blocks the main one)."""
    reported = 0
    while not stop.is_set() or reported < len(requests):
        if reported < len(requests):
            if requests[reported].wait(0.05):
                _report(requests[reported])
                reported += 1
        else:
            stop.wait(0.05)


def _speak(args: argparse.Namespace) -> int:
    arguments.check_backend(args)
    arguments.check_voice_language(args)
    kind = _sink_kind(args)
    with load(args.model, **arguments.load_flags(args)) as engine:
        sink = _open_sink(kind, args, engine.sample_rate)
        with sink:
            _speak_lines(engine, sink, args)
    return 0


def _speak_lines(engine: Engine, sink: Any, args: argparse.Namespace) -> None:
    options = arguments.option_values(args)  # every line's request options, handed whole to the service
    voice, language = engine.check_voice(args.voice), engine.check_language(options.pop("language"))
    requests: list[PlayerRequest] = []
    done = threading.Event()
    watcher = threading.Thread(target=_watch, args=(requests, done), name="hearth-speak-watch", daemon=True)
    with Service(engine, sink, voice=voice, language=language, playback=args.playback, **options) as player:
        watcher.start()
        if sys.stdin.isatty():
            _say(f"ready: voice {voice}, language {language}. {HELP}")
        try:
            while True:
                try:
                    raw = sys.stdin.buffer.readline()
                except KeyboardInterrupt:
                    if player.idle():
                        break
                    player.cancel()
                    _say("stopped")
                    continue
                if not raw:
                    break  # end of input: let queued speech finish
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as e:
                    _say(f"skipped a line that is not valid UTF-8 (byte {e.start}); send UTF-8 text")
                    continue
                command, _, rest = line.strip().partition(" ")
                try:
                    if not line.strip() or command == "/stop":
                        player.cancel()
                    elif command == "/quit":
                        player.cancel()
                        break
                    elif command == "/voice":
                        voice = engine.check_voice(rest)
                        _say(f"voice {voice}")
                    elif command == "/language":
                        language = engine.check_language(rest)
                        _say(f"language {language}")
                    elif command in ("/voices", "/help"):
                        _say(f"voices: {', '.join(engine.voices)}; languages: {', '.join(engine.languages)}. {HELP}")
                    elif command.startswith("/") and len(command) > 1 and command[1:].isalpha():
                        _say(f"unknown command {command}. {HELP}")
                    else:
                        requests.append(player.say(line, voice, language))
                except (InputError, Busy) as e:
                    _say(f"error: {e}")
            for request in list(requests):
                request.wait()
        except KeyboardInterrupt:
            player.cancel()
        finally:
            done.set()
            watcher.join(timeout=5)


def _soak(args: argparse.Namespace) -> int:
    from hearth.tools.soak import SoakSettings, main_soak

    arguments.check_backend(args)
    settings = SoakSettings(sentences=args.sentences, idle_s=args.idle, max_new_tokens=args.max_new_tokens,
                            realtime=args.realtime, duration_s=args.duration)
    with load(args.model, **arguments.load_flags(args)) as engine:
        return main_soak(engine, settings, args.json)
