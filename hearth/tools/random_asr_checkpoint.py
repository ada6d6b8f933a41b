"""Write random-weight Qwen3-ASR and Qwen3-ForcedAligner checkpoints in the official Hugging Face
layout: config.json, generation_config.json, preprocessor_config.json, the tokenizer files (the real
Qwen2 vocabulary, see `random_checkpoint.qwen2_vocabulary`), chat_template.json (ASR) and
model.safetensors (bf16, as released).

    python -m hearth.tools.random_asr_checkpoint OUT_DIR --model asr|aligner --size tiny|0.6b|1.7b [--seed N]

Where the released numbers come from:
  * Qwen3-ASR-0.6B and Qwen3-ForcedAligner-0.6B: their config.json (ModelScope "master" revision,
    transformers_version 4.57.6) as vendored in the public repository zhangxu1978/ASR
    (Qwen3-ASR-0.6B/config.json, Qwen3-ForcedAligner-0.6B/config.json), with the aligner's
    generation_config.json and tokenizer_config.json from the same place.
  * Qwen3-ASR-1.7B: no released config.json was found. Its shapes (audio encoder 24 layers of 1024,
    16 heads, FFN 4096, output 2048; decoder 28 layers of 2048, FFN 6144, 16 heads, 8 KV heads, head
    128) agree across independent ports (antirez/qwen-asr MODEL.md, ivan-digital/qwen3-asr-swift
    docs/asr-model.md, FluidInference's export metadata); the rest (tied embeddings as in Qwen3-1.7B,
    max_position_embeddings, rope) is assumed equal to the 0.6B's.
  * preprocessor_config.json: not found for either model; WhisperFeatureExtractor's defaults with
    128 mel bins (what qwen-asr's processor needs and every port reproduces).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from hearth.checkpoint.asr_config import AsrConfig
from hearth.listen.languages import LANGUAGES
from hearth.model.asr_weights import asr_tensor_shapes
from hearth.tools.random_checkpoint import FIRST_SPECIAL_ID, qwen2_vocabulary

__all__ = ["ASR_SPECIAL_TOKENS", "ASR_TEMPLATE", "asr_files", "reference_asr_config", "tiny_asr_config",
           "write_asr_checkpoint"]

_NOT_SPECIAL = {"<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
                "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
                "<non_speech>", "<asr_text>", "<timestamp>"}
# ids 151643.. in this order, as in the released tokenizer_config.json (special unless listed above)
ASR_SPECIAL_TOKENS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>",
    "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
    "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>",
    "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>",
    "<think>", "</think>", "<|audio_start|>", "<|audio_end|>", "<tts_pad>", "<tts_text_bos>", "<tts_text_eod>",
    "<tts_text_bos_single>", "<non_speech>", "<|audio_pad|>", *(f"<blank{i}>" for i in range(1, 28)),
    "<asr_text>", "<timestamp>",
]
_ALIGNER_LANGUAGES = ["Chinese", "Cantonese", "English", "German", "Spanish", "French", "Italian", "Portuguese",
                      "Russian", "Korean", "Japanese"]

# Hearth's own template giving qwen-asr's layout (hearth/listen/prompt.py): the system turn holds
# the context, the user turn one audio block per audio item.
ASR_TEMPLATE = (
    "{%- set ns = namespace(system='', audio='') -%}"
    "{%- for m in messages -%}"
    "{%- if m.role == 'system' and m.content is string -%}{%- set ns.system = ns.system + m.content -%}"
    "{%- elif m.content is not string -%}{%- for part in m.content if part.type == 'audio' -%}"
    "{%- set ns.audio = ns.audio + '<|audio_start|><|audio_pad|><|audio_end|>' -%}{%- endfor -%}{%- endif -%}"
    "{%- endfor -%}"
    "{{- '<|im_start|>system\\n' + ns.system + '<|im_end|>\\n<|im_start|>user\\n' + ns.audio + '<|im_end|>\\n' -}}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def reference_asr_config(model: str = "asr", size: str = "0.6b") -> dict[str, Any]:
    """config.json with the released shapes: ASR 0.6B or 1.7B, aligner 0.6B."""
    if model == "aligner" and size != "0.6b":
        raise ValueError("Qwen3-ForcedAligner is released at 0.6B only")
    wide = model == "asr" and size == "1.7b"
    aligner = model == "aligner"
    big_encoder = wide or aligner  # the 1.7B ASR and the aligner share the larger audio encoder
    audio = {"num_mel_bins": 128, "encoder_layers": 24 if big_encoder else 18,
             "encoder_attention_heads": 16 if big_encoder else 14, "encoder_ffn_dim": 4096 if big_encoder else 3584,
             "d_model": 1024 if big_encoder else 896, "output_dim": 2048 if wide else 1024, "n_window": 50,
             "n_window_infer": 800, "conv_chunksize": 500, "downsample_hidden_size": 480, "max_source_positions": 1500,
             "activation_function": "gelu", "scale_embedding": False, "dropout": 0, "attention_dropout": 0,
             "activation_dropout": 0, "initializer_range": 0.02, "model_type": "qwen3_asr_audio_encoder"}
    text = {"vocab_size": 152064 if aligner else 151936, "hidden_size": 2048 if wide else 1024,
            "intermediate_size": 6144 if wide else 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
            "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu", "rms_norm_eps": 1e-06,
            "rope_theta": 1000000, "max_position_embeddings": 8192 if aligner else 65536, "attention_bias": False,
            "attention_dropout": 0.0, "tie_word_embeddings": not aligner, "use_cache": True,
            "initializer_range": 0.02, "model_type": "qwen3",
            "rope_scaling": {"interleaved": True, "mrope_interleaved": True, "mrope_section": [24, 20, 20],
                             "rope_type": "default", "type": "default"}}
    thinker = {"model_type": "qwen3_forced_aligner" if aligner else "qwen3_asr",
               "architectures": ["Qwen3ASRForConditionalGeneration"], "audio_config": audio, "text_config": text,
               "audio_token_id": 151676, "audio_start_token_id": 151669, "audio_end_token_id": 151670,
               "dtype": "bfloat16", "initializer_range": 0.02}
    config: dict[str, Any] = {"architectures": ["Qwen3ASRForConditionalGeneration"], "model_type": "qwen3_asr",
                              "support_languages": list(_ALIGNER_LANGUAGES if aligner else LANGUAGES),
                              "thinker_config": thinker, "transformers_version": "4.57.6"}
    if aligner:
        thinker["classify_num"] = 5000
        config.update(timestamp_token_id=151705, timestamp_segment_time=80)
    return config


def tiny_asr_config(model: str = "asr", hidden: int = 48, layers: int = 2, tie: bool | None = None,
                    n_window_infer: int = 800, classify_num: int = 64) -> dict[str, Any]:
    """Small shapes for tests; the vocabulary, the special ids, the mel bins and the 100-frame
    chunks stay real. `n_window_infer` 200 makes 2-second attention windows (26 positions)."""
    config = reference_asr_config(model, "0.6b")
    t = config["thinker_config"]
    t["audio_config"].update(encoder_layers=layers, encoder_attention_heads=2, encoder_ffn_dim=64, d_model=32,
                             output_dim=hidden, downsample_hidden_size=8, n_window_infer=n_window_infer)
    t["text_config"].update(hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                            num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                            rope_scaling={"interleaved": True, "mrope_interleaved": True, "mrope_section": [2, 3, 3],
                                          "rope_type": "default", "type": "default"})
    if tie is not None:
        t["text_config"]["tie_word_embeddings"] = tie
    if model == "aligner":
        t["classify_num"] = classify_num
    return config


def _tokenizer_config() -> dict[str, Any]:
    added = {str(FIRST_SPECIAL_ID + i): {"content": c, "lstrip": False, "normalized": False, "rstrip": False,
                                          "single_word": False, "special": c not in _NOT_SPECIAL}
             for i, c in enumerate(ASR_SPECIAL_TOKENS)}
    extra = {"audio_bos_token": "<|audio_start|>", "audio_eos_token": "<|audio_end|>", "audio_token": "<|audio_pad|>",
             "image_token": "<|image_pad|>", "video_token": "<|video_pad|>", "vision_bos_token": "<|vision_start|>",
             "vision_eos_token": "<|vision_end|>"}
    specials = ASR_SPECIAL_TOKENS[1:14] + ["<|audio_start|>", "<|audio_end|>", "<tts_pad>", "<tts_text_bos>",
                                           "<tts_text_bos_single>", "<|audio_pad|>"]
    return {"add_bos_token": False, "add_prefix_space": False, "added_tokens_decoder": added,
            "additional_special_tokens": specials, **extra, "bos_token": None, "clean_up_tokenization_spaces": False,
            "eos_token": "<|im_end|>", "errors": "replace", "extra_special_tokens": extra, "model_max_length": 131072,
            "pad_token": "<|endoftext|>", "processor_class": "Qwen3ASRProcessor", "split_special_tokens": False,
            "tokenizer_class": "Qwen2Tokenizer", "unk_token": None}


def asr_files(out: Path, config: dict[str, Any], cache_dir: Path | None = None) -> Path:
    """Everything but the weights: configs, tokenizer files, chat template."""
    out.mkdir(parents=True, exist_ok=True)

    def dump(name: str, data: dict[str, Any]) -> None:
        (out / name).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    dump("config.json", config)
    dump("generation_config.json", {"_from_model_config": True, "eos_token_id": [151643, 151645],
                                    "pad_token_id": 151643, "do_sample": False})
    dump("preprocessor_config.json", {
        "chunk_length": 30, "dither": 0.0, "feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 128,
        "hop_length": 160, "n_fft": 400, "n_samples": 480000, "nb_max_frames": 3000, "padding_side": "right",
        "padding_value": 0.0, "processor_class": "Qwen3ASRProcessor", "return_attention_mask": True,
        "sampling_rate": 16000})
    dump("tokenizer_config.json", _tokenizer_config())
    if "forced_aligner" not in config["thinker_config"].get("model_type", ""):
        dump("chat_template.json", {"chat_template": ASR_TEMPLATE})
    vocab, merges = qwen2_vocabulary(cache_dir)
    (out / "vocab.json").write_bytes(vocab.read_bytes())
    (out / "merges.txt").write_bytes(merges.read_bytes())
    return out


def _random_tensor(name: str, shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """Values giving activations of a sane size, and decoders whose choices depend on the audio."""
    leaf = name.rsplit(".", 1)[-1]
    if "norm" in name and leaf == "weight" or "layer_norm" in name and leaf == "weight":
        return 1.0 + 0.1 * torch.randn(shape, generator=gen)
    if leaf == "bias":
        return 0.02 * torch.randn(shape, generator=gen)
    if "embed_tokens" in name:
        return 0.05 * torch.randn(shape, generator=gen)
    fan_in = 1
    for d in shape[1:]:
        fan_in *= d
    return torch.randn(shape, generator=gen) / max(fan_in, 1) ** 0.5


def write_asr_checkpoint(out: Path, config: dict[str, Any] | None = None, seed: int = 0,
                         cache_dir: Path | None = None) -> Path:
    """A complete random checkpoint (default: the true Qwen3-ASR-0.6B shapes) in `out`."""
    config = copy.deepcopy(config or reference_asr_config())
    shapes = asr_tensor_shapes(AsrConfig.from_json(config))
    out = asr_files(Path(out), config, cache_dir)
    gen = torch.Generator().manual_seed(seed)
    tensors = {n: _random_tensor(n, s, gen).to(torch.bfloat16).contiguous() for n, s in sorted(shapes.items())}
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "model.safetensors").chmod(0o644)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hearth.tools.random_asr_checkpoint",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--model", default="asr", choices=["asr", "aligner"])
    parser.add_argument("--size", default="0.6b", choices=["tiny", "0.6b", "1.7b"],
                        help="tiny, 0.6b or 1.7b (ASR); tiny or 0.6b (aligner)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.model == "aligner" and args.size == "1.7b":
        parser.error("Qwen3-ForcedAligner is released at 0.6B only: --size tiny or 0.6b")
    config = tiny_asr_config(args.model) if args.size == "tiny" else reference_asr_config(args.model, args.size)
    write_asr_checkpoint(args.out, config, seed=args.seed)
    print(f"wrote a random {args.size} {args.model} checkpoint to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
