"""`hearth export MODEL DIR`: convert once, copy the directory to any machine, load it with --model."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from hearth.errors import InputError

__all__ = ["add_parsers"]

log = logging.getLogger("hearth")


def add_parsers(sub: Any) -> None:
    from hearth.convert.export_model import PRESETS, RUNTIMES

    p = sub.add_parser("export", help="a self-contained model directory: converted once, loaded anywhere with --model")
    p.add_argument("model", help="checkpoint directory or hub id: a speech model, Qwen3-ASR or Qwen3-ForcedAligner "
                                 "(an export is exported again from its files)")
    p.add_argument("out", type=Path, help="the directory to write (must not exist)")
    p.add_argument("--preset", choices=tuple(PRESETS), default="default",
                   help="; ".join(f"{name}: {preset.about}" for name, preset in PRESETS.items()))
    p.add_argument("--runtimes", default=",".join(RUNTIMES), metavar="R[,R]",
                   help=f"the runtimes to convert for (default {','.join(RUNTIMES)}: any machine's default; "
                        "onnxruntime alone is what ARM boards run)")
    p.add_argument("--drift", action="store_true",
                   help="also measure each format against fp32 with hearth accuracy and keep the figures")
    p.add_argument("--json", action="store_true", help="print the export's manifest")
    p.set_defaults(run=_export)


def _export(args: argparse.Namespace) -> int:
    from hearth.convert.export_model import export_model

    runtimes = [r.strip() for r in args.runtimes.split(",") if r.strip()]
    try:
        manifest = export_model(args.model, args.out, args.preset, runtimes, args.drift)
    except (ValueError, FileExistsError) as e:
        raise InputError(str(e)) from None
    if args.json:
        json.dump(manifest, sys.stdout)
        sys.stdout.write("\n")
        return 0
    for part in manifest["converted"]:
        print(f"  {part['what']}: {part['mb']:.0f} MB ({part['dir']})", file=sys.stderr)
    print(f"exported {manifest['source']['path']} ({args.preset}) to {args.out} in {manifest['export_s']:.0f} s: "
          f"{manifest['total_mb']:.0f} MB; copy it anywhere and run {_try(manifest, args.out)}",
          file=sys.stderr)
    return 0


def _try(manifest: dict[str, Any], out: Path) -> str:
    """The command that uses the export, by its kind of model."""
    kind = manifest["source"].get("kind")
    if kind == "Qwen3-ASR":
        return f"hearth transcribe RECORDING.wav --model {out} (or --listen {out} on hearth serve and wyoming)"
    if kind == "Qwen3-ForcedAligner":
        return f"hearth transcribe RECORDING.wav --aligner {out}"
    return f"hearth say 'Hello.' --model {out}"
