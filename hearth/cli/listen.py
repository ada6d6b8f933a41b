"""`hearth transcribe`: a recording's text (Qwen3-ASR), with word times (Qwen3-ForcedAligner); and
the flags that load the listening models beside the speech model in `hearth serve`, `hearth
wyoming` and `hearth say` (`add_hearing_flags`)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from hearth.backends.asr_factory import ASR_BACKENDS, ASR_DTYPES, ASR_WEIGHTS
from hearth.checkpoint.loading import CheckpointError
from hearth.cli import arguments
from hearth.errors import InputError
from hearth.listen.audio_in import decode_audio
from hearth.listen.captions import srt, vtt
from hearth.listen.formats import transcript_cues, transcript_words
from hearth.listen.languages import LANGUAGES, language_named

__all__ = ["DEFAULT_ALIGNER", "DEFAULT_ASR", "add_hearing_flags", "add_parsers", "hearing_models"]

log = logging.getLogger("hearth")

DEFAULT_ASR = "Qwen/Qwen3-ASR-0.6B"
DEFAULT_ALIGNER = "Qwen/Qwen3-ForcedAligner-0.6B"
_MAX_INPUT_BYTES = 1 << 30


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("transcribe", help="a recording's text (Qwen3-ASR), and with --timestamps each word's times")
    p.add_argument("audio", help="an audio file (WAV, FLAC, MP3, OGG, ...), or - to read it from stdin")
    p.add_argument("--json", action="store_true", help="print JSON: language, text, duration and (with --timestamps) "
                                                       "words with their times and places in the text")
    p.add_argument("--timestamps", action="store_true", help="time each word with the aligner (--aligner)")
    p.add_argument("--captions", type=Path, default=None, metavar="FILE",
                   help="also write captions to FILE (.vtt or .srt; timed by word with --timestamps)")
    p.add_argument("--language", default=None, help="the language spoken (a code such as en, or a name); default: "
                                                     "the model tells")
    p.add_argument("--context", default="", help="text the model may use: names, terms, the topic")
    p.add_argument("--max-new-tokens", type=arguments.count(), default=512, metavar="N",
                   help="upper bound on generated tokens per piece of the recording (default 512)")
    g = p.add_argument_group("live (the text follows the audio as it comes: docs/listen.md)")
    g.add_argument("--live", action="store_true",
                   help="transcribe as the audio comes: raw PCM on stdin (-), e.g. arecord -f S16_LE -r 16000 | "
                        "hearth transcribe --live -; or a file, fed as it is read. Partial text is shown in place "
                        "on a terminal's stderr, each segment's final text is a line on stdout (--json: every "
                        "update as a line of JSON)")
    g.add_argument("--rate", type=arguments.count(), default=16000, metavar="HZ",
                   help="--live: the sample rate of raw PCM on stdin (default 16000)")
    g.add_argument("--channels", type=arguments.count(), default=1, metavar="N",
                   help="--live: the channels of raw PCM on stdin, interleaved (default 1)")
    g.add_argument("--format", choices=("s16", "f32"), default="s16",
                   help="--live: raw PCM samples, 16-bit or float, little-endian (default s16)")
    g.add_argument("--chunk-s", type=float, default=2.0, metavar="S",
                   help="--live: an update each S seconds of audio (default 2.0)")
    g.add_argument("--rollback", type=int, default=5, metavar="N",
                   help="--live: the last N tokens of the previous update left free to change (default 5)")
    g.add_argument("--segment-s", type=float, default=30.0, metavar="S",
                   help="--live: a segment's longest audio; its final is given then (default 30)")
    g.add_argument("--offline-final", action="store_true",
                   help="--live: each segment's final hears it whole with nothing forced (the text transcribe gives "
                        "for that audio; costs one more pass at the end of each segment)")
    g.add_argument("--vad", action="store_true",
                   help="--live: hear speech only (Silero VAD), a segment to each stretch of it, its final a "
                        "pause after the last word (needs pip install 'hearth-tts[vad]')")
    g.add_argument("--silence-s", type=float, default=0.5, metavar="S",
                   help="--vad: this much quiet ends a stretch of speech (default 0.5)")
    g.add_argument("--vad-threshold", type=float, default=0.5, metavar="P",
                   help="--vad: a 32 ms frame of this speech probability or more is speech (default 0.5)")
    g = p.add_argument_group("models")
    g.add_argument("--model", default=DEFAULT_ASR,
                   help=f"Qwen3-ASR checkpoint directory or hub id (default {DEFAULT_ASR})")
    g.add_argument("--aligner", default=None, metavar="MODEL",
                   help=f"Qwen3-ForcedAligner checkpoint for --timestamps (default {DEFAULT_ALIGNER} when asked)")
    g.add_argument("--backend", choices=ASR_BACKENDS, default=None, help="the runtime of the listening models")
    g.add_argument("--weights", choices=ASR_WEIGHTS, default=None,
                   help="the compiled runtimes' weights (default int8; fp32 is the reference's arithmetic)")
    g.add_argument("--dtype", choices=ASR_DTYPES, default=None,
                   help="the torch reference's precision (default float32)")
    p.set_defaults(run=_transcribe)


def add_hearing_flags(p: argparse.ArgumentParser, transcribe: bool = True) -> None:
    """A server's (or `hearth say`'s) listening models, loaded beside its speech model."""
    g = p.add_argument_group("listening (docs/listen.md)")
    if transcribe:
        g.add_argument("--listen", default=None, metavar="MODEL",
                       help=f"also transcribe speech with this Qwen3-ASR checkpoint (e.g. {DEFAULT_ASR})")
    g.add_argument("--aligner", default=None, metavar="MODEL",
                   help=f"a Qwen3-ForcedAligner (e.g. {DEFAULT_ALIGNER}): word timestamps of the speech"
                        + (" and of transcripts" if transcribe else ""))
    g.add_argument("--listen-backend", choices=ASR_BACKENDS, default=None, help="the listening models' runtime")
    g.add_argument("--listen-weights", choices=ASR_WEIGHTS, default=None,
                   help="their weights on OpenVINO or ONNX Runtime (default int8)")
    g.add_argument("--listen-dtype", choices=ASR_DTYPES, default=None,
                   help="their precision on the torch reference (default float32)")


def hearing_models(args: argparse.Namespace) -> dict[str, Any]:
    """The listening models the flags ask for (checked now: a wrong path fails before any loading)."""
    from hearth.checkpoint.asr_loading import open_asr_checkpoint

    listen, aligner = getattr(args, "listen", None), getattr(args, "aligner", None)
    for flag, model, kind in (("--listen", listen, "asr"), ("--aligner", aligner, "aligner")):
        if model is not None:
            try:
                open_asr_checkpoint(model, expect=kind)
            except (CheckpointError, InputError) as e:
                raise InputError(f"{flag}: {e}") from None
    return {"listen": listen, "aligner": aligner, "backend": getattr(args, "listen_backend", None),
            "dtype": getattr(args, "listen_dtype", None), "weights": getattr(args, "listen_weights", None)}


def _read(source: str) -> bytes:
    if source == "-":
        data = sys.stdin.buffer.read(_MAX_INPUT_BYTES + 1)
    else:
        path = Path(source)
        if not path.is_file():
            raise InputError(f"{source}: no such file (give an audio file, or - for stdin)")
        with path.open("rb") as f:
            data = f.read(_MAX_INPUT_BYTES + 1)
    if len(data) > _MAX_INPUT_BYTES:
        raise InputError(f"{source}: over {_MAX_INPUT_BYTES >> 20} MB; cut the recording into parts")
    return data


def _transcribe(args: argparse.Namespace) -> int:
    from hearth.listen import Listener, ListenOptions, Transcript

    language = language_named(args.language, LANGUAGES)  # checked before anything loads
    if args.live:
        return _transcribe_live(args, language)
    if args.captions is not None and args.captions.suffix.lower() not in (".vtt", ".srt"):
        raise InputError(f"--captions {args.captions}: give a .vtt or .srt file name")
    recording = decode_audio(_read(args.audio))
    log.info("%.1f s of audio at %d Hz", recording.seconds, recording.sample_rate)
    t0 = time.perf_counter()
    aligner = (args.aligner or DEFAULT_ALIGNER) if args.timestamps else None
    if args.aligner is not None and not args.timestamps:
        log.warning("--aligner is used with --timestamps only; transcribing without word times")
    listener = Listener.load(args.model, args.backend, args.dtype or "float32", aligner, args.weights)
    log.info("loaded %s%s in %.1f s", listener.checkpoint.path, " and the aligner" if aligner else "",
             time.perf_counter() - t0)
    options = ListenOptions(context=args.context, language=language, max_new_tokens=args.max_new_tokens,
                            timestamps=args.timestamps)
    pieces = []
    t0 = time.perf_counter()
    for piece in listener.pieces(recording.samples, options, recording.sample_rate):
        pieces.append(piece)
        log.info("transcribed up to %.0f s of %.0f s (%.1f s so far)", piece.offset + piece.duration,
                 recording.seconds, time.perf_counter() - t0)
        if not args.json:
            sys.stdout.write(piece.text)
            sys.stdout.flush()
    transcript = Transcript.joined(pieces)
    if args.json:
        words = transcript_words(transcript)
        json.dump({"language": transcript.language, "text": transcript.text, "duration": round(recording.seconds, 3),
                   **({"words": [w.to_json() for w in words]} if words is not None else {})}, sys.stdout,
                  ensure_ascii=False)
    sys.stdout.write("\n")
    if args.captions is not None:
        made = transcript_cues(transcript)
        args.captions.write_text(vtt(made) if args.captions.suffix.lower() == ".vtt" else srt(made), encoding="utf-8")
        log.info("%d captions written to %s", len(made), args.captions)
    log.info("language %s; %d piece(s) in %.1f s", transcript.language or "unknown", len(pieces),
             time.perf_counter() - t0)
    return 0


def _pcm_pieces(args: argparse.Namespace, piece_s: float = 0.1) -> Iterator[tuple[np.ndarray, int]]:
    """--live's audio as it comes, about `piece_s` at a time: raw PCM from stdin, or a file's
    samples (mono or [samples, channels]) with its rate."""
    if args.audio != "-":
        recording = decode_audio(_read(args.audio))
        step = max(1, int(recording.sample_rate * piece_s))
        for start in range(0, recording.samples.shape[0], step):
            yield recording.samples[start : start + step], recording.sample_rate
        return
    width = (2 if args.format == "s16" else 4) * args.channels
    dtype = "<i2" if args.format == "s16" else "<f4"
    want = max(width, int(args.rate * piece_s) * width)
    held = b""
    while True:
        data = sys.stdin.buffer.read1(want) if hasattr(sys.stdin.buffer, "read1") else sys.stdin.buffer.read(want)
        if not data:
            break
        held += data
        whole = len(held) - len(held) % width
        if whole:
            samples = np.frombuffer(held[:whole], dtype=dtype).astype(np.int16 if args.format == "s16" else np.float32)
            held = held[whole:]
            yield (samples if args.channels == 1 else samples.reshape(-1, args.channels)), args.rate
    if held:
        log.warning("the input ended inside a sample frame: %d byte(s) left out", len(held))


def _transcribe_live(args: argparse.Namespace, language: str | None) -> int:
    from hearth.listen import Listener, ListenOptions, LiveOptions

    for flag in ("timestamps", "captions"):
        if getattr(args, flag):
            raise InputError(f"--{flag} is not given live: transcribe the recording without --live for it")
    live = LiveOptions(chunk_s=args.chunk_s, rollback_tokens=args.rollback, max_segment_s=args.segment_s,
                       vad=args.vad, vad_threshold=args.vad_threshold, silence_s=args.silence_s,
                       offline_final=args.offline_final).checked()
    t0 = time.perf_counter()
    listener = Listener.load(args.model, args.backend, args.dtype or "float32", None, args.weights)
    log.info("loaded %s in %.1f s; listening", listener.checkpoint.path, time.perf_counter() - t0)
    options = ListenOptions(context=args.context, language=language, max_new_tokens=args.max_new_tokens)
    session = None
    in_place = sys.stderr.isatty() and not args.json
    shown = False
    heard = 0.0
    compute = 0.0
    for samples, rate in _pcm_pieces(args):
        if session is None:
            session = listener.live(options, live, sample_rate=rate)
        events = session.push(samples)
        heard += samples.shape[0] / rate
        for event in events:
            compute += event.compute_s
            shown = _show(event, args.json, in_place, shown)
    if session is None:
        raise InputError("no audio came: give raw PCM on stdin (e.g. arecord -f S16_LE -r 16000 | hearth "
                         "transcribe --live -), or a file")
    for event in session.finish():
        compute += event.compute_s
        shown = _show(event, args.json, in_place, shown)
    log.info("%.1f s of audio heard; %.1f s of computing (%.2f s a second of audio)", heard, compute,
             compute / heard if heard else 0.0)
    return 0


def _show(event: Any, as_json: bool, in_place: bool, shown: bool) -> bool:  # noqa: ANN401 (a LiveEvent)
    """An event on the streams; whether a partial line is on the terminal now."""
    if as_json:
        sys.stdout.write(json.dumps({"type": event.kind, "segment": event.segment, "offset": round(event.offset, 3),
                                     "audio_s": round(event.audio_s, 3), "language": event.language,
                                     "text": event.text, "stable": event.stable}, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return False
    if event.kind in ("speech_started", "speech_stopped"):
        return shown
    if event.kind == "partial":
        if in_place:
            sys.stderr.write("\r\x1b[2K" + event.text[-200:])
            sys.stderr.flush()
        return in_place
    if shown:
        sys.stderr.write("\r\x1b[2K")
        sys.stderr.flush()
    sys.stdout.write(event.text + "\n")
    sys.stdout.flush()
    return False
