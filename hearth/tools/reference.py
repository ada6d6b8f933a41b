"""Adapter for the official `qwen-tts` 0.1.1 package, Hearth's correctness and speed reference.

Used by the tests and by `hearth bench --compare-official`; never by the engine. Install it with
`pip install --no-deps qwen-tts==0.1.1` (its own pins drag in gradio and a torchaudio that does not
load beside the CPU build of torch; `make setup` does this).

Importing it pulls in 25 Hz tokenizer modules that import torchaudio; the 12 Hz path never calls
it, so a stub module stands in.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import io
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import torch

__all__ = ["import_official", "load_official", "official_input_ids", "official_generate"]


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
    """(qwen_tts, its talker modeling module, its 12 Hz tokenizer modeling module)."""
    _stub_torchaudio()
    try:
        # The package prints a flash-attn banner on stdout at import; stdout is for data.
        with contextlib.redirect_stdout(io.StringIO()):
            import qwen_tts
            from qwen_tts.core.models import modeling_qwen3_tts
            from qwen_tts.core.tokenizer_12hz import modeling_qwen3_tts_tokenizer_v2
    except ImportError as e:
        raise RuntimeError(
            "the official package is not installed: pip install --no-deps qwen-tts==0.1.1 "
            "transformers==4.57.3 accelerate==1.12.0 einops librosa soundfile sox onnxruntime"
        ) from e
    return qwen_tts, modeling_qwen3_tts, modeling_qwen3_tts_tokenizer_v2


@contextlib.contextmanager
def processor_repr_skipped() -> Iterator[None]:
    """transformers' ProcessorMixin.from_pretrained logs f"Processor {processor}" at info level:
    the whole processor is formatted, its tokenizer's 151k-token vocabulary as JSON, whether the
    line is shown or not (0.7 s of a 1.4 s load of a tiny checkpoint). Meanwhile a processor's repr
    is its class's name; nothing else of the package changes."""
    from transformers.processing_utils import ProcessorMixin

    saved = ProcessorMixin.__repr__
    ProcessorMixin.__repr__ = lambda self: type(self).__name__  # type: ignore[method-assign]
    try:
        yield
    finally:
        ProcessorMixin.__repr__ = saved  # type: ignore[method-assign]


def load_official(path: Path | str):
    """Qwen3TTSModel loaded from a checkpoint directory, fp32 on the CPU."""
    qwen_tts, _, _ = import_official()
    import transformers

    transformers.logging.set_verbosity_error()
    with contextlib.redirect_stdout(io.StringIO()), processor_repr_skipped():
        return qwen_tts.Qwen3TTSModel.from_pretrained(str(path), dtype=torch.float32)


def official_input_ids(model, text: str) -> list[int]:
    """The official wrapper's own tokenization of the prompt (its processor, its regex)."""
    return model._tokenize_texts([model._build_assistant_text(text)])[0][0].tolist()


def official_generate(
    model,
    input_ids: list[int],
    voice: str | None,
    language: str,
    *,
    voice_clone_prompt: dict | None = None,
    ref_ids: list[int] | None = None,
    instruct_ids: list[int] | None = None,
    text_mode: str = "whole",
    greedy: bool = False,
    seed: int = 0,
    max_new_tokens: int = 40,
    eos_token_id: int | None = None,
) -> torch.Tensor:
    """Codes [frames, 16] from the official generate, fed these token ids; global RNG seeded with `seed`.
    A Base checkpoint's voice comes as `voice_clone_prompt` (lists of one, as its
    `generate_voice_clone` builds them) with `ref_ids` (the reference transcript's ids) for in-context mode."""
    kwargs = model._merge_generate_kwargs(max_new_tokens=max_new_tokens)
    if greedy:
        kwargs.update(do_sample=False, subtalker_dosample=False)
    if eos_token_id is not None:
        kwargs["eos_token_id"] = eos_token_id
    torch.manual_seed(seed)
    with torch.inference_mode():
        codes, _ = model.model.generate(
            input_ids=[torch.tensor([input_ids])],
            instruct_ids=[torch.tensor([instruct_ids]) if instruct_ids else None],
            ref_ids=None if voice_clone_prompt is None else [torch.tensor([ref_ids]) if ref_ids else None],
            voice_clone_prompt=voice_clone_prompt,
            languages=[language],
            speakers=None if voice_clone_prompt is not None else [voice],
            non_streaming_mode=text_mode == "whole",
            **kwargs,
        )
    return codes[0]


def write_official_checkpoint(out: Path | str, config: dict, codec: dict, seed: int = 0) -> Path:
    """A random checkpoint in the official layout whose weights come from the official classes'
    own initialisation (`torch.manual_seed(seed)`, then the talker and the speech tokenizer built
    from `config` and `codec`), written as they store them: the talker in bf16, the speech
    tokenizer in fp32. Its statistics differ from `random_checkpoint.write_checkpoint`'s (zero
    biases, identity norms, N(0, 0.02) everywhere, empty codebooks), which is the point: the engine
    must not depend on either writer's choices."""
    from safetensors.torch import save_file

    from hearth.tools.random_checkpoint import write_checkpoint

    out = write_checkpoint(Path(out), config, codec, seed=seed)  # the files beside the weights
    qwen_tts, _, _ = import_official()
    from qwen_tts.core.models import Qwen3TTSConfig, Qwen3TTSForConditionalGeneration
    from qwen_tts.core.tokenizer_12hz.configuration_qwen3_tts_tokenizer_v2 import Qwen3TTSTokenizerV2Config
    from qwen_tts.core.tokenizer_12hz.modeling_qwen3_tts_tokenizer_v2 import Qwen3TTSTokenizerV2Model

    torch.manual_seed(seed)
    with contextlib.redirect_stdout(io.StringIO()):
        model = Qwen3TTSForConditionalGeneration(Qwen3TTSConfig(**config))
        tokenizer = Qwen3TTSTokenizerV2Model(Qwen3TTSTokenizerV2Config(**codec))

    def save(module: torch.nn.Module, path: Path, dtype: torch.dtype, skip: str | None = None) -> None:
        tensors = {name: t.detach().to(dtype).contiguous() for name, t in module.state_dict().items()
                   if not (skip and name.startswith(skip)) and t.is_floating_point()}
        save_file(tensors, str(path), metadata={"format": "pt"})

    save(model, out / "model.safetensors", torch.bfloat16)
    # As released: the speech tokenizer's encoder is stored for Base checkpoints only.
    save(tokenizer, out / "speech_tokenizer" / "model.safetensors", torch.float32,
         None if config.get("tts_model_type") == "base" else "encoder.")
    return out
