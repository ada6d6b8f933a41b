"""`hearth export` of a hearing model (Qwen3-ASR, Qwen3-ForcedAligner): the checkpoint's files and
its networks converted for each chosen runtime in int8 (the compiled listening backends' default),
with the same manifest a speech export has. `Listener.load` / `Aligner.load` / `--listen DIR` then
read the conversions from the directory (`conversions.cache_entry` looks in an export first), so a
machine without torch (the runtime-only install, the container and add-on images) listens with it.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import shutil
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hearth.checkpoint.exported import FORMAT, MANIFEST
from hearth.convert.export_files import RUNTIMES, copy_tree, tool_versions, tree_size

__all__ = ["HEARING_WEIGHTS", "export_hearing", "is_hearing_model"]

log = logging.getLogger("hearth.export")

HEARING_WEIGHTS = "int8"
_HUB_NAMES = ("qwen3-asr", "qwen3-forcedaligner")


def is_hearing_model(model: str) -> bool:
    """Whether `model` names a Qwen3-ASR or Qwen3-ForcedAligner: a directory by its config.json's
    model_type, a hub id by its name (the released ones are Qwen/Qwen3-ASR-* and
    Qwen/Qwen3-ForcedAligner-*)."""
    path = Path(model).expanduser()
    if path.is_dir():
        try:
            config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False  # (the speech export says what is wrong with it)
        return isinstance(config, dict) and config.get("model_type") == "qwen3_asr"
    return any(name in str(model).lower() for name in _HUB_NAMES)


def export_hearing(model: str, out: Path, preset: str, runtimes: Iterable[str], drift: bool) -> dict[str, Any]:
    """Write the export of the hearing model `model` into `out` (which must not exist); its manifest."""
    from hearth.backends.asr_compiled import convert_asr
    from hearth.checkpoint.asr_loading import open_asr_checkpoint
    from hearth.convert import CONVERT_ON_FIRST_USE

    if preset != "default":
        raise ValueError(f"preset {preset} is for speech models; a Qwen3-ASR or Qwen3-ForcedAligner export has "
                         f"its networks in {HEARING_WEIGHTS} on each runtime (--preset default)")
    if drift:
        raise ValueError("--drift measures speech models; for a hearing model compare transcripts with "
                         "hearth transcribe --listen-weights fp32")
    chosen = [r for r in RUNTIMES if r in set(runtimes)]
    unknown = sorted(set(runtimes) - set(RUNTIMES))
    if unknown or not chosen:
        raise ValueError(f"runtimes are {', '.join(RUNTIMES)}, got {', '.join(runtimes) or 'none'}")
    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; export into a new directory (or remove it first)")
    ckpt = open_asr_checkpoint(model)
    t0 = time.perf_counter()
    tmp = out.with_name(out.name + f".part{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir(parents=True)
        log.info("export 1/2: the checkpoint's files from %s", ckpt.path)
        checkpoint_bytes = copy_tree(ckpt.path, tmp)
        converted = []
        for i, runtime in enumerate(chosen, 1):
            log.info("export 2/2: the %s networks for %s (%d of %d)", ckpt.kind, runtime, i, len(chosen))
            done = convert_asr(ckpt, runtime, HEARING_WEIGHTS, CONVERT_ON_FIRST_USE)  # (into the cache first)
            target = tmp / "converted" / runtime / done.directory.name
            copy_tree(done.directory, target, skip=("compiled-",))  # not the runtime's ISA-specific blobs
            converted.append({"what": f"{runtime} {ckpt.kind} ({HEARING_WEIGHTS})",
                              "dir": str(target.relative_to(tmp)), "mb": round(tree_size(target) / 1e6, 1),
                              "convert_s": round(float(done.manifest.get("convert_s", 0.0)), 1)})  # type: ignore[arg-type]
        manifest: dict[str, Any] = {
            "format": FORMAT, "preset": preset, "about": f"{ckpt.kind}: {HEARING_WEIGHTS} networks",
            "created": datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat(),
            "versions": tool_versions(), "source": {"model": model, "path": str(ckpt.path), "kind": ckpt.kind},
            "load_options": {}, "runtimes": chosen, "converted": converted, "voices": [],
            "checkpoint_mb": round(checkpoint_bytes / 1e6, 1), "export_s": round(time.perf_counter() - t0, 1),
            "drift": "not measured (hearing models: compare transcripts with --listen-weights fp32)",
        }
        manifest["total_mb"] = round(tree_size(tmp) / 1e6, 1)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest
