"""The `hearth` command. Stdout carries only data (JSON, audio); logs and messages go to stderr.

Exit codes: 0 success, 1 unexpected failure, 2 bad input or unusable checkpoint, 130 interrupted
(Ctrl-C), 143 terminated (SIGTERM). Whatever happens, the command ends: every engine it loads is
closed on the way out (its worker threads stop, and they are daemons besides), a WAV file being
written is finished or removed, and every process it started has been stopped and waited for.
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import signal
import sys
import threading
from typing import NoReturn

import hearth
from hearth.checkpoint.loading import CheckpointError
from hearth.cli import chat, export, listen, measure, serve, speak, speech, text, voice, wyoming_server
from hearth.cli.arguments import apply_cpu_mask
from hearth.errors import InputError

__all__ = ["EXIT_FAILURE", "EXIT_OK", "EXIT_TERMINATED", "EXIT_USAGE", "Terminated", "main", "parser", "run"]

log = logging.getLogger("hearth")

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143


class Terminated(BaseException):
    """SIGTERM, raised in the main thread: the command unwinds as it does for Ctrl-C (files finished
    or removed, engines closed, child processes stopped and waited for) instead of dying on the spot,
    which would leave a child (a benchmark's subprocess) running and a `.part` file behind. A
    BaseException, so that no `except Exception` and no `hearth speak`'s Ctrl-C (which only stops
    the speech) holds it up. The servers install their own handlers (a graceful stop, exit 0)."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"hearth: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


# `hearth --help` lists the commands in these sections, the ones people speak and serve with first.
SECTIONS = (
    ("speak, listen and serve", ("say", "speak", "chat", "transcribe", "serve", "wyoming", "cluster")),
    ("voices, text and models", ("voices", "voice", "normalize", "export", "codes")),
    ("measure and check", ("bench", "doctor", "tune", "accuracy", "soak", "loadtest")),
)


class _Commands:
    """The subcommands' registry handed to each module's `add_parsers`: `add_parser` as argparse's,
    each one-line help kept for the sectioned list in `hearth --help` (argparse has one flat list)."""

    def __init__(self, sub: argparse._SubParsersAction) -> None:
        self._sub = sub
        self.helps: dict[str, str] = {}

    def add_parser(self, name: str, *, help: str, **kw: object) -> argparse.ArgumentParser:  # noqa: A002
        self.helps[name] = help
        return self._sub.add_parser(name, description=help, **kw)  # type: ignore[arg-type]

    def sections(self) -> str:
        listed = [name for _, names in SECTIONS for name in names]
        if sorted(listed) != sorted(self.helps):
            raise RuntimeError(f"hearth.cli.SECTIONS lists {sorted(listed)}, the commands are {sorted(self.helps)}")
        width = max(map(len, listed)) + 2
        return "\n\n".join(f"{title}:\n" + "\n".join(f"  {n:<{width}}{self.helps[n]}" for n in names)
                           for title, names in SECTIONS)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hearth", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="On-device speech with Qwen3-TTS (CustomVoice, Base voice cloning, VoiceDesign) and "
                                "Qwen3-ASR.")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging (and tracebacks) on stderr")
    p.add_argument("--version", action="version", version=f"hearth {hearth.__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND",
                           help="one of the commands below; `hearth COMMAND --help` for its options")
    commands = _Commands(sub)
    for module in (speech, speak, listen, measure, serve, wyoming_server, chat, voice, text, export):
        module.add_parsers(commands)
    p.epilog = commands.sections()
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, stream=sys.stderr,
                        format="hearth: %(message)s")
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main else None
    try:
        return _run(args)
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace) -> int:
    try:
        apply_cpu_mask(args)  # --cpu: from here on in a process that sees that CPU
        return args.run(args)
    except (InputError, CheckpointError) as e:
        print(f"hearth: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("hearth: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("hearth: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        return EXIT_FAILURE  # the reader went away; nothing more to say
    except Exception as e:  # noqa: BLE001 - the last line of defence: a message and an exit code
        if args.verbose:
            log.exception("unexpected failure")
        print(f"hearth: error: {type(e).__name__}: {e} (unexpected; run with -v for details)", file=sys.stderr)
        return EXIT_FAILURE


def run() -> NoReturn:
    """The console entry point: `main`, then an exit that skips the interpreter's teardown.

    Everything the command owns is closed by then (engines, streams, files). What remains are
    native thread pools, and tearing those down races with their threads: under CPU load about one
    run in ten of `hearth codes --backend torch` aborted after its work was done ("terminate called
    without an active exception", exit 134), with or without this session's changes. Leaving at
    once avoids that; logs and standard streams are flushed first."""
    _utf8_streams()
    code = main()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or EXIT_FAILURE
    os._exit(code)


def _utf8_streams() -> None:
    """The standard streams in UTF-8 whatever the locale: a command's data (transcripts, normalized
    text, JSON) is the same bytes under LC_ALL=C as under C.UTF-8, a message naming "°C" does not
    fail to print, and lines typed to `hearth speak` or `hearth chat` are read as UTF-8. (Python
    switches to UTF-8 by itself in the C locale unless PYTHONUTF8=0; another encoding needs this.)"""
    streams = ((sys.stdin, "replace"), (sys.stdout, "surrogateescape"), (sys.stderr, "backslashreplace"))
    for stream, errors in streams:
        if isinstance(stream, io.TextIOWrapper) and stream.encoding.replace("-", "").lower() != "utf8":
            stream.reconfigure(encoding="utf-8", errors=errors)
