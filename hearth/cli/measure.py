"""`hearth bench`, `hearth doctor`, `hearth tune` and `hearth accuracy`: how fast, on what, how close."""

from __future__ import annotations

import argparse
from typing import Any

from hearth.backends import BACKENDS, COMPILED_VOCODERS, LM_WEIGHTS
from hearth.backends.asr_factory import ASR_BACKENDS, ASR_WEIGHTS
from hearth.checkpoint.loading import open_checkpoint
from hearth.cli.arguments import add_model_group, backend_flags, check_backend, count, seconds
from hearth.errors import InputError
from hearth.tools.doctor import TUNED


def add_parsers(sub: Any) -> None:
    bench = sub.add_parser("bench", help="measure first audio, real-time factor, CPU and memory")
    bench.add_argument("--frames", type=count(), default=25, help="frames per run (80 ms each; default 25)")
    bench.add_argument("--runs", type=count(), default=3, help="measured runs after one warm-up (default 3)")
    bench.add_argument("--threads", type=count(), default=None,
                       help="torch threads, also given to the official package (default: torch's choice)")
    bench.add_argument("--chunk-frames", type=count(), default=5)
    bench.add_argument("--first-chunk-frames", type=count(), default=None,
                       help="frames in the first chunk (default: the engine's, 1 with the OpenVINO vocoder)")
    bench.add_argument("--text", default=None, help="the sentence to speak")
    bench.add_argument("--compare-official", action="store_true",
                       help="also run the official qwen-tts package on the same checkpoint")
    bench.add_argument("--live", type=seconds(False), default=None, metavar="WORDS_PER_SECOND",
                       help="also measure a live utterance (Engine.open) fed the text word by word at this pace")
    bench.add_argument("--agent", type=_rates, default=(), metavar="RATES",
                       help="also measure voice-agent turns with an LLM writing at these tokens per second "
                            "(comma-separated, e.g. 5,12.5,50): first token to first audio, live and "
                            "sentence-at-a-time, gaps, barge-in")
    bench.add_argument("--turns", type=count(), default=4, help="agent turns per rate and pipeline (default 4)")
    bench.add_argument("--streams", type=_counts, default=(), metavar="N[,N...]",
                       help="measure N requests at once through the scheduler, batched (e.g. 1,2,4,8): "
                            "throughput in seconds of audio per second, and each stream's first audio and RTF")
    bench.add_argument("--max-batch", type=count(), default=None,
                       help="with --streams: most rows stepped together (default: as many as the streams)")
    bench.add_argument("--clone", type=seconds(False), default=None, metavar="SECONDS",
                       help="speak in a voice cloned (in context) from a reference this long: first audio from raw "
                            "audio, from a stored profile, and in use (default model: a true-shape 0.6B Base)")
    bench.add_argument("--against", default=None, metavar="GITREF",
                       help="run this same bench from this tree and from GITREF (a temporary worktree) in turn, "
                            "in one sitting, and print each figure's ratio with its spread (Hearth from a git "
                            "checkout)")
    bench.add_argument("--pairs", type=count(), default=3, help="with --against: alternating pairs of runs (default 3)")
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    listen = _add_listen_group(bench, "measure hearing instead: transcription of 5 s and 20 s (fixed token counts), "
                                      "the aligner, memory beside the speech model (--model, --backend, ... choose it)")
    listen.add_argument("--listen-weights", choices=ASR_WEIGHTS, default=None, help="int8 (default) or fp32")
    listen.add_argument("--no-speech", action="store_true", help="without the speech model resident")
    listen.add_argument("--listen-live", type=seconds(False), default=None, metavar="SECONDS",
                        help="also a live transcription with voice activity fed at real time for this long: end of "
                             "speech to final by utterance length, partial lag, CPU per audio second, memory")
    add_model_group(bench, None, "checkpoint directory or hub id (default: a random one of the true 0.6B shapes, "
                                 "made once)")
    bench.set_defaults(run=_bench)

    doctor = sub.add_parser("doctor", help="CPU topology, backends and devices found, and the thread plan")
    doctor.add_argument("--json", action="store_true")
    doctor.set_defaults(run=_doctor)

    tune = sub.add_parser("tune", help="try vocoders, thread counts and chunk sizes with `hearth bench`; save the best")
    tune.add_argument("--model", default=None, help="checkpoint (default: the true-shape random 0.6B)")
    tune.add_argument("--backend", choices=BACKENDS, default=None,
                      help="default: this machine's (see hearth doctor)")
    tune.add_argument("--weights", choices=LM_WEIGHTS, default=None, help="default int8")
    tune.add_argument("--fast", action="store_true", help="tune the --fast combination")
    tune.add_argument("--frames", type=count(), default=25)
    tune.add_argument("--runs", type=count(), default=3)
    tune.add_argument("--only", type=_settings, default=None, metavar="SETTING[,SETTING...]",
                      help=f"tune only these ({', '.join(TUNED)}); the others keep the plan's values "
                           "(default: all, one after the other)")
    tune.add_argument("--json", action="store_true")
    tune.set_defaults(run=_tune)

    acc = sub.add_parser("accuracy", help="how close int8/int4/fp16 weights and the fast vocoder stay to fp32")
    acc.add_argument("--model", default=None, help="checkpoint (default: the true-shape random 0.6B)")
    acc.add_argument("--backend", choices=[b for b in BACKENDS if b != "torch"], default=None,
                     help="the runtime of the language model to measure (default: this machine's; the fp32 "
                          "reference is OpenVINO's)")
    acc.add_argument("--weights", choices=[w for w in LM_WEIGHTS if w != "fp32"], default=None, help="default int8")
    acc.add_argument("--fast", action="store_true", help="the --fast combination (4-bit weights on onnxruntime)")
    acc.add_argument("--small", action="store_true",
                     help="the --small combination (--fast with the vocoder's products in 8 bits)")
    acc.add_argument("--vocoder", choices=COMPILED_VOCODERS, default=None,
                     help="the compiled vocoder to compare with the torch decoder (default: the one the backend "
                          "gets on this CPU)")
    acc.add_argument("--frames", type=count(), default=20)
    _add_listen_group(acc, "the listening models instead: int8 against fp32 on the runtime of --listen-backend "
                           "(drift on random weights: not quality)").add_argument(
        "--against-torch", action="store_true", help="also that runtime's fp32 against the torch reference")
    acc.add_argument("--json", action="store_true")
    acc.set_defaults(run=_accuracy)


def _rates(text: str) -> tuple[float, ...]:
    try:
        rates = tuple(float(r) for r in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected tokens per second such as 5,12.5,50, got {text!r}") from None
    if not rates or any(not 0 < r <= 1000 for r in rates):
        raise argparse.ArgumentTypeError(f"rates must be from 0 to 1000 tokens per second, got {text!r}")
    return rates


def _settings(text: str) -> frozenset[str]:
    names = frozenset(n.strip() for n in text.split(",") if n.strip())
    unknown = sorted(names - set(TUNED))
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"the settings tune tries are {', '.join(TUNED)}, got {text!r}")
    return names


def _counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(n) for n in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected stream counts such as 1,2,4,8, got {text!r}") from None
    if not counts or any(not 1 <= n <= 64 for n in counts):
        raise argparse.ArgumentTypeError(f"stream counts must be from 1 to 64, got {text!r}")
    return counts


def _add_listen_group(p: argparse.ArgumentParser, what: str) -> Any:  # noqa: ANN401 - an argparse group
    """--listen and the listening checkpoints (bench, accuracy)."""
    listen = p.add_argument_group("hearing (--listen)")
    listen.add_argument("--listen", action="store_true", help=what)
    listen.add_argument("--asr", default=None, metavar="DIR",
                        help="Qwen3-ASR checkpoint (default: a random one of the true 0.6B shapes, made once)")
    listen.add_argument("--aligner", default=None, metavar="DIR",
                        help="Qwen3-ForcedAligner checkpoint (default: a random true-shape 0.6B)")
    listen.add_argument("--listen-backend", choices=ASR_BACKENDS, default=None,
                        help="runtime of the listening models (default: this machine's, as for speech)")
    return listen


def _check_model(model: str | None) -> None:
    if model is not None:
        open_checkpoint(model)  # JSON only: a wrong path fails now, with the command that fetches one


def _bench(args: argparse.Namespace) -> int:
    from hearth.tools.bench import main_bench
    from hearth.tools.bench_runs import SENTENCE, BenchSettings
    from hearth.voices.cloning import MAX_REFERENCE_S, MIN_REFERENCE_S

    if args.against is not None:
        return _against(args)
    check_backend(args)
    _check_model(args.model)
    if args.listen:
        return _bench_listen(args)
    if args.text is not None and not args.text.strip():
        raise InputError("--text is empty; give a sentence to speak, or leave it out for the standard one")
    if args.clone is not None and not MIN_REFERENCE_S <= args.clone <= MAX_REFERENCE_S:
        raise InputError(f"--clone {args.clone:g}: a reference is {MIN_REFERENCE_S:g} to {MAX_REFERENCE_S:g} s long")
    flags = {k: v for k, v in backend_flags(args).items() if v is not None}
    settings = BenchSettings(
        model=args.model, frames=args.frames, runs=args.runs, threads=args.threads, chunk_frames=args.chunk_frames,
        first_chunk_frames=args.first_chunk_frames, text=args.text or SENTENCE, backend=flags, live_wps=args.live,
        agent_rates=args.agent, agent_turns=args.turns, streams=args.streams, max_batch=args.max_batch,
        clone_s=args.clone,
    )
    return main_bench(settings, args.compare_official, args.json)


def _bench_listen(args: argparse.Namespace) -> int:
    from hearth.tools.bench_listen import ListenBenchSettings, main_listen

    speech = None if args.no_speech else {k: v for k, v in backend_flags(args).items() if v is not None}
    settings = ListenBenchSettings(asr=args.asr, aligner=args.aligner, backend=args.listen_backend,
                                   weights=args.listen_weights, threads=args.threads, runs=args.runs, speech=speech,
                                   speech_model=args.model, live_s=args.listen_live)
    return main_listen(settings, args.json)


def _against(args: argparse.Namespace) -> int:
    """`bench --against REF`: the same arguments, but for --against, --pairs and --json, from both trees."""
    import sys

    from hearth.tools.against import main_against

    if args.compare_official or args.streams or args.clone is not None:
        raise InputError("--against compares the standard bench (first audio, real-time factor, stages, memory); "
                         "leave out --compare-official, --streams and --clone")
    check_backend(args)
    _check_model(args.model)
    argv = sys.argv[sys.argv.index("bench") + 1 :]
    kept: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a in ("--against", "--pairs"):
            skip = True
        elif not a.startswith(("--against=", "--pairs=")) and a != "--json":
            kept.append(a)
    try:
        return main_against(args.against, kept, args.pairs, args.json)
    except ValueError as e:
        raise InputError(str(e)) from None


def _doctor(args: argparse.Namespace) -> int:
    from hearth.tools.doctor import main_doctor

    return main_doctor(args.json)


def _tune(args: argparse.Namespace) -> int:
    from hearth.backends.settings import backend_options
    from hearth.tools.doctor import main_tune

    _check_model(args.model)
    try:
        options = backend_options(backend=args.backend, weights=args.weights, fast=args.fast)
    except ValueError as e:
        raise InputError(str(e)) from None
    return main_tune(args.model, options.backend, options.weights, args.frames, args.runs, args.json, args.only)


def _accuracy(args: argparse.Namespace) -> int:
    from hearth.backends import openvino_available
    from hearth.tools.accuracy import main_accuracy
    from hearth.tools.bench import bench_checkpoint

    if args.listen:
        from hearth.tools.listen_drift import main_listen_drift

        return main_listen_drift(args.asr, args.aligner, args.listen_backend, args.against_torch, args.json)
    if not openvino_available():
        raise InputError("hearth accuracy compares OpenVINO formats, and OpenVINO is not installed: "
                         "pip install openvino")
    from hearth.backends.settings import backend_options

    try:
        options = backend_options(backend=args.backend, weights=args.weights, fast=args.fast, small=args.small)
    except ValueError as e:
        raise InputError(str(e)) from None
    if options.backend == "torch":
        raise InputError("hearth accuracy measures the compiled backends (openvino, onnxruntime)")
    _check_model(args.model)
    model = args.model or str(bench_checkpoint())
    vocoder = args.vocoder or options.vocoder_precision
    return main_accuracy(model, options.weights, args.frames, vocoder, args.json, backend=options.backend,
                         call_frames=options.vocoder_call_frames)
