"""The official qwen-tts 0.1.1 package as a test reference (test-only dependency).

Importing it pulls in 25 Hz tokenizer modules that import torchaudio, whose binary does not load
beside the CPU build of torch; the 12 Hz path never calls it, so a stub module stands in.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import io
import sys
import types
from pathlib import Path

import torch


def _stub_torchaudio() -> None:
    if "torchaudio" in sys.modules:
        return
    for name in ("torchaudio", "torchaudio.compliance", "torchaudio.compliance.kaldi"):
        module = types.ModuleType(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None)
        sys.modules[name] = module
    sys.modules["torchaudio"].compliance = sys.modules["torchaudio.compliance"]  # type: ignore[attr-defined]
    sys.modules["torchaudio.compliance"].kaldi = sys.modules["torchaudio.compliance.kaldi"]  # type: ignore[attr-defined]


def import_official():
    _stub_torchaudio()
    # The package prints a flash-attn banner on stdout at import.
    with contextlib.redirect_stdout(io.StringIO()):
        import qwen_tts
        from qwen_tts.core.models import modeling_qwen3_tts
        from qwen_tts.core.tokenizer_12hz import modeling_qwen3_tts_tokenizer_v2
    return qwen_tts, modeling_qwen3_tts, modeling_qwen3_tts_tokenizer_v2


def load_official(path: Path):
    """Qwen3TTSModel loaded from a checkpoint directory, fp32 on the CPU."""
    qwen_tts, _, _ = import_official()
    import transformers

    transformers.logging.set_verbosity_error()
    with contextlib.redirect_stdout(io.StringIO()):
        return qwen_tts.Qwen3TTSModel.from_pretrained(str(path), dtype=torch.float32)


def reference_tokenizer(path: Path):
    """The standard Qwen2 tokenizer (hub-id behaviour: standard split regex), slow Python version."""
    from transformers import Qwen2Tokenizer

    return Qwen2Tokenizer.from_pretrained(str(path))


def official_codes(
    model,
    input_ids: list[int],
    voice: str,
    language: str,
    *,
    instruct_ids: list[int] | None = None,
    text_mode: str = "whole",
    greedy: bool = False,
    seed: int = 0,
    max_new_tokens: int = 40,
) -> torch.Tensor:
    """Codes from the official generate, fed the same token ids; global RNG seeded with `seed`."""
    kwargs = model._merge_generate_kwargs(max_new_tokens=max_new_tokens)
    if greedy:
        kwargs.update(do_sample=False, subtalker_dosample=False)
    torch.manual_seed(seed)
    with torch.inference_mode():
        codes, _ = model.model.generate(
            input_ids=[torch.tensor([input_ids])],
            instruct_ids=[torch.tensor([instruct_ids]) if instruct_ids else None],
            languages=[language],
            speakers=[voice],
            non_streaming_mode=text_mode == "whole",
            **kwargs,
        )
    return codes[0]
