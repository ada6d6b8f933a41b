"""`hearth export MODEL DIR`: a self-contained model directory, converted once and copied anywhere.

DIR holds the checkpoint's files in the official layout (so anything that reads a checkpoint reads
it), the conversions its preset needs for both runtimes (OpenVINO where it is the default, x86 with
AVX-512; ONNX Runtime on ARM and on x86 without AVX-512), the stored voices made with that
checkpoint, and `hearth-export.json`: versions, the source checkpoint's identity, the preset, what
each conversion weighs and, with `--drift`, `hearth accuracy`'s figures. `hearth say/serve/wyoming
--model DIR` then load it with no conversion, here or on any machine with the same Hearth and
runtime versions (hearth/exported.py). The export is written beside DIR and renamed into place
when whole.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from hearth.checkpoint.exported import FORMAT, MANIFEST, find_export
from hearth.convert.export_files import RUNTIMES, copy_tree, tool_versions, tree_size

if TYPE_CHECKING:
    from hearth.backends.conversions import ConvertedModel
    from hearth.checkpoint.loading import Checkpoint

__all__ = ["PRESETS", "RUNTIMES", "Preset", "export_model"]

log = logging.getLogger("hearth.export")



@dataclass(frozen=True)
class Preset:
    """What a preset loads with (`load`, hearth.load's keywords), the language-model weights each
    runtime needs for it and the vocoder it runs there (None: that runtime does not run it)."""

    load: dict[str, Any]
    lm: dict[str, str | None]
    about: str
    vocoder: dict[str, str | None] = field(default_factory=lambda: {"openvino": "bf16", "onnxruntime": "onnxruntime"})


PRESETS = {
    "default": Preset({}, {"openvino": "int8", "onnxruntime": "int8"},
                      "int8 language model: OpenVINO's where it is the default, ONNX Runtime's elsewhere"),
    "fast": Preset({"fast": True}, {"openvino": None, "onnxruntime": "int4"},
                   "4-bit language model on ONNX Runtime (hearth say --fast)"),
    "small": Preset({"small": True}, {"openvino": None, "onnxruntime": "int4"},
                    "the fast preset with the vocoder's products in 8 bits, all on ONNX Runtime: the least memory "
                    "(hearth say --small)", {"openvino": None, "onnxruntime": "onnxruntime-int8"}),
    "mix": Preset({"backend": "onnxruntime", "weights": "mix"}, {"openvino": None, "onnxruntime": "mix"},
                  "talker and first codebook int8, the predictor's 15 codebooks 4-bit, on ONNX Runtime"),
}


def _drift(directory: Path, load: dict[str, Any], vocoder: str) -> dict[str, Any]:
    """`hearth accuracy --json` on the finished export (its fp32 reference converts into the cache)."""
    cmd = [sys.executable, "-m", "hearth.cli", "accuracy", "--model", str(directory), "--json", "--vocoder", vocoder]
    if load.get("small"):
        cmd.append("--small")
    elif load.get("fast"):
        cmd.append("--fast")
    for key in ("backend", "weights"):
        if load.get(key):
            cmd += [f"--{key}", str(load[key])]
    proc = subprocess.run(cmd, capture_output=True, encoding="utf-8", errors="replace", check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"hearth accuracy failed: {proc.stderr.strip()[-800:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = result["codebooks"]
    rest = sorted(r["snr_db"] for r in rows[1:])
    return {"backend": result["backend"], "weights": result["weights"], "frames": result["frames"],
            "codebook0_snr_db": rows[0]["snr_db"], "codebook0_top1": rows[0]["top1"],
            "codebooks_1_on_median_snr_db": rest[len(rest) // 2] if rest else None,
            "vocoder": result["vocoder"], "note": "random weights measure the format's arithmetic, not speech quality"}


def _convert(ckpt: Checkpoint, runtime: str, weights: str | None, vocoder: str | None) -> ConvertedModel:
    """One conversion (the language model in `weights`, else the vocoder `vocoder`), from the cache
    when it was made before."""
    from hearth.backends import openvino, ort, ort_vocoder
    from hearth.backends.formats import ORT_VOCODERS
    from hearth.convert import CONVERT_ON_FIRST_USE as converter

    if weights:
        return (openvino if runtime == "openvino" else ort).convert_language_model(ckpt, weights, converter=converter)
    if runtime == "openvino":
        return openvino.convert_vocoder(ckpt, cast(str, vocoder), converter=converter)
    return ort_vocoder.convert_vocoder(ckpt, weights=ORT_VOCODERS[cast(str, vocoder)], converter=converter)


def _preset_runtimes(preset: str, runtimes: Iterable[str]) -> tuple[Any, list[str]]:
    """The preset's recipe and the runtimes it is exported for (ValueError names what to change)."""
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    chosen = [r for r in RUNTIMES if r in set(runtimes)]
    unknown = sorted(set(runtimes) - set(RUNTIMES))
    if unknown or not chosen:
        raise ValueError(f"runtimes are {', '.join(RUNTIMES)}, got {', '.join(runtimes) or 'none'}")
    spec = PRESETS[preset]
    if not any(spec.lm[r] for r in chosen):
        raise ValueError(f"preset {preset} runs its language model on "
                         f"{', '.join(r for r in RUNTIMES if spec.lm[r])}: include it in --runtimes")
    return spec, [r for r in chosen if spec.lm[r] or spec.vocoder[r]]  # (small runs nothing on OpenVINO)


def _conversions(ckpt: Checkpoint, spec: Any, chosen: list[str], tmp: Path) -> list[dict[str, Any]]:  # noqa: ANN401
    """Each network the preset runs on each chosen runtime, converted (or found in the cache) and
    copied into the export."""
    steps = [(runtime, network) for runtime in chosen for network in ("language model", "vocoder")
             if (spec.lm[runtime] if network == "language model" else spec.vocoder[runtime])]
    converted = []
    for i, (runtime, network) in enumerate(steps, 1):
        weights = spec.lm[runtime] if network == "language model" else None
        what = f"{runtime} {network}" + (f" ({weights})" if weights else "")
        # Into the cache first (a hit where this machine has run the model), then linked in.
        log.info("export 2/4: the %s (%d of %d)", what, i, len(steps))
        done = _convert(ckpt, runtime, weights, spec.vocoder[runtime])
        target = tmp / "converted" / runtime / done.directory.name
        copy_tree(done.directory, target, skip=("compiled-",))  # not the runtime's ISA-specific blobs
        converted.append({"what": what, "dir": str(target.relative_to(tmp)), "mb": round(tree_size(target) / 1e6, 1),
                          "convert_s": round(float(cast(float, done.manifest.get("convert_s", 0.0))), 1)})
    return converted


def _stored_voices(ckpt: Checkpoint, tmp: Path) -> list[str]:
    """A Base checkpoint's stored voice profiles, copied into the export."""
    from hearth.voices.cloning import Cloner

    voices: list[str] = []
    if ckpt.config.model_type == "base":
        cloner = Cloner(ckpt)
        for name in cloner.usable():
            (tmp / "voices").mkdir(exist_ok=True)
            shutil.copy2(cloner.store.find(name), tmp / "voices" / f"{name}.safetensors")
            (tmp / "voices" / f"{name}.safetensors").chmod(0o644)  # (see `copy_tree`)
            voices.append(name)
    return voices


def export_model(model: str, out: Path, preset: str = "default", runtimes: Iterable[str] = RUNTIMES,
                 drift: bool = False) -> dict[str, Any]:
    """Write the export of `model` for `preset` into `out` (which must not exist); its manifest. A
    hearing model (Qwen3-ASR, Qwen3-ForcedAligner) is exported by hearth/convert/export_hearing.py."""
    from hearth.checkpoint.loading import open_checkpoint
    from hearth.convert.export_hearing import export_hearing, is_hearing_model
    from hearth.voices.cloning import checkpoint_identity

    if is_hearing_model(model):
        return export_hearing(model, out, preset, runtimes, drift)
    spec, chosen = _preset_runtimes(preset, runtimes)
    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; export into a new directory (or remove it first)")
    ckpt = open_checkpoint(model)
    if find_export(ckpt.path) is not None:
        log.info("%s is an export itself; exporting its checkpoint files again", ckpt.path)
    t0 = time.perf_counter()
    tmp = out.with_name(out.name + f".part{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir(parents=True)
        log.info("export 1/4: the checkpoint's files from %s", ckpt.path)
        checkpoint_bytes = copy_tree(ckpt.path, tmp)
        manifest: dict[str, Any] = {
            "format": FORMAT, "preset": preset, "about": spec.about,
            "created": datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat(),
            "versions": tool_versions(),
            "source": {"model": model, "path": str(ckpt.path), "identity": checkpoint_identity(ckpt),
                       "kind": ckpt.config.kind},
            "load_options": dict(spec.load) if len(chosen) == 2 else
            {**spec.load, "backend": chosen[0], "vocoder": spec.vocoder[chosen[0]]},
            "runtimes": chosen,
        }
        converted = _conversions(ckpt, spec, chosen, tmp)
        log.info("export 3/4: stored voices")
        voices = _stored_voices(ckpt, tmp)
        manifest.update(converted=converted, voices=voices,
                        checkpoint_mb=round(checkpoint_bytes / 1e6, 1), export_s=round(time.perf_counter() - t0, 1))
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        if drift:
            log.info("export 4/4: drift against fp32 (hearth accuracy)")
            load = manifest["load_options"]
            figures = []
            for runtime in chosen:
                if spec.lm[runtime]:
                    figures.append(_drift(tmp, {**load, "backend": runtime, "weights": spec.lm[runtime],
                                                "fast": None}, cast(str, spec.vocoder[runtime])))
            manifest["drift"] = figures
        else:
            manifest["drift"] = "not measured (hearth export --drift, or hearth accuracy --model DIR)"
        manifest["total_mb"] = round(tree_size(tmp) / 1e6, 1)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest
