"""Arguments shared by the `hearth` commands, and the checks that run before any model loads.

Every value a user can get wrong is checked here, in the parser or just after it, so that a typo
costs a second, not a model load: numbers by their argparse types, voices and languages against
the checkpoint's config (a JSON read), output paths against the file system, backend options by
`hearth.backends.settings.backend_options`.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hearth.backends import BACKENDS, LM_WEIGHTS, VOCODER_PRECISIONS
from hearth.checkpoint.config import ModelConfig
from hearth.checkpoint.loading import DEFAULT_MODEL, open_checkpoint
from hearth.engine import MAX_TEXT_TOKENS
from hearth.errors import InputError
from hearth.options import FIELDS

__all__ = [
    "MODEL_GROUP",
    "add_model_group",
    "apply_cpu_mask",
    "add_generation",
    "add_option_flags",
    "add_playback",
    "add_resident_options",
    "add_model",
    "backend_flags",
    "check_backend",
    "check_output",
    "check_voice_language",
    "add_voice_alias",
    "load_flags",
    "option_values",
    "count",
    "read_text",
    "seconds",
    "seed",
]


def count(minimum: int = 1) -> Callable[[str], int]:
    """An argparse type: a whole number of at least `minimum`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = "count"
    return parse


def seconds(allow_zero: bool) -> Callable[[str], float]:
    """An argparse type: a finite number of seconds, positive (or zero when allowed)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
        if not value == value or value in (float("inf"), float("-inf")) or value < 0 or (value == 0 and not allow_zero):
            raise argparse.ArgumentTypeError(f"must be {'zero or more' if allow_zero else 'more than zero'}, "
                                             f"got {text}")
        return value

    parse.__name__ = "seconds"
    return parse


def speed(text: str) -> float:
    """An argparse type: a speaking rate, 0.25 .. 4.0."""
    from hearth.streaming.stretch import check_speed

    try:
        return check_speed(float(text))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_playback(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument("--playback", choices=("auto", "smooth", "eager"), default="auto",
                   help="start at once (eager), or held until the rest plays without a gap (smooth; auto: "
                        "where the machine is slower than real time)")


def seed(text: str) -> int:
    """An argparse type: a sampling seed, 0 .. 2**64 - 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"must lie between 0 and 2**64 - 1, got {value}")
    return value


def add_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"checkpoint directory or hub id (default {DEFAULT_MODEL})")


MODEL_GROUP = "model and backend (the same on every command that loads a model; see `hearth doctor`)"


def add_model_group(p: argparse.ArgumentParser, model_default: str | None = DEFAULT_MODEL,
                    model_help: str | None = None) -> None:
    """The one argument group of every command that loads a model: which checkpoint, on which
    backend and precisions, with how many threads, as on which CPU. `model_default` None: the
    command makes its own (bench: a random checkpoint of the true shapes)."""
    g = p.add_argument_group(MODEL_GROUP)
    g.add_argument("--model", default=model_default,
                   help=model_help or f"checkpoint directory or hub id (default {model_default})")
    g.add_argument("--fast", action="store_true",
                   help="the fastest measured: 4-bit LM weights on ONNX Runtime (drift: hearth accuracy --fast)")
    g.add_argument("--small", action="store_true",
                   help="the least memory (a 1 GB board): --fast, vocoder products in 8 bits (hearth accuracy --small)")
    g.add_argument("--backend", choices=BACKENDS, default=None,
                   help="openvino (fast path), onnxruntime (faster without AVX-512), torch (bit-exact reference)")
    g.add_argument("--weights", choices=LM_WEIGHTS, default=None,
                   help="LM weights: int8 (default), int4 (4-bit layers), mix (talker int8, predictor 4-bit), fp16")
    g.add_argument("--vocoder", choices=VOCODER_PRECISIONS, default=None,
                   help="vocoder: OpenVINO bf16 (default), fp16, fp32; onnxruntime (fp32), onnxruntime-int8; torch")
    g.add_argument("--device", default=None, metavar="DEV", help="OpenVINO device of the language model (CPU, GPU)")
    g.add_argument("--vocoder-device", default=None, metavar="DEV", help="OpenVINO device of the vocoder (CPU, GPU)")
    g.add_argument("--lm-threads", type=count(), default=None, metavar="N", help="threads of the language model")
    g.add_argument("--vocoder-threads", type=count(), default=None, metavar="N", help="threads of the vocoder")
    g.add_argument("--overlap", action=argparse.BooleanOptionalAction, default=None,
                   help="generate while a chunk decodes (default: where the vocoder has cores of its own)")
    g.add_argument("--dtype", choices=("float32", "bfloat16"), default=None,
                   help="compute precision of the torch backend (default float32)")
    add_cpu_mask(g)


def add_cpu_mask(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    from hearth.platform.topology import CPU_LEVELS

    p.add_argument("--cpu", choices=tuple(CPU_LEVELS), default=None, metavar="LEVEL",
                   help=f"run as on an older x86 ({', '.join(CPU_LEVELS)}; needs CPUID faulting)")


def apply_cpu_mask(args: argparse.Namespace) -> None:
    """With --cpu: run this command again in a process that sees such a CPU (returns in that one).
    Called for every command before it runs (`hearth.cli.main`); `bench --against` leaves it to
    the runs it starts."""
    if getattr(args, "cpu", None) is None or getattr(args, "against", None) is not None:
        return
    from hearth.tools.bench import exec_with_cpu_mask

    try:
        exec_with_cpu_mask(args.cpu)
    except ValueError as e:
        raise InputError(str(e)) from None


def backend_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The backend keywords the user gave (None for the rest); `hearth.load` resolves the others."""
    return {
        "backend": args.backend, "weights": args.weights, "vocoder": args.vocoder, "device": args.device,
        "vocoder_device": args.vocoder_device, "threads": args.lm_threads, "vocoder_threads": args.vocoder_threads,
        "overlap": args.overlap, "dtype": args.dtype, "fast": args.fast or None,
        "small": args.small or None,
    }


def add_voice_alias(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument("--voice-alias", action="append", default=[], metavar="NAME=VOICE",
                   help="another name for a voice (repeatable; OpenAI's alloy, ash, ... by default)")


def load_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of `hearth.load` the user gave: the backend's, and the voice aliases."""
    return {**backend_flags(args), "voice_aliases": getattr(args, "voice_alias", None) or None,
            "lexicon": getattr(args, "lexicon", None)}


def check_backend(args: argparse.Namespace) -> None:
    """Resolve the backend options now (cheap): a bad combination fails before any loading."""
    from hearth.backends.settings import backend_options

    try:
        backend_options(**backend_flags(args))
    except ValueError as e:
        raise InputError(str(e)) from e
    if getattr(args, "lexicon", None) is not None:  # a bad lexicon fails now too, not after loading
        from hearth.text.normalize.lexicon import Lexicon

        try:
            Lexicon.given(args.lexicon)
        except ValueError as e:
            raise InputError(f"--lexicon: {e}") from None


def add_generation(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", help="text to speak, or - to read it from stdin")
    v = p.add_argument_group("voice")
    v.add_argument("--voice", default=None,
                   help="speaker (default vivian; see `hearth voices`), a stored voice (Base), none (VoiceDesign)")
    add_voice_alias(v)
    add_option_flags(v, group="voice")
    g = p.add_argument_group("generation")
    g.add_argument("--greedy", action="store_true", help="greedy decoding instead of sampling (no seed)")
    add_option_flags(g, group="generation")
    g.add_argument("--no-guard", action="store_true", help="disable the runaway guard (frame budget from text length)")
    t = p.add_argument_group("text")
    add_option_flags(t, group="text")
    add_lexicon(t)


_FLAG_TYPES: dict[str, Callable[[str], Any]] = {"seed": seed, "count": count(), "speed": speed}


def add_option_flags(p: argparse.ArgumentParser | argparse._ArgumentGroup, keywords: Iterable[str] | None = None,
                     *, group: str | None = None, resident: bool = False) -> None:
    """The request options' flags, as hearth.options.FIELDS declares them: `keywords`' (None: all),
    those of one `group` of `hearth say --help`, or (`resident`) those a resident command takes as
    every request's."""
    wanted = set(keywords) if keywords is not None else None
    for f in FIELDS:
        if ((wanted is not None and f.keyword not in wanted) or (group is not None and f.group != group)
                or (resident and not f.resident)):
            continue
        for flag in f.flags:
            kwargs = dict(flag.kwargs)
            if isinstance(kwargs.get("type"), str):
                kwargs["type"] = _FLAG_TYPES[kwargs["type"]]
            p.add_argument(flag.name, **kwargs)


def add_resident_options(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The flags of a resident command (`hearth speak`, `chat`): the language, and the request options
    it takes as every request's (hearth.options.FIELDS' `resident` rows; `option_values` reads them)."""
    add_option_flags(p, ("language",))
    add_option_flags(p, resident=True)


def option_values(args: argparse.Namespace) -> dict[str, Any]:
    """The request options the flags gave, as the engine's keywords (what was not given left out):
    the one mapping a command hands on whole, to the scheduler, a player or the agent."""
    out: dict[str, Any] = {}
    for f in FIELDS:
        for flag in f.flags:
            dest = flag.kwargs.get("dest") or flag.name.lstrip("-").replace("-", "_")
            value = getattr(args, dest, None)
            if value is not None and f.keyword not in out:  # (the first flag given wins: --no-normalize)
                out[f.keyword] = flag.value(value) if flag.value is not None else value
    return out


def add_lexicon(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument("--lexicon", type=Path, default=None, metavar="FILE",
                   help="a pronunciation lexicon: words respelled as they are to be said (TOML; docs/text.md)")


def _as_typed(arg: str) -> str:
    """A command-line word as the user typed it. Python decodes the command line by the locale's
    encoding, and a non-UTF-8 locale (LC_ALL=C with PYTHONUTF8=0) leaves UTF-8 bytes as lone
    surrogates ("\udcc3\udcbc" for "ü"): they are the bytes typed, decoded as UTF-8 here."""
    if not any("\udc80" <= c <= "\udcff" for c in arg):
        return arg
    try:
        return os.fsencode(arg).decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"the text is not valid UTF-8 (byte {e.start}); convert it to UTF-8") from e


def read_text(arg: str, limit: int = 8 * MAX_TEXT_TOKENS) -> str:
    """The text argument, or stdin for "-", refused when empty or longer than `limit` characters
    (default: far too long for one prompt)."""
    if arg == "-":
        data = sys.stdin.buffer.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"stdin is not valid UTF-8 (byte {e.start}); convert the text to UTF-8") from e
    else:
        text = _as_typed(arg)
    if not text.strip():
        raise InputError("the text is empty; give some words to speak")
    if len(text) > limit == 8 * MAX_TEXT_TOKENS:
        raise InputError(f"the text is {len(text):,} characters, too long for one prompt (limit {MAX_TEXT_TOKENS} "
                         "tokens); split it into sentences (`hearth say` without --whole speaks sentence by sentence)")
    if len(text) > limit:
        raise InputError(f"the text is {len(text):,} characters; at most {limit:,} are taken at once. Send it in "
                         "parts (for example paragraph by paragraph)")
    return text


def check_voice_language(args: argparse.Namespace) -> ModelConfig:
    """The checkpoint's config (reading JSON only), with `args.voice` (None: the checkpoint kind's
    default, set in place) and `args.language` checked against it. A Base checkpoint's voices are
    stored profiles: the engine checks those when it loads."""
    from hearth.voices.cloning import VoiceStore
    from hearth.voices.openai_names import voice_aliases
    from hearth.voices.rules import DEFAULT_VOICE, VoiceRules

    config = open_checkpoint(args.model).config
    language = args.language
    rules = VoiceRules(config, voice_aliases(config, getattr(args, "voice_alias", None)), VoiceStore().names)
    if args.voice is None and config.model_type == "custom_voice":
        args.voice = DEFAULT_VOICE
    rules.resolve(args.voice)  # the engine resolves it again once loaded (a Base checkpoint's profiles)
    try:
        rules.check_instruct(getattr(args, "instruct", None))
    except InputError as e:
        raise InputError(f"--instruct: {e}") from None
    if language.strip().lower() not in config.languages:
        raise InputError(f"unknown language {language!r}; choose one of: {', '.join(config.languages)}")
    return config


def check_output(path: Path | None, option: str = "--out") -> None:
    """An output file must be creatable: its folder exists and is writable, it is not a folder, and
    its name says WAV (devices such as /dev/null are written as they are)."""
    if path is None or str(path) == "-":
        return
    if path.is_dir():
        raise InputError(f"{option} {path} is a folder; give a file name such as {path / 'speech.wav'}")
    if path.exists() and not stat.S_ISREG(path.stat().st_mode):
        return  # a device or a pipe
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"{option} {path}: the folder {parent} does not exist; create it first or choose "
                         "another path")
    if path.suffix.lower() != ".wav":
        raise InputError(f"{option} {path}: hearth writes WAV audio; give the file a .wav name (or - for stdout)")
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError(f"{option} {path}: the file exists and is not writable; choose another path")
    probe = Path(str(path) + ".part")  # what the writer will create: try it now
    try:
        probe.open("xb").close()
    except FileExistsError:
        pass  # left by an earlier run; the writer replaces it
    except OSError as e:
        raise InputError(f"{option} {path}: cannot write there ({e.strerror}); choose another path") from None
    else:
        probe.unlink()
