"""Test helpers around the official qwen-asr 0.0.6 package: checkpoints written by its own classes,
and its models loaded as the comparison needs them.

Two things are set on the loaded official models, each for a stated reason (docs/listen.md):
  * the tokenizer's split regex is the standard Qwen2 one. Loading a local directory whose
    config.json names transformers 4.57.3-4.57.x, `fix_mistral_regex=True` (which qwen-asr passes)
    makes transformers swap in a Mistral regex; a hub-id load, and the models' training, use Qwen2's.
    `test_the_local_folder_regex_quirk` shows the difference.
  * the audio encoder attends within its windows: its transformers path on the CPU builds the
    window mask (`_prepare_attention_mask`) but never passes it, so `sdpa` attends across the whole
    input, unlike its flash-attention and vLLM paths. `windowed=False` leaves it as shipped
    (`test_the_shipped_cpu_encoder_attends_across_windows`).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any

import torch

from hearth.checkpoint.tokenizer import QWEN2_SPLIT_PATTERN
from hearth.tools.random_asr_checkpoint import ASR_TEMPLATE, asr_files

__all__ = ["load_official_aligner", "load_official_asr", "official_prompt", "write_official_checkpoint"]

IM_END, END_OF_TEXT = 151645, 151643


@contextlib.contextmanager
def _quiet():
    """A load without the package's output, and without formatting its processor for a log line no
    one sees (hearth.tools.reference.processor_repr_skipped)."""
    import transformers

    from hearth.tools.reference import processor_repr_skipped

    transformers.logging.set_verbosity_error()
    with contextlib.redirect_stdout(io.StringIO()), processor_repr_skipped():
        yield


def _qwen2_regex(tokenizer) -> None:
    import tokenizers

    tokenizer.backend_tokenizer.pre_tokenizer[0] = tokenizers.pre_tokenizers.Split(
        pattern=tokenizers.Regex(QWEN2_SPLIT_PATTERN), behavior="isolated", invert=False)


def _window_the_encoder(thinker) -> None:
    encoder = thinker.audio_tower
    for layer in encoder.layers:
        def forward(hidden_states, cu_seqlens, attention_mask=None, _inner=layer.forward, **kwargs):
            if attention_mask is None:  # the mask the encoder builds for non-flash attention
                attention_mask = encoder._prepare_attention_mask(hidden_states, cu_seqlens)
            return _inner(hidden_states, cu_seqlens, attention_mask=attention_mask, **kwargs)

        layer.forward = forward


def load_official_asr(path: Path | str, max_new_tokens: int = 40, windowed: bool = True, qwen2_regex: bool = True):
    """qwen_asr.Qwen3ASRModel from a directory, fp32 on the CPU."""
    from qwen_asr import Qwen3ASRModel

    with _quiet():
        model = Qwen3ASRModel.from_pretrained(str(path), dtype=torch.float32, max_new_tokens=max_new_tokens)
    if qwen2_regex:
        _qwen2_regex(model.processor.tokenizer)
    if windowed:
        _window_the_encoder(model.model.thinker)
    return model


def load_official_aligner(path: Path | str, windowed: bool = True, qwen2_regex: bool = True):
    """qwen_asr.Qwen3ForcedAligner from a directory, fp32 on the CPU."""
    from qwen_asr import Qwen3ForcedAligner

    with _quiet():
        aligner = Qwen3ForcedAligner.from_pretrained(str(path), dtype=torch.float32)
    if qwen2_regex:
        _qwen2_regex(aligner.processor.tokenizer)
    if windowed:
        _window_the_encoder(aligner.model.thinker)
    return aligner


def official_prompt(model, samples, context: str = "", language: str | None = None) -> dict[str, Any]:
    """The official processor's output (input_ids, input_features, ...) for one request, its audio
    first normalized as `transcribe` normalizes it (scaled down by a peak above 1)."""
    from qwen_asr.inference.utils import normalize_audios

    text = model._build_text_prompt(context=context, force_language=language)
    audio = normalize_audios((samples, 16000))[0]
    return model.processor(text=[text], audio=[audio], return_tensors="pt", padding=True)


def _randomize(model, seed: int, tied: bool, stop_gain: float) -> None:
    """Weights that make a random decoder's choices depend on the audio (the classes' own initial
    N(0, 0.02) makes every output one repeated token), drawn uniformly, unlike Hearth's writer (normal):
    the engine must not depend on either writer's choices. One stop token's head row is scaled up so
    that some transcripts end before their token limit."""
    gen = torch.Generator().manual_seed(seed)

    def uniform(shape, scale: float) -> torch.Tensor:
        return (torch.rand(shape, generator=gen) * 2 - 1) * scale * math.sqrt(3)  # std `scale`

    asr = model.thinker.lm_head.weight.shape[0] > IM_END  # a vocabulary head (the aligner's scores classes)
    # Small token embeddings where they would otherwise drown what the layers add: a tied head
    # would echo its input token, an aligner would give every <timestamp> one class.
    embedding = 1.0 if asr and not tied else 0.06 if tied else 0.1
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.copy_(uniform(p.shape, 0.03))
            elif "norm" in name:
                p.copy_(1 + uniform(p.shape, 0.1))
            elif "embed_tokens" in name:
                p.copy_(uniform(p.shape, embedding))
            else:
                p.copy_(uniform(p.shape, 1 / math.sqrt(math.prod(p.shape[1:]))))
        if asr:
            model.thinker.lm_head.weight[END_OF_TEXT if tied else IM_END] *= stop_gain


def write_official_checkpoint(out: Path, config: dict[str, Any], seed: int, stop_gain: float = 4.0) -> Path:
    """A checkpoint written by qwen-asr's classes: the model by `Qwen3ASRForConditionalGeneration(
    config).save_pretrained`, the processor files by `Qwen3ASRProcessor.save_pretrained` (a
    WhisperFeatureExtractor and the Qwen2 tokenizer of the release's added tokens)."""
    from qwen_asr.core.transformers_backend import (
        Qwen3ASRConfig,
        Qwen3ASRForConditionalGeneration,
        Qwen3ASRProcessor,
    )
    from transformers import Qwen2TokenizerFast, WhisperFeatureExtractor

    out = Path(out)
    aligner = "forced_aligner" in config["thinker_config"]["model_type"]
    tokenizer_dir = asr_files(out / "tokenizer-source", config)
    with _quiet():
        tokenizer = Qwen2TokenizerFast.from_pretrained(str(tokenizer_dir))
        features = WhisperFeatureExtractor(feature_size=128, sampling_rate=16000, hop_length=160, chunk_length=30,
                                           n_fft=400, padding_value=0.0, return_attention_mask=True)
        processor = Qwen3ASRProcessor(feature_extractor=features, tokenizer=tokenizer,
                                      chat_template=None if aligner else ASR_TEMPLATE)
        processor.save_pretrained(str(out))
        torch.manual_seed(seed)
        official_config = Qwen3ASRConfig(**{k: v for k, v in config.items() if k != "transformers_version"})
        model = Qwen3ASRForConditionalGeneration(official_config).eval()
        _randomize(model, seed, config["thinker_config"]["text_config"]["tie_word_embeddings"], stop_gain)
        model.save_pretrained(str(out))
    for path in tokenizer_dir.iterdir():
        path.unlink()
    tokenizer_dir.rmdir()
    if aligner:  # the config class writes its own model_type; the release (and qwen-asr's head choice) needs this
        data = json.loads((out / "config.json").read_text(encoding="utf-8"))
        data["thinker_config"]["model_type"] = config["thinker_config"]["model_type"]
        (out / "config.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    return out
