"""Typed configuration built from a checkpoint's JSON files: the one place raw JSON is read.

The official config classes accept unknown keys silently; here every key we depend on is
required and type-checked, so a wrong or truncated config fails at load with its file name.
`head_dim` is always read from the JSON, never derived from hidden size / heads.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CodecDecoderConfig",
    "CodecEncoderConfig",
    "ConfigError",
    "JsonReader",
    "MODEL_TYPES",
    "ModelConfig",
    "SpeakerEncoderConfig",
    "TalkerConfig",
    "TransformerConfig",
    "read_json",
]


class ConfigError(ValueError):
    """A checkpoint config file is missing a key or holds a value of the wrong kind."""


def read_json(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}: not valid JSON ({e}); re-download the checkpoint") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return data


class JsonReader:
    """Reads typed values from one JSON object, naming the file and key path in every error."""

    def __init__(self, data: dict[str, Any], where: str):
        self.data = data
        self.where = where

    def _get(self, key: str, kinds: tuple[type, ...], default: Any = ...) -> Any:
        if key not in self.data or self.data[key] is None:
            if default is ...:
                raise ConfigError(f"{self.where}: missing key '{key}'")
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in kinds:
            raise ConfigError(f"{self.where}: '{key}' must be {kinds[0].__name__}, got {value!r}")
        if not isinstance(value, kinds):
            raise ConfigError(f"{self.where}: '{key}' must be {kinds[0].__name__}, got {value!r}")
        return value

    def integer(self, key: str, default: Any = ...) -> int:
        value = self._get(key, (int,), default)
        if value is not None and value < 0:
            raise ConfigError(f"{self.where}: '{key}' must not be negative, got {value}")
        return value

    def number(self, key: str, default: Any = ...) -> float:
        return float(self._get(key, (float, int), default))

    def text(self, key: str, default: Any = ...) -> str:
        return self._get(key, (str,), default)

    def flag(self, key: str, default: Any = ...) -> bool:
        return self._get(key, (bool,), default)

    def mapping(self, key: str, default: Any = ...) -> dict[str, Any]:
        return self._get(key, (dict,), default)

    def sequence(self, key: str) -> list[Any]:
        return self._get(key, (list,))

    def sub(self, key: str) -> JsonReader:
        return JsonReader(self.mapping(key), f"{self.where}.{key}")


@dataclass(frozen=True)
class TransformerConfig:
    """A Qwen3-style decoder stack (talker or code predictor)."""

    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    vocab_size: int

    @classmethod
    def read(cls, r: JsonReader) -> TransformerConfig:
        cfg = cls(
            hidden_size=r.integer("hidden_size"),
            intermediate_size=r.integer("intermediate_size"),
            num_layers=r.integer("num_hidden_layers"),
            num_heads=r.integer("num_attention_heads"),
            num_kv_heads=r.integer("num_key_value_heads"),
            head_dim=r.integer("head_dim"),
            rms_norm_eps=r.number("rms_norm_eps"),
            rope_theta=r.number("rope_theta"),
            vocab_size=r.integer("vocab_size"),
        )
        if cfg.num_kv_heads == 0 or cfg.num_heads % cfg.num_kv_heads:
            raise ConfigError(f"{r.where}: num_attention_heads must be a multiple of num_key_value_heads")
        if cfg.head_dim % 2:
            raise ConfigError(f"{r.where}: head_dim must be even for rotary embeddings")
        return cfg


@dataclass(frozen=True)
class TalkerConfig:
    stack: TransformerConfig
    predictor: TransformerConfig
    num_code_groups: int
    text_vocab_size: int
    text_hidden_size: int
    codec_pad_id: int
    codec_bos_id: int
    codec_eos_id: int
    codec_think_id: int
    codec_nothink_id: int
    codec_think_bos_id: int
    codec_think_eos_id: int
    speaker_ids: dict[str, int]
    speaker_dialects: dict[str, str | None]
    language_ids: dict[str, int]


@dataclass(frozen=True)
class SpeakerEncoderConfig:
    """speaker_encoder_config of a Base checkpoint (an ECAPA-TDNN)."""

    mel_dim: int = 128
    enc_dim: int = 1024  # the talker's hidden size
    channels: tuple[int, ...] = (512, 512, 512, 512, 1536)
    kernel_sizes: tuple[int, ...] = (5, 3, 3, 3, 1)
    dilations: tuple[int, ...] = (1, 2, 3, 4, 1)
    attention_channels: int = 128
    res2net_scale: int = 8
    se_channels: int = 128
    sample_rate: int = 24000


MODEL_TYPES = {"custom_voice": "CustomVoice", "base": "Base", "voice_design": "VoiceDesign"}


# The config.json numbers each field is read from: (field, key).
_TALKER_NUMBERS = (
    ("text_vocab_size", "text_vocab_size"), ("text_hidden_size", "text_hidden_size"),
    ("codec_pad_id", "codec_pad_id"), ("codec_bos_id", "codec_bos_id"), ("codec_eos_id", "codec_eos_token_id"),
    ("codec_think_id", "codec_think_id"), ("codec_nothink_id", "codec_nothink_id"),
    ("codec_think_bos_id", "codec_think_bos_id"), ("codec_think_eos_id", "codec_think_eos_id"),
)
_MODEL_IDS = (
    ("im_start_id", "im_start_token_id"), ("im_end_id", "im_end_token_id"), ("assistant_id", "assistant_token_id"),
    ("tts_bos_id", "tts_bos_token_id"), ("tts_eos_id", "tts_eos_token_id"), ("tts_pad_id", "tts_pad_token_id"),
)


@dataclass(frozen=True)
class ModelConfig:
    """config.json of a Qwen3-TTS 12 Hz checkpoint: CustomVoice (built-in voices), Base (voices
    cloned from reference audio; it carries a speaker encoder) or VoiceDesign (voices described
    in words)."""

    talker: TalkerConfig
    im_start_id: int
    im_end_id: int
    assistant_id: int
    tts_bos_id: int
    tts_eos_id: int
    tts_pad_id: int
    model_size: str
    model_type: str  # a key of MODEL_TYPES
    speaker_encoder: SpeakerEncoderConfig | None = None  # Base checkpoints only

    @property
    def kind(self) -> str:
        """CustomVoice, Base or VoiceDesign: as the model cards name them."""
        return MODEL_TYPES[self.model_type]

    @property
    def voices(self) -> list[str]:
        return sorted(self.talker.speaker_ids)

    @property
    def languages(self) -> list[str]:
        """'auto' plus every language that is not a dialect (dialects follow from the voice)."""
        return ["auto"] + sorted(k for k in self.talker.language_ids if "dialect" not in k)

    @property
    def honours_instruct(self) -> bool:
        if self.model_type == "voice_design":
            return True  # the instruction is the voice
        if self.model_type == "base":
            return False  # the official voice clone takes none
        # The official wrapper drops instruct whenever tts_model_size is a substring of "0b6".
        return self.model_size not in "0b6"

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "config.json") -> ModelConfig:
        r = JsonReader(data, where)
        model_type = r.text("tts_model_type")
        if model_type not in MODEL_TYPES:
            raise ConfigError(
                f"{where}: tts_model_type is '{model_type}'; Hearth runs Qwen3-TTS 12 Hz CustomVoice, Base and "
                "VoiceDesign checkpoints (for example Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice)"
            )
        t = r.sub("talker_config")
        p = t.sub("code_predictor_config")
        stack = TransformerConfig.read(t)
        predictor = TransformerConfig.read(p)
        groups = t.integer("num_code_groups")
        if p.integer("num_code_groups", groups) != groups:
            raise ConfigError(f"{where}: talker and code predictor disagree on num_code_groups")
        speakers = {k.lower(): int(v) for k, v in t.mapping("spk_id", {}).items()}
        languages = {k.lower(): int(v) for k, v in t.mapping("codec_language_id").items()}
        dialects_raw = t.mapping("spk_is_dialect", {})
        dialects: dict[str, str | None] = {}
        for name in speakers:
            d = dialects_raw.get(name, False)
            dialects[name] = d if isinstance(d, str) and d else None
            if dialects[name] is not None and dialects[name] not in languages:
                raise ConfigError(f"{where}: speaker {name} names unknown dialect {dialects[name]}")
        talker = TalkerConfig(
            stack=stack,
            predictor=predictor,
            num_code_groups=groups,
            **{name: t.integer(key) for name, key in _TALKER_NUMBERS},
            speaker_ids=speakers,
            speaker_dialects=dialects,
            language_ids=languages,
        )
        for key in ("codec_pad_id", "codec_bos_id", "codec_eos_id"):
            if getattr(talker, key) >= stack.vocab_size:
                raise ConfigError(f"{where}: {key} lies outside the codec vocabulary")
        if model_type == "custom_voice" and not speakers:
            raise ConfigError(f"{where}: a CustomVoice checkpoint names its voices in talker_config.spk_id")
        speaker_encoder = None
        if model_type == "base":
            speaker_encoder = _speaker_encoder(r.sub("speaker_encoder_config") if "speaker_encoder_config" in data
                                               else JsonReader({}, f"{where}.speaker_encoder_config"))
            if speaker_encoder.enc_dim != stack.hidden_size:
                raise ConfigError(f"{where}: the speaker encoder's enc_dim ({speaker_encoder.enc_dim}) must equal "
                                  f"the talker's hidden_size ({stack.hidden_size})")
        return cls(
            talker=talker,
            **{name: r.integer(key) for name, key in _MODEL_IDS},
            model_size=r.text("tts_model_size"),
            model_type=model_type,
            speaker_encoder=speaker_encoder,
        )


def _speaker_encoder(r: JsonReader) -> SpeakerEncoderConfig:
    """speaker_encoder_config, with the official class's defaults for absent keys."""
    d = SpeakerEncoderConfig()

    def ints(key: str, default: tuple[int, ...]) -> tuple[int, ...]:
        values = r._get(key, (list,), list(default))
        if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values):
            raise ConfigError(f"{r.where}: '{key}' must be a list of positive whole numbers, got {values!r}")
        return tuple(values)

    cfg = SpeakerEncoderConfig(
        mel_dim=r.integer("mel_dim", d.mel_dim), enc_dim=r.integer("enc_dim", d.enc_dim),
        channels=ints("enc_channels", d.channels), kernel_sizes=ints("enc_kernel_sizes", d.kernel_sizes),
        dilations=ints("enc_dilations", d.dilations),
        attention_channels=r.integer("enc_attention_channels", d.attention_channels),
        res2net_scale=r.integer("enc_res2net_scale", d.res2net_scale), se_channels=r.integer("enc_se_channels",
                                                                                             d.se_channels),
        sample_rate=r.integer("sample_rate", d.sample_rate),
    )
    c = cfg.channels
    if not len(c) == len(cfg.kernel_sizes) == len(cfg.dilations) >= 3:
        raise ConfigError(f"{r.where}: enc_channels, enc_kernel_sizes and enc_dilations need one length, 3 or more")
    if sum(c[1:-1]) != c[-1] or any(ch % cfg.res2net_scale for ch in c[1:-1]):
        raise ConfigError(f"{r.where}: enc_channels must end with the sum of the middle blocks' channels, each a "
                          "multiple of enc_res2net_scale")
    return cfg


@dataclass(frozen=True)
class CodecDecoderConfig:
    """speech_tokenizer/config.json, decoder half (the encoder is never used)."""

    num_quantizers: int
    codebook_size: int
    codebook_dim: int
    latent_dim: int
    decoder_dim: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    sliding_window: int
    layer_scale: float
    upsample_rates: tuple[int, ...]
    upsampling_ratios: tuple[int, ...]
    sample_rate: int
    upsample: int

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "speech_tokenizer/config.json") -> CodecDecoderConfig:
        r = JsonReader(data, where)
        d = r.sub("decoder_config")
        cfg = cls(
            num_quantizers=d.integer("num_quantizers"),
            codebook_size=d.integer("codebook_size"),
            codebook_dim=d.integer("codebook_dim"),
            latent_dim=d.integer("latent_dim"),
            decoder_dim=d.integer("decoder_dim"),
            hidden_size=d.integer("hidden_size"),
            intermediate_size=d.integer("intermediate_size"),
            num_layers=d.integer("num_hidden_layers"),
            num_heads=d.integer("num_attention_heads"),
            num_kv_heads=d.integer("num_key_value_heads"),
            head_dim=d.integer("head_dim"),
            rms_norm_eps=d.number("rms_norm_eps"),
            rope_theta=d.number("rope_theta"),
            sliding_window=d.integer("sliding_window"),
            layer_scale=d.number("layer_scale_initial_scale", 0.01),
            upsample_rates=tuple(int(x) for x in d.sequence("upsample_rates")),
            upsampling_ratios=tuple(int(x) for x in d.sequence("upsampling_ratios")),
            sample_rate=r.integer("output_sample_rate"),
            upsample=r.integer("decode_upsample_rate"),
        )
        total = 1
        for f in cfg.upsample_rates + cfg.upsampling_ratios:
            total *= f
        if total != cfg.upsample:
            raise ConfigError(f"{where}: upsampling factors multiply to {total}, not decode_upsample_rate")
        if cfg.decoder_dim % (2 ** len(cfg.upsample_rates)):
            raise ConfigError(f"{where}: decoder_dim must halve cleanly through every upsampling block")
        return cfg


@dataclass(frozen=True)
class CodecEncoderConfig:
    """speech_tokenizer/config.json, encoder half (read for cloning with a Base checkpoint): the
    released codec's causal variant only."""

    num_filters: int
    kernel_size: int
    last_kernel_size: int
    residual_kernel_size: int
    dilation_growth_rate: int
    num_residual_layers: int
    compress: int
    ratios: tuple[int, ...]
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    norm_eps: float
    rope_theta: float
    sliding_window: int  # frames at the conv stack's rate (25 Hz)
    num_quantizers: int
    num_semantic_quantizers: int
    codebook_size: int
    codebook_dim: int
    downsample: int  # conv-stack frames per code frame
    valid_quantizers: int  # codes kept per frame (the talker's code groups)
    sample_rate: int
    samples_per_frame: int

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "speech_tokenizer/config.json") -> CodecEncoderConfig:
        r = JsonReader(data, where)
        e = r.sub("encoder_config")
        fixed = {"use_causal_conv": True, "pad_mode": "constant", "use_conv_shortcut": False, "hidden_act": "gelu",
                 "attention_bias": False, "audio_channels": 1}
        for key, want in fixed.items():
            if e.data.get(key, want) != want:
                raise ConfigError(f"{e.where}: {key} is {e.data[key]!r}; Hearth's encoder supports {want!r} only")
        ratios = tuple(int(x) for x in e.sequence("upsampling_ratios"))
        rate = e.integer("sampling_rate")
        conv_rate = math.ceil(rate / math.prod(ratios))
        frame_rate = e.number("_frame_rate", e.number("frame_rate", 12.5))
        cfg = cls(
            num_filters=e.integer("num_filters"), kernel_size=e.integer("kernel_size", 7),
            last_kernel_size=e.integer("last_kernel_size", 3),
            residual_kernel_size=e.integer("residual_kernel_size", 3),
            dilation_growth_rate=e.integer("dilation_growth_rate", 2),
            num_residual_layers=e.integer("num_residual_layers", 1), compress=e.integer("compress", 2), ratios=ratios,
            hidden_size=e.integer("hidden_size"), num_layers=e.integer("num_hidden_layers"),
            num_heads=e.integer("num_attention_heads"), num_kv_heads=e.integer("num_key_value_heads"),
            head_dim=e.integer("head_dim"), intermediate_size=e.integer("intermediate_size"),
            norm_eps=e.number("norm_eps", 1e-5), rope_theta=e.number("rope_theta", 10000.0),
            sliding_window=e.integer("sliding_window", 250), num_quantizers=e.integer("num_quantizers"),
            num_semantic_quantizers=e.integer("num_semantic_quantizers", 1),
            codebook_size=e.integer("codebook_size"), codebook_dim=e.integer("codebook_dim"),
            downsample=int(conv_rate / frame_rate), valid_quantizers=r.integer("encoder_valid_num_quantizers"),
            sample_rate=r.integer("input_sample_rate"), samples_per_frame=r.integer("encode_downsample_rate"),
        )
        if e.integer("vector_quantization_hidden_dimension", cfg.codebook_dim) != cfg.codebook_dim:
            raise ConfigError(f"{e.where}: vector_quantization_hidden_dimension must equal codebook_dim")
        per_frame = math.prod(ratios) * cfg.downsample
        if cfg.downsample != 2 or per_frame != cfg.samples_per_frame or rate != cfg.sample_rate:
            raise ConfigError(f"{where}: the encoder's rates do not give one code frame per encode_downsample_rate "
                              "samples")
        if not cfg.num_semantic_quantizers <= cfg.valid_quantizers <= cfg.num_quantizers:
            raise ConfigError(f"{where}: encoder_valid_num_quantizers must lie between the semantic and all quantizers")
        return cfg
