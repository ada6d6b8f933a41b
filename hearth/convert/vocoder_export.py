"""The vocoder's streaming step exported by torch (`torch.export`), which each runtime's converter
turns into its own graph, and the manifest of a converted vocoder."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hearth.backends.conversions import ConvertedModel, publish
from hearth.checkpoint.loading import Checkpoint

if TYPE_CHECKING:
    import torch
    from torch.export import ExportedProgram

__all__ = ["export_step", "publish_vocoder"]

log = logging.getLogger(__name__)


def export_step(ckpt: Checkpoint, frames: int, polynomial_sine: bool = True
                ) -> tuple[ExportedProgram, list[torch.Tensor], int]:
    """The streaming step (`ov_codec.StreamingStep`) of this checkpoint's vocoder, exported by
    torch with 1 to `frames` frames per call; its fresh state; its fp32 weight bytes."""
    import torch

    from hearth.convert.ov_codec import StreamingStep, initial_state
    from hearth.model.weights import load_codec

    decoder = load_codec(ckpt, torch.float32)
    fp32_bytes = sum(p.numel() * 4 for p in decoder.parameters())
    step = StreamingStep(decoder, polynomial_sine).eval()
    state = initial_state(decoder)
    codes = torch.zeros(frames, ckpt.codec.num_quantizers, dtype=torch.long)
    n = torch.export.Dim("frames", min=1, max=frames)
    dynamic = ({0: n}, None, None, tuple(None for _ in state))  # only the frames per call vary
    with torch.no_grad():
        exported = torch.export.export(step, (codes, torch.tensor(0), torch.tensor(frames), *state),
                                       dynamic_shapes=dynamic)
    return exported, state, fp32_bytes


def publish_vocoder(tmp: Path, directory: Path, key_source: dict[str, object], state: list[torch.Tensor],
                    fp32_bytes: int, stored_bytes: int, frames: int, t0: float) -> ConvertedModel:
    """A converted vocoder's manifest (what it weighs, its state's shapes), then the conversion
    moved into place (`conversions.publish`)."""
    manifest = {
        "key": key_source, "parts": {"vocoder": {"fp32_bytes": fp32_bytes, "stored_bytes": stored_bytes}},
        "state_shapes": [list(s.shape) for s in state], "frames": frames, "convert_s": time.perf_counter() - t0,
    }
    log.info("converted the vocoder in %.1f s", manifest["convert_s"])
    return publish(tmp, directory, manifest)
