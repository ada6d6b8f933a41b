"""The `hearth` command. Stdout carries only data (JSON, audio); logs and messages go to stderr.

Exit codes: 0 success, 1 unexpected failure, 2 bad input or unusable checkpoint.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from .audio import SAMPLE_FORMATS, Speaker, WavWriter, default_output_available
from .checkpoint import DEFAULT_MODEL, CheckpointError, open_checkpoint
from .engine import Engine, InputError, load

__all__ = ["main"]

log = logging.getLogger("hearth")

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 with usage; keep that, minus the traceback risk
        self.print_usage(sys.stderr)
        print(f"hearth: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _add_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"checkpoint directory or hub id (default {DEFAULT_MODEL})")


def _add_backend(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("backend (see `hearth doctor`)")
    g.add_argument("--backend", choices=("torch", "openvino"), default=None,
                   help="torch (reference, default) or openvino (extra 'fast'; default when tuned settings say so)")
    g.add_argument("--weights", choices=("int8", "fp16", "fp32"), default=None,
                   help="OpenVINO language-model weights (default int8)")
    g.add_argument("--vocoder", choices=("bf16", "fp16", "fp32", "torch"), default=None,
                   help="vocoder precision with OpenVINO (default bf16), or the torch fp32 vocoder")
    g.add_argument("--device", default=None, help="OpenVINO device of the language model (CPU, GPU)")
    g.add_argument("--vocoder-device", default=None, help="OpenVINO device of the vocoder (CPU, GPU)")
    g.add_argument("--lm-threads", type=int, default=None, help="threads of the language model")
    g.add_argument("--vocoder-threads", type=int, default=None, help="threads of the vocoder")
    g.add_argument("--overlap", action=argparse.BooleanOptionalAction, default=None,
                   help="keep generating while a chunk is decoded (default: only where the vocoder has "
                        "cores or a device of its own)")


def backend_options(args: argparse.Namespace) -> dict[str, Any]:
    """BackendOptions keywords: tuned settings (`hearth tune`) overridden by explicit flags."""
    from .topology import load_tuned

    opts: dict[str, Any] = {} if os.environ.get("HEARTH_IGNORE_TUNED") else dict(load_tuned() or {})
    opts.pop("chunk_frames", None)
    explicit = {
        "backend": args.backend, "weights": args.weights, "vocoder": args.vocoder, "device": args.device,
        "vocoder_device": args.vocoder_device, "threads": args.lm_threads, "vocoder_threads": args.vocoder_threads,
        "overlap": args.overlap,
    }
    if args.backend == "torch":  # an explicit reference run ignores tuned fast-path settings
        opts = {}
    opts.update({k: v for k, v in explicit.items() if v is not None})
    return opts


def _tuned_chunk() -> int:
    from .topology import load_tuned

    tuned = {} if os.environ.get("HEARTH_IGNORE_TUNED") else (load_tuned() or {})
    chunk = tuned.get("chunk_frames")
    return chunk if isinstance(chunk, int) and chunk > 0 else 5


def _add_generation(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", help="text to speak, or - to read it from stdin")
    p.add_argument("--voice", default="vivian", help="speaker (see `hearth voices`; default vivian)")
    p.add_argument("--language", default="auto", help="language, or auto (default)")
    _add_model(p)
    p.add_argument("--instruct", default=None, help="style instruction (1.7B models only)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--greedy", action="store_true", help="greedy decoding instead of sampling")
    mode.add_argument("--seed", type=int, default=None, help="seed of the sampling generator (default: random)")
    p.add_argument("--max-new-tokens", type=int, default=None,
                   help="upper bound on generated tokens (frames + 1; default from generation_config.json)")
    p.add_argument("--text-mode", choices=("whole", "stream"), default="whole",
                   help="whole text in the prompt (official default) or one text token per frame")
    p.add_argument("--no-guard", action="store_true", help="disable the runaway guard (frame budget from text length)")
    p.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32", help="talker compute precision")
    _add_backend(p)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hearth", description="On-device speech synthesis with Qwen3-TTS CustomVoice.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    say = sub.add_parser("say", help="speak a text (to --out, else the speaker, else hearth.wav)")
    _add_generation(say)
    say.add_argument("--out", type=Path, default=None, help="write a WAV file instead of playing")
    say.add_argument("--sample-format", choices=SAMPLE_FORMATS, default="s16", help="WAV sample format")
    say.add_argument("--chunk-frames", type=int, default=None,
                     help="frames (80 ms each) per streamed chunk (default: tuned, else 5)")
    say.add_argument("--first-chunk-frames", type=int, default=None,
                     help="frames in the first chunk (earlier audio; default 2, 1 with the OpenVINO vocoder)")

    codes = sub.add_parser("codes", help="print the generated codec frames as JSON")
    _add_generation(codes)

    bench = sub.add_parser("bench", help="measure first audio, real-time factor, CPU and memory")
    bench.add_argument("--model", default=None,
                       help="checkpoint directory (default: a random one with the true 0.6B shapes, made once)")
    bench.add_argument("--frames", type=int, default=25, help="frames per run (80 ms each; default 25)")
    bench.add_argument("--runs", type=int, default=3, help="measured runs after one warm-up (default 3)")
    bench.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    bench.add_argument("--chunk-frames", type=int, default=5)
    bench.add_argument("--first-chunk-frames", type=int, default=None,
                       help="frames in the first chunk (default: the engine's, 2 or 1 with the OpenVINO vocoder)")
    bench.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    _add_backend(bench)
    bench.add_argument("--text", default=None, help="the sentence to speak")
    bench.add_argument("--compare-official", action="store_true",
                       help="also run the official qwen-tts package on the same checkpoint")
    bench.add_argument("--json", action="store_true", help="print one JSON object")

    speak = sub.add_parser("speak", help="speak each line typed or piped in (Ctrl-C or an empty line stops)")
    _add_model(speak)
    _add_backend(speak)
    speak.add_argument("--voice", default="vivian")
    speak.add_argument("--language", default="auto")
    speak.add_argument("--seed", type=int, default=None, help="seed of each request (default: random)")
    speak.add_argument("--sink", choices=("speaker", "wav", "raw", "null"), default=None,
                       help="where audio goes (default: the speaker if there is one, else raw PCM on a pipe)")
    speak.add_argument("--out", type=Path, default=None, help="the WAV file, with --sink wav")
    speak.add_argument("--sample-format", choices=SAMPLE_FORMATS, default="s16")
    speak.add_argument("--max-new-tokens", type=int, default=None)

    doctor = sub.add_parser("doctor", help="CPU topology, backends and devices found, and the thread plan")
    doctor.add_argument("--json", action="store_true")

    tune = sub.add_parser("tune", help="try thread counts and chunk sizes with `hearth bench`; save the best")
    tune.add_argument("--model", default=None, help="checkpoint (default: the true-shape random 0.6B)")
    tune.add_argument("--backend", choices=("torch", "openvino"), default="openvino")
    tune.add_argument("--weights", choices=("int8", "fp16", "fp32"), default="int8")
    tune.add_argument("--frames", type=int, default=25)
    tune.add_argument("--runs", type=int, default=3)
    tune.add_argument("--json", action="store_true")

    acc = sub.add_parser("accuracy", help="how close int8/fp16 weights and the fast vocoder stay to fp32")
    acc.add_argument("--model", default=None, help="checkpoint (default: the true-shape random 0.6B)")
    acc.add_argument("--weights", choices=("int8", "fp16"), default="int8")
    acc.add_argument("--vocoder", choices=("bf16", "fp16", "fp32"), default="bf16")
    acc.add_argument("--frames", type=int, default=20)
    acc.add_argument("--json", action="store_true")

    soak = sub.add_parser("soak", help="speak many sentences in one process and check it stays correct and flat")
    _add_model(soak)
    _add_backend(soak)
    soak.add_argument("--sentences", type=int, default=300)
    soak.add_argument("--idle", type=float, default=0.0, help="seconds of silence between sentences")
    soak.add_argument("--max-new-tokens", type=int, default=None)
    soak.add_argument("--realtime", action="store_true", help="consume audio at playback speed")
    soak.add_argument("--duration", type=float, default=None, help="stop submitting after this many seconds")
    soak.add_argument("--json", action="store_true")

    voices = sub.add_parser("voices", help="list voices and languages of a checkpoint")
    _add_model(voices)
    voices.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _load_checked(args: argparse.Namespace) -> Engine:
    """Load the engine, after checking voice and language against the config (cheap) so that a
    typo is reported before seconds of weight loading."""
    config = open_checkpoint(args.model).config
    if args.voice.strip().lower() not in config.talker.speaker_ids:
        raise InputError(f"unknown voice {args.voice!r}; choose one of: {', '.join(config.voices)}")
    if args.language.strip().lower() not in config.languages:
        raise InputError(f"unknown language {args.language!r}; choose one of: {', '.join(config.languages)}")
    return load(args.model, dtype=args.dtype, **backend_options(args))


def _read_text(arg: str) -> str:
    if arg != "-":
        return arg
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"stdin is not valid UTF-8 (byte {e.start}); convert the text to UTF-8") from e


def _generate(engine: Engine, args: argparse.Namespace):
    from .generate import FrameBudget

    text = _read_text(args.text)
    codes = engine.generate_codes(
        text, args.voice, args.language, instruct=args.instruct, text_mode=args.text_mode,
        seed=args.seed, greedy=args.greedy, max_new_tokens=args.max_new_tokens,
        budget=None if args.no_guard else FrameBudget(),
    )
    s = codes.stats
    log.info("%d frames (%.2f s of audio), stopped by %s%s", s.frames, s.frames * 0.08, s.stop_reason,
             f", seed {codes.seed}" if codes.seed is not None else ", greedy")
    return codes


def _cmd_say(args: argparse.Namespace) -> int:
    from .generate import FrameBudget

    engine = _load_checked(args)
    text = _read_text(args.text)
    stream = engine.stream(
        text, args.voice, args.language, instruct=args.instruct, text_mode=args.text_mode, seed=args.seed,
        greedy=args.greedy, max_new_tokens=args.max_new_tokens, budget=None if args.no_guard else FrameBudget(),
        chunk_frames=args.chunk_frames or _tuned_chunk(), first_chunk_frames=args.first_chunk_frames,
    )
    out = args.out
    sink: Speaker | WavWriter
    if out is None and default_output_available():
        sink, where = Speaker(engine.sample_rate), "the default output device"
    else:
        if out is None:
            out = Path("hearth.wav")
            log.warning("no audio output device (or sounddevice not installed); writing %s instead", out)
        target = sys.stdout.buffer if str(out) == "-" else out
        sink, where = WavWriter(target, engine.sample_rate, args.sample_format), str(out)
    seconds, first = 0.0, None
    with stream, sink:
        for chunk in stream:
            if first is None:
                first = chunk.timing.decoded_at
            sink.write(chunk.samples)
            seconds += chunk.duration_s
    g = stream.generation
    log.info("%.2f s of audio to %s; first audio after %.2f s; %d frames, stopped by %s%s", seconds, where,
             first or 0.0, g.frames, g.stop_reason, f", seed {stream.seed}" if stream.seed is not None else "")
    return EXIT_OK


def _cmd_codes(args: argparse.Namespace) -> int:
    engine = _load_checked(args)
    codes = _generate(engine, args)
    json.dump(
        {
            "codes": codes.codes.tolist(),
            "frames": codes.stats.frames,
            "stop_reason": codes.stats.stop_reason,
            "seed": codes.seed,
            "voice": args.voice.lower(),
            "language": args.language.lower(),
            "text_mode": args.text_mode,
        },
        sys.stdout,
    )
    sys.stdout.write("\n")
    return EXIT_OK


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import SENTENCE, BenchSettings, main_bench

    if args.frames < 1 or args.runs < 1:
        raise InputError("--frames and --runs must be at least 1")
    settings = BenchSettings(
        model=args.model, frames=args.frames, runs=args.runs, threads=args.threads, chunk_frames=args.chunk_frames,
        first_chunk_frames=args.first_chunk_frames, dtype=args.dtype, text=args.text or SENTENCE,
        backend=backend_options(args),
    )
    return main_bench(settings, args.compare_official, args.json)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from .doctor import main_doctor

    return main_doctor(args.json)


def _cmd_tune(args: argparse.Namespace) -> int:
    from .doctor import main_tune

    if args.frames < 1 or args.runs < 1:
        raise InputError("--frames and --runs must be at least 1")
    return main_tune(args.model, args.backend, args.weights, args.frames, args.runs, args.json)


def _cmd_accuracy(args: argparse.Namespace) -> int:
    from .backends.accuracy import main_accuracy
    from .bench import bench_checkpoint

    if args.frames < 1:
        raise InputError("--frames must be at least 1")
    model = args.model or str(bench_checkpoint())
    return main_accuracy(model, args.weights, args.frames, args.vocoder, args.json)


def _cmd_soak(args: argparse.Namespace) -> int:
    from .soak import SoakSettings, main_soak

    if args.sentences < 1:
        raise InputError("--sentences must be at least 1")
    engine = load(args.model, **backend_options(args))
    settings = SoakSettings(sentences=args.sentences, idle_s=args.idle, max_new_tokens=args.max_new_tokens,
                            realtime=args.realtime, duration_s=args.duration)
    return main_soak(engine, settings, args.json)


def _cmd_speak(args: argparse.Namespace) -> int:
    from .interactive import speak_lines

    return speak_lines(args)


def _cmd_voices(args: argparse.Namespace) -> int:
    cfg = open_checkpoint(args.model).config
    info: dict[str, Any] = {
        "voices": cfg.voices,
        "languages": cfg.languages,
        "dialects": {v: d for v, d in cfg.talker.speaker_dialects.items() if d},
        "instruct": cfg.honours_instruct,
    }
    if args.json:
        json.dump(info, sys.stdout)
        sys.stdout.write("\n")
    else:
        print("voices:    " + ", ".join(info["voices"]))
        print("languages: " + ", ".join(info["languages"]))
        for voice, dialect in info["dialects"].items():
            print(f"  {voice} speaks {dialect} when the language is chinese or auto")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, stream=sys.stderr,
                        format="hearth: %(message)s")
    handlers = {"accuracy": _cmd_accuracy, "doctor": _cmd_doctor, "tune": _cmd_tune, "say": _cmd_say,
                "codes": _cmd_codes, "voices": _cmd_voices, "bench": _cmd_bench,
                "speak": _cmd_speak, "soak": _cmd_soak}
    try:
        return handlers[args.command](args)
    except (InputError, CheckpointError) as e:
        print(f"hearth: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("hearth: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
