"""`hearth say`, `hearth codes` and `hearth voices`: one text, spoken or as codes; what a checkpoint offers."""

from __future__ import annotations

import argparse
import codecs
import json
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

from hearth.checkpoint.loading import open_checkpoint
from hearth.checkpoint.sampling import FrameBudget
from hearth.cli import arguments, listen
from hearth.engine import Engine, load
from hearth.errors import InputError
from hearth.frames import FRAME_S
from hearth.runtime.scheduler import MAX_REQUEST_CHARS, Scheduler
from hearth.streaming.pacing import Pacer, paced
from hearth.streaming.sinks import SAMPLE_FORMATS, DeviceSink, WavWriter, default_output_available
from hearth.voices.openai_names import alias_list, voice_aliases

__all__ = ["add_parsers"]

log = logging.getLogger("hearth")


def add_parsers(sub: Any) -> None:
    say = sub.add_parser("say", help="speak a text (to --out, else the speaker, else hearth.wav)")
    arguments.add_generation(say)
    out = say.add_argument_group("output")
    out.add_argument("--whole", action="store_true",
                     help="one prompt, as the official package (default: sentence i with seed + i, as the servers)")
    out.add_argument("--out", type=Path, default=None, help="write a WAV file (- for stdout) instead of playing")
    out.add_argument("--sample-format", choices=SAMPLE_FORMATS, default="s16", help="WAV sample format")
    arguments.add_option_flags(out, group="output")  # (the audio's: `codes` has none of them)
    arguments.add_playback(out)
    out.add_argument("--chunk-frames", type=arguments.count(), default=None, metavar="N",
                     help="frames (80 ms each) per streamed chunk (default: tuned, else 5)")
    out.add_argument("--first-chunk-frames", type=arguments.count(), default=None, metavar="N",
                     help="frames in the first chunk (default 1 with the OpenVINO vocoder, 2 with the torch one)")
    arguments.add_model_group(say)
    listen.add_hearing_flags(say, transcribe=False)
    say.set_defaults(run=_say)

    codes = sub.add_parser("codes", help="print the generated codec frames as JSON")
    arguments.add_generation(codes)
    arguments.add_model_group(codes)
    codes.set_defaults(run=_codes)

    voices = sub.add_parser("voices", help="list voices and languages of a checkpoint")
    arguments.add_model(voices)
    voices.add_argument("--json", action="store_true", help="print JSON")
    arguments.add_voice_alias(voices)
    voices.set_defaults(run=_voices)


def _live_stdin(args: argparse.Namespace) -> bool:
    """`hearth say --text-mode interleaved -`: stdin is spoken as it arrives, not at its end."""
    return args.text == "-" and not args.whole and args.text_mode in ("interleaved", "stream")


def _feed_stdin(request: Any) -> None:
    """Push stdin into an open request as it arrives (whatever the pipe gives, decoded as UTF-8
    across reads); end it at EOF. Runs on its own thread."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    fd = sys.stdin.fileno()
    try:
        while data := os.read(fd, 4096):
            request.push(decoder.decode(data))
        request.push(decoder.decode(b"", final=True))
    except UnicodeDecodeError as e:
        log.error("stdin is not valid UTF-8 (%s); speaking what came before it", e.reason)
    except InputError as e:
        log.error("%s; speaking what came before it", e)
    except OSError as e:
        log.error("reading stdin failed: %s", e)
    finally:
        request.end()


def _prepare(args: argparse.Namespace, limit: int | None = None) -> str:
    """Everything that can be checked before loading: backend options, voice, language, text
    (`limit`: characters; default, what one prompt takes)."""
    arguments.check_backend(args)
    arguments.check_voice_language(args)
    return arguments.read_text(args.text) if limit is None else arguments.read_text(args.text, limit)


def _load(args: argparse.Namespace) -> Engine:
    return load(args.model, **arguments.load_flags(args))


def _say(args: argparse.Namespace) -> int:
    live = _live_stdin(args)
    if live:
        arguments.check_backend(args)
        arguments.check_voice_language(args)
        text = ""
    else:
        text = _prepare(args, limit=None if args.whole else MAX_REQUEST_CHARS)
    out: Path | None = args.out
    if out is None and not default_output_available():
        out = Path("hearth.wav")
        arguments.check_output(out)
        log.warning("no audio output device (or sounddevice not installed); writing %s instead", out)
    arguments.check_output(out)
    aligner = _aligner(args)
    # The same path as `hearth serve` and `hearth speak`: sentence by sentence through a scheduler,
    # so a request to the server with this seed gives these samples.
    with _load(args) as engine, Scheduler(engine, max_active=1, max_waiting=0, aligner=aligner) as scheduler:
        options: dict[str, Any] = {
            **arguments.option_values(args), "greedy": args.greedy, "budget": None if args.no_guard else FrameBudget(),
            "chunk_frames": args.chunk_frames, "first_chunk_frames": args.first_chunk_frames, "on_failure": "raise",
        }
        options.pop("language")
        if live:  # sentences start as their first words arrive, and take in the rest as it comes
            request = scheduler.open(args.voice, args.language, **options)
            threading.Thread(target=_feed_stdin, args=(request,), name="hearth-stdin", daemon=True).start()
        else:
            request = scheduler.submit(text, args.voice, args.language, split=not args.whole, **options)
        sink: DeviceSink | WavWriter
        if out is None:
            sink, where = DeviceSink(engine.sample_rate), "the default output device"
        else:
            target = sys.stdout.buffer if str(out) == "-" else out
            sink, where = WavWriter(target, engine.sample_rate, args.sample_format), str(out)
        seconds = 0.0
        # On any failure the request is cancelled (the scheduler's `with`) and a WAV file is not
        # left half-written (the sink's `with` discards it).
        # The speaker gets the audio held until the rest can play without a gap where the machine
        # is slower than real time (--playback); a file takes it as it comes.
        chunks = paced(request, Pacer(args.playback, scheduler.rate)) if out is None else request
        with sink:
            for chunk in chunks:
                sink.write(chunk.samples)
                seconds += chunk.duration_s
                if len(request.sentences) > 1 and chunk.sentence_end:
                    log.info("sentence %d of %d spoken", chunk.sentence + 1, request.total_sentences)
            if live and not request.sentences:  # inside: an empty WAV is not left behind
                raise InputError("the text is empty: stdin gave no words to speak")
    if args.captions is not None:
        _write_captions(args.captions, request)
    frames = sum(s.frames for s in request.sentences)
    stops = sorted({s.stop_reason for s in request.sentences})
    log.info("%.2f s of audio to %s; first audio after %.2f s; %d sentence%s, %d frames, stopped by %s%s",
             seconds, where, request.first_chunk_s or 0.0, len(request.sentences),
             "" if len(request.sentences) == 1 else "s", frames, "/".join(stops),
             f", seed {request.seed}" if request.seed is not None else ", greedy")
    return 0


def _aligner(args: argparse.Namespace) -> Any:  # noqa: ANN401 - a hearth.listen.Aligner, or None
    """--captions: the aligner (`--aligner`, else the released one), loaded now."""
    if args.captions is None:
        return None
    if Path(args.captions).suffix.lower() not in (".vtt", ".srt", ".json"):
        raise InputError(f"--captions {args.captions}: give a .vtt, .srt or .json file name")
    from hearth.listen import Aligner

    return Aligner.load(args.aligner or listen.DEFAULT_ALIGNER, args.listen_backend, args.listen_dtype or "float32",
                        args.listen_weights)


def _write_captions(path: str, request: Any) -> None:  # noqa: ANN401 - a scheduler's Request
    """The words of the speech (times from its start, places in the text) as WebVTT, SubRip or JSON."""
    from hearth.listen.captions import TimedSpan, cues, srt, vtt

    words = request.words
    failed = [s.words_error for s in request.sentences if s.words_error]
    if failed:
        log.warning("%d sentence(s) have no word times: %s", len(failed), failed[0])
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        body = json.dumps({"text": request.text, "words": [w.to_json() for w in words]}, ensure_ascii=False) + "\n"
    else:
        made = cues([TimedSpan(w.source_start, w.source_end, w.start_time, w.end_time, w.sentence) for w in words],
                    request.text)
        body = vtt(made) if suffix == ".vtt" else srt(made)
    Path(path).write_text(body, encoding="utf-8")
    log.info("%d words' times written to %s", len(words), path)


def _codes(args: argparse.Namespace) -> int:
    text = _prepare(args)
    with _load(args) as engine:
        options = arguments.option_values(args)
        options.pop("language")
        result = engine.generate_codes(text, args.voice, args.language, greedy=args.greedy,
                                       budget=None if args.no_guard else FrameBudget(), **options)
    s = result.stats
    log.info("%d frames (%.2f s of audio), stopped by %s%s", s.frames, s.frames * FRAME_S, s.stop_reason,
             f", seed {result.seed}" if result.seed is not None else ", greedy")
    json.dump({
        "codes": result.codes.tolist(),
        "frames": s.frames,
        "stop_reason": s.stop_reason,
        "seed": result.seed,
        "voice": args.voice.strip().lower() if args.voice else None,
        "language": args.language.strip().lower(),
        "text_mode": engine.check_text_mode(args.text_mode),
        "backend": engine.options.backend,
    }, sys.stdout)
    sys.stdout.write("\n")
    return 0


def _voices(args: argparse.Namespace) -> int:
    ckpt = open_checkpoint(args.model)
    cfg = ckpt.config
    voices = cfg.voices
    if cfg.model_type == "base":  # its voices are the profiles stored for it
        from hearth.voices.cloning import Cloner

        voices = Cloner(ckpt).usable()
    aliases = voice_aliases(cfg, args.voice_alias)
    info: dict[str, Any] = {
        "kind": cfg.kind,
        "voices": voices,
        "aliases": aliases,
        "languages": cfg.languages,
        "dialects": {v: d for v, d in cfg.talker.speaker_dialects.items() if d},
        "instruct": cfg.honours_instruct,
    }
    if args.json:
        json.dump(info, sys.stdout)
        sys.stdout.write("\n")
    else:
        if cfg.model_type == "voice_design":
            print("voices:    none to choose: describe one with --instruct")
        elif cfg.model_type == "base" and not voices:
            print("voices:    none stored for this checkpoint yet; add one: hearth voice add NAME --audio REF.wav "
                  "--text 'what it says'")
        else:
            print("voices:    " + ", ".join(info["voices"]))
        if aliases:
            print("aliases:   " + alias_list(aliases))
        print("languages: " + ", ".join(info["languages"]))
        for voice, dialect in info["dialects"].items():
            print(f"  {voice} speaks {dialect} when the language is chinese or auto")
    return 0
