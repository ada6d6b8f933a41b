"""`hearth speak`: a resident speaker driven line by line from a terminal or a pipe.

Each line is queued as it arrives. Commands start with a slash:

    /voice NAME      switch voice (no reload)       /language LANG   switch language
    /stop            stop speaking now (so do an empty line and Ctrl-C)
    /voices          list voices and languages      /quit            leave (so does Ctrl-D)

Progress and timings go to stderr; with `--sink raw` the audio is the only thing on stdout.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time

from .audio import NullSink, RawSink, Speaker, WavWriter, default_output_available
from .engine import InputError, load
from .service import Job, Service

__all__ = ["speak_lines"]

HELP = "commands: /voice NAME, /language LANG, /stop, /voices, /quit; an empty line or Ctrl-C stops speech"


def _say(msg: str) -> None:
    print(f"hearth: {msg}", file=sys.stderr, flush=True)


def _open_sink(args: argparse.Namespace, sample_rate: int):
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
    if kind == "speaker":
        return Speaker(sample_rate)
    if kind == "wav":
        if args.out is None:
            raise InputError("--sink wav needs --out FILE.wav")
        return WavWriter(args.out, sample_rate, args.sample_format)
    if kind == "raw":
        return RawSink(sys.stdout.buffer, sample_rate, args.sample_format)
    return NullSink(sample_rate)


def _report(job: Job) -> None:
    spoken = sum(s.frames for s in job.sentences if s.status == "done") * 0.08
    first = f"{job.first_audio_s:.2f} s" if job.first_audio_s is not None else "-"
    line = (f"[{job.id}] {job.status}: {len(job.sentences)} sentence(s), {spoken:.1f} s of audio, "
            f"first audio after {first}")
    if job.underruns:
        line += f", {job.underruns} underrun(s)"
    _say(line)
    for s in job.errors:
        _say(f"[{job.id}] sentence {s.index + 1} failed: {s.error}")


def _watch(jobs: list[Job], stop: threading.Event) -> None:
    """Reports each job when it ends, in order, from a side thread (stdin reading blocks the main one)."""
    reported = 0
    while not stop.is_set() or reported < len(jobs):
        if reported < len(jobs) and jobs[reported].wait(0.05):
            _report(jobs[reported])
            reported += 1
        elif reported >= len(jobs):
            time.sleep(0.05)


def speak_lines(args: argparse.Namespace) -> int:
    from .cli import backend_options

    engine = load(args.model, **backend_options(args))
    sink = _open_sink(args, engine.sample_rate)
    voice, language = engine.check_voice(args.voice), engine.check_language(args.language)
    jobs: list[Job] = []
    done = threading.Event()
    watcher = threading.Thread(target=_watch, args=(jobs, done), name="hearth-speak-watch", daemon=True)
    with Service(engine, sink, voice=voice, language=language, max_new_tokens=args.max_new_tokens) as service:
        watcher.start()
        if sys.stdin.isatty():
            _say(f"ready: voice {voice}, language {language}. {HELP}")
        stream = sys.stdin.buffer
        while True:
            try:
                raw = stream.readline()
            except KeyboardInterrupt:
                if service.idle():
                    break
                service.cancel()
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
                    service.cancel()
                elif command == "/quit":
                    service.cancel()
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
                    jobs.append(service.say(line, voice, language, seed=args.seed))
            except InputError as e:
                _say(f"error: {e}")
        try:
            for job in list(jobs):
                job.wait()
        except KeyboardInterrupt:
            service.cancel()
        done.set()
        watcher.join()
    if hasattr(sink, "close"):
        sink.close()
    return 0
