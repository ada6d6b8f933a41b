"""Typed configuration of a Qwen3-ASR or Qwen3-ForcedAligner checkpoint, built from its JSON files.

Both models are one architecture (qwen-asr's "thinker"): an audio encoder (three stride-2
convolutions over 100-frame chunks of log-mel features, a transformer attending within windows of
`n_window_infer` frames, a projection to the decoder's width) whose outputs replace the
`<|audio_pad|>` placeholders of a Qwen3 decoder's prompt. The ASR decoder ends in the vocabulary;
the aligner's ends in `classify_num` timestamp classes of `timestamp_segment_time` ms each.

These dataclasses live beside the TTS configs (not in `hearth.listen`) because the torch networks
of `hearth.model`, which may import nothing but `hearth.checkpoint`, are built from them.
Absent audio-encoder keys take the official classes' defaults, as the official loader does; the
decoder's keys are all required (`TransformerConfig.read`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hearth.checkpoint.config import ConfigError, JsonReader, TransformerConfig

__all__ = [
    "AlignerSettings",
    "conv_output_length",
    "AsrConfig",
    "AudioEncoderConfig",
    "FeatureConfig",
    "GREEDY_KEYS",
    "check_greedy",
]

# Qwen3ASRAudioEncoderConfig's defaults (qwen-asr 0.0.6), used where a key is absent.
_ENCODER_DEFAULTS: dict[str, Any] = {
    "num_mel_bins": 128, "encoder_layers": 32, "encoder_attention_heads": 20, "encoder_ffn_dim": 5120,
    "d_model": 1280, "max_source_positions": 1500, "n_window": 100, "output_dim": 3584, "n_window_infer": 400,
    "conv_chunksize": 500, "downsample_hidden_size": 480,
}


def conv_output_length(frames: int) -> int:
    """Steps out of three (kernel 3, stride 2, padding 1) convolutions over `frames` steps."""
    for _ in range(3):
        frames = (frames - 1) // 2 + 1 if frames > 0 else 0
    return frames


@dataclass(frozen=True)
class AudioEncoderConfig:
    """thinker_config.audio_config."""

    num_mel_bins: int
    num_layers: int
    num_heads: int
    ffn_dim: int
    d_model: int
    max_source_positions: int
    n_window: int  # a convolution chunk is 2 * n_window mel frames
    n_window_infer: int  # an attention window spans this many mel frames (a whole number of chunks)
    output_dim: int
    conv_chunksize: int  # chunks per convolution call
    conv_channels: int  # downsample_hidden_size

    @property
    def head_dim(self) -> int:
        return self.d_model // self.num_heads

    @property
    def chunk_frames(self) -> int:
        return 2 * self.n_window

    @property
    def chunks_per_window(self) -> int:
        return self.n_window_infer // self.chunk_frames

    @property
    def conv_features(self) -> int:
        """The width of the flattened convolution output (channels x mel bins after three halvings)."""
        bins = self.num_mel_bins
        for _ in range(3):
            bins = (bins + 1) // 2
        return self.conv_channels * bins

    def chunk_lengths(self, frames: int) -> list[int]:
        """Mel frames per convolution chunk: whole chunks, then the remainder (if any)."""
        whole, rest = divmod(frames, self.chunk_frames)
        return [self.chunk_frames] * whole + ([rest] if rest else [])

    def tokens_for(self, frames: int) -> int:
        """Audio embeddings (prompt placeholders) for `frames` mel frames. For the released n_window
        of 50 this is qwen-asr's formula (13 per 100 frames, then the remainder's convolutions);
        its formula hard-codes those numbers, this one follows n_window."""
        return sum(conv_output_length(n) for n in self.chunk_lengths(frames))

    def window_lengths(self, frames: int) -> list[int]:
        """Encoder positions per attention window for an input of `frames` mel frames. A window holds
        `chunks_per_window` chunks' outputs counted in the longest chunk's output (qwen-asr's rule:
        an input shorter than one chunk is one window)."""
        window = conv_output_length(min(frames, self.chunk_frames)) * self.chunks_per_window
        whole, rest = divmod(self.tokens_for(frames), window)
        return [window] * whole + ([rest] if rest else [])

    @classmethod
    def read(cls, r: JsonReader) -> AudioEncoderConfig:
        d = _ENCODER_DEFAULTS
        activation = r.text("activation_function", "gelu")
        if activation != "gelu":
            raise ConfigError(f"{r.where}: activation_function is {activation!r}; the audio encoder uses 'gelu'")
        cfg = cls(
            num_mel_bins=r.integer("num_mel_bins", d["num_mel_bins"]),
            num_layers=r.integer("encoder_layers", d["encoder_layers"]),
            num_heads=r.integer("encoder_attention_heads", d["encoder_attention_heads"]),
            ffn_dim=r.integer("encoder_ffn_dim", d["encoder_ffn_dim"]),
            d_model=r.integer("d_model", d["d_model"]),
            max_source_positions=r.integer("max_source_positions", d["max_source_positions"]),
            n_window=r.integer("n_window", d["n_window"]),
            n_window_infer=r.integer("n_window_infer", d["n_window_infer"]),
            output_dim=r.integer("output_dim", d["output_dim"]),
            conv_chunksize=r.integer("conv_chunksize", d["conv_chunksize"]),
            conv_channels=r.integer("downsample_hidden_size", d["downsample_hidden_size"]),
        )
        if cfg.num_heads == 0 or cfg.d_model % cfg.num_heads:
            raise ConfigError(f"{r.where}: d_model must be a multiple of encoder_attention_heads")
        if cfg.head_dim % 2 or cfg.d_model % 2:
            raise ConfigError(f"{r.where}: d_model must be even (sinusoidal positions)")
        if cfg.n_window == 0 or cfg.chunks_per_window == 0:
            raise ConfigError(f"{r.where}: n_window_infer ({cfg.n_window_infer}) must be at least one convolution "
                              f"chunk, 2 * n_window = {cfg.chunk_frames} mel frames")
        if cfg.conv_chunksize == 0:
            raise ConfigError(f"{r.where}: conv_chunksize must be positive")
        steps = conv_output_length(cfg.chunk_frames)
        if steps > cfg.max_source_positions:
            raise ConfigError(f"{r.where}: a chunk of {cfg.chunk_frames} frames gives {steps} positions, beyond "
                              f"max_source_positions ({cfg.max_source_positions})")
        return cfg


@dataclass(frozen=True)
class AlignerSettings:
    """What makes the thinker a forced aligner: its head's classes and what one class is worth."""

    classify_num: int  # the head's outputs: timestamp classes 0 .. classify_num - 1
    timestamp_token_id: int  # the prompt token whose position carries a start or end time
    segment_ms: float  # timestamp_segment_time: milliseconds per class


@dataclass(frozen=True)
class AsrConfig:
    """config.json of a Qwen3-ASR checkpoint (`aligner` None) or a Qwen3-ForcedAligner one."""

    encoder: AudioEncoderConfig
    decoder: TransformerConfig
    tie_word_embeddings: bool  # the ASR head reuses the token embeddings (0.6B); never the aligner's
    audio_token_id: int
    audio_start_token_id: int
    audio_end_token_id: int
    support_languages: tuple[str, ...] | None
    aligner: AlignerSettings | None = None

    @property
    def kind(self) -> str:
        return "Qwen3-ForcedAligner" if self.aligner else "Qwen3-ASR"

    @property
    def head_size(self) -> int:
        """Outputs of the decoder's head: the vocabulary, or the aligner's timestamp classes."""
        return self.aligner.classify_num if self.aligner else self.decoder.vocab_size

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "config.json") -> AsrConfig:
        r = JsonReader(data, where)
        model_type = r.text("model_type", "")
        if model_type != "qwen3_asr":
            raise ConfigError(f"{where}: model_type is {model_type!r}, not 'qwen3_asr': this is not a Qwen3-ASR or "
                              "Qwen3-ForcedAligner checkpoint (for example Qwen/Qwen3-ASR-0.6B)")
        t = r.sub("thinker_config")
        text = t.sub("text_config")
        decoder = TransformerConfig.read(text)
        _check_decoder(text)
        # qwen-asr builds the aligner's head when the thinker's model_type names it (the released
        # config says "qwen3_forced_aligner"), and reads the timestamp settings from the top level.
        aligner = None
        if "forced_aligner" in t.text("model_type", ""):
            aligner = AlignerSettings(
                classify_num=t.integer("classify_num"),
                timestamp_token_id=r.integer("timestamp_token_id"),
                segment_ms=r.number("timestamp_segment_time"),
            )
            if aligner.classify_num == 0 or aligner.segment_ms <= 0:
                raise ConfigError(f"{where}: classify_num and timestamp_segment_time must be positive")
        tie = text.flag("tie_word_embeddings", False)
        if tie and aligner is not None:
            raise ConfigError(f"{where}: an aligner's head ({aligner.classify_num} classes) cannot share the token "
                              "embeddings; text_config.tie_word_embeddings must be false")
        languages = data.get("support_languages")
        if languages is not None and not (isinstance(languages, list) and all(isinstance(x, str) for x in languages)):
            raise ConfigError(f"{where}: support_languages must be a list of language names")
        cfg = cls(
            encoder=AudioEncoderConfig.read(t.sub("audio_config")),
            decoder=decoder,
            tie_word_embeddings=tie,
            audio_token_id=t.integer("audio_token_id"),
            audio_start_token_id=t.integer("audio_start_token_id", 151647),  # the official class's default
            audio_end_token_id=t.integer("audio_end_token_id", 151670),
            support_languages=tuple(languages) if languages is not None else None,
            aligner=aligner,
        )
        if cfg.encoder.output_dim != decoder.hidden_size:
            raise ConfigError(f"{where}: audio_config.output_dim ({cfg.encoder.output_dim}) must equal "
                              f"text_config.hidden_size ({decoder.hidden_size}): audio embeddings enter the decoder")
        for key in ("audio_token_id", "audio_start_token_id", "audio_end_token_id"):
            if getattr(cfg, key) >= decoder.vocab_size:
                raise ConfigError(f"{where}: {key} lies outside the decoder's vocabulary")
        return cfg


def _check_decoder(text: JsonReader) -> None:
    """What Hearth's Qwen3 decoder assumes and the config could say otherwise."""
    if text.flag("attention_bias", False):
        raise ConfigError(f"{text.where}: attention_bias is true; the Qwen3-ASR decoder has no attention biases")
    act = text.text("hidden_act", "silu")
    if act != "silu":
        raise ConfigError(f"{text.where}: hidden_act is {act!r}; the decoder's MLP uses 'silu'")
    rope = text.mapping("rope_scaling", {})
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind != "default":
        raise ConfigError(f"{text.where}: rope_scaling type {kind!r} is not supported (the released models use "
                          "'default'; their M-RoPE sections coincide for text and audio positions)")


@dataclass(frozen=True)
class FeatureConfig:
    """preprocessor_config.json: the Whisper-style log-mel front end."""

    feature_size: int  # mel bins
    sampling_rate: int
    hop_length: int
    n_fft: int

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "preprocessor_config.json") -> FeatureConfig:
        r = JsonReader(data, where)
        kind = r.text("feature_extractor_type", "WhisperFeatureExtractor")
        if kind != "WhisperFeatureExtractor":
            raise ConfigError(f"{where}: feature_extractor_type is {kind!r}; Qwen3-ASR uses WhisperFeatureExtractor")
        if r.number("dither", 0.0) != 0.0:
            raise ConfigError(f"{where}: dither is not 0; Hearth's features are deterministic (the released "
                              "models use 0.0): set it to 0.0")
        cfg = cls(
            feature_size=r.integer("feature_size", 80),  # WhisperFeatureExtractor's defaults
            sampling_rate=r.integer("sampling_rate", 16000),
            hop_length=r.integer("hop_length", 160),
            n_fft=r.integer("n_fft", 400),
        )
        if cfg.hop_length == 0 or cfg.n_fft < 2 or cfg.sampling_rate < 16000:
            raise ConfigError(f"{where}: hop_length, n_fft and sampling_rate (at least 16000: the mel filters reach "
                              "8 kHz) are out of range")
        return cfg


# generation_config.json keys that would make transformers' generate do more than greedy decoding,
# with their neutral values.
GREEDY_KEYS: dict[str, Any] = {"do_sample": False, "num_beams": 1, "repetition_penalty": 1.0,
                               "no_repeat_ngram_size": 0}


def check_greedy(data: dict[str, Any], where: str = "generation_config.json") -> None:
    """qwen-asr decodes with the checkpoint's generation config (the released one asks for greedy
    decoding); Hearth decodes greedily, so a config asking for anything else is refused."""
    for key, neutral in GREEDY_KEYS.items():
        if data.get(key) is not None and data[key] != neutral:
            raise ConfigError(f"{where}: {key} is {data[key]!r}; Hearth decodes Qwen3-ASR greedily, as qwen-asr "
                              f"does with the released generation config ({key}: {neutral!r})")
