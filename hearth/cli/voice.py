"""`hearth voice add|list|remove`: cloned voices kept as profiles, used by name everywhere."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from hearth.checkpoint.loading import open_checkpoint
from hearth.cli.arguments import add_model
from hearth.voices.cloning import Cloner, ReferenceAudioError, VoiceStore, checkpoint_identity, read_reference

__all__ = ["add_parsers"]

log = logging.getLogger("hearth")


def add_parsers(sub: Any) -> None:
    voice = sub.add_parser("voice", help="cloned voices (Base checkpoints): add, list, remove")
    actions = voice.add_subparsers(dest="action", required=True, parser_class=type(voice))

    add = actions.add_parser("add", help="clone a voice from reference audio and store it under a name")
    add.add_argument("name", help="the voice's name (letters, digits, - and _)")
    add.add_argument("--audio", type=Path, required=True,
                     help="reference recording (WAV, FLAC, OGG or MP3; any sample rate; 3 to 10 s of clear speech)")
    add.add_argument("--text", default=None, help="what the reference says (needed unless --x-vector-only)")
    add.add_argument("--x-vector-only", action="store_true",
                     help="clone from the speaker embedding alone (no transcript; less alike)")
    add.add_argument("--replace", action="store_true", help="replace a stored voice of the same name")
    add.add_argument("--no-prime", action="store_true",
                     help="do not let the default (compiled) vocoder hear the reference now; the voice's first "
                          "sentence in a process then does (a 10 s reference: ~7 s on a 2-core CPU)")
    add_model(add)
    add.set_defaults(run=_add)

    ls = actions.add_parser("list", help="the stored voices")
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.add_argument("--model", default=None,
                    help="only the voices made with this checkpoint (a directory or hub id; default: every voice)")
    ls.set_defaults(run=_list)

    rm = actions.add_parser("remove", help="delete a stored voice")
    rm.add_argument("name")
    rm.set_defaults(run=_remove)


def _add(args: argparse.Namespace) -> int:
    name = VoiceStore.check_name(args.name)
    if not args.x_vector_only and (args.text is None or not args.text.strip()):
        raise ReferenceAudioError("give the reference's transcript with --text (or clone from the voice alone with "
                                  "--x-vector-only)")
    if not args.audio.is_file():
        raise ReferenceAudioError(f"--audio {args.audio}: no such file")
    ckpt = open_checkpoint(args.model)
    cloner = Cloner(ckpt)
    if not args.replace and cloner.store.path(name).exists():
        raise ReferenceAudioError(
            f"a voice named {name!r} exists; pass --replace, remove it (hearth voice remove {name}) "
            "or choose another name")
    audio, rate = read_reference(args.audio)
    t0 = time.perf_counter()
    profile = cloner.add(name, audio, rate, args.text, x_vector_only=args.x_vector_only, replace=args.replace)
    v = profile.voice
    detail = "speaker embedding only" if v.codes is None else f"{v.codes.shape[0]} reference frames"
    log.info("stored voice %r (%s; %.1f s of reference at %d Hz) in %s, in %.1f s; speak with: hearth say --model %s "
             "--voice %s 'Hello.'", name, detail, profile.reference_s, rate, cloner.store.path(name),
             time.perf_counter() - t0, args.model, name)
    if v.codes is not None and not args.no_prime:
        _prime(ckpt, v.codes)
    return 0


def _prime(ckpt: Any, codes: Any) -> None:  # noqa: ANN401
    """Let the default vocoder hear the reference now and keep its state, so that the voice's first
    sentence in any later process starts as fast as the next ones."""
    from hearth.backends import create_vocoder
    from hearth.backends.settings import backend_options
    from hearth.convert import CONVERT_ON_FIRST_USE
    from hearth.voices.primed_states import prime_on_disk

    options = backend_options()
    if not options.uses_openvino or options.vocoder_precision == "torch":
        return  # a torch vocoder keeps no states on disk: the first sentence primes it
    t0 = time.perf_counter()
    try:
        prime_on_disk(create_vocoder(ckpt, options, CONVERT_ON_FIRST_USE), codes)
    except Exception as e:  # noqa: BLE001 - the voice is stored; its first sentence will prime instead
        log.warning("could not prime the vocoder for this voice now (%s); its first sentence will", e)
        return
    log.info("the vocoder heard the reference (%.1f s): the voice's first sentence starts as fast as the next",
             time.perf_counter() - t0)


def _list(args: argparse.Namespace) -> int:
    store = VoiceStore()
    names = store.names()
    if args.model is not None:  # a profile speaks only with the checkpoint it was made with
        mine = checkpoint_identity(open_checkpoint(args.model))
        names = [n for n in names if store.checkpoint_of(n) == mine]
    rows = []
    for name in names:
        try:
            p = store.load(name)
            rows.append({"name": p.name, "mode": "in_context" if p.voice.in_context else "x_vector_only",
                         "transcript": p.transcript, "reference_s": p.reference_s, "model": p.model,
                         "created": p.created})
        except ReferenceAudioError as e:
            rows.append({"name": name, "error": str(e)})
    if args.json:
        json.dump({"voices": rows, "directory": str(store.root)}, sys.stdout)
        sys.stdout.write("\n")
    elif not rows:
        made = f" made with {args.model}" if args.model is not None else ""
        print(f"no stored voices{made} (in {store.root}); add one: hearth voice add NAME --audio REF.wav "
              f"--text '...'{' --model ' + args.model if made else ''}", file=sys.stderr)
    else:
        for r in rows:
            what = r.get("error") or f"{r['mode']}, {r['reference_s']:.1f} s, made with {r['model']}"
            print(f"{r['name']}: {what}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    store = VoiceStore()
    store.remove(args.name)
    log.info("removed voice %r", VoiceStore.check_name(args.name))
    return 0
