"""What a conversion of a hearing model is made of: the weight formats and the graphs' version and
limits. The run-time side names a conversion by them (its cache key) and the converters
(`hearth.convert.asr_ov`, `asr_ort`) make it by them, so both read them here."""

from __future__ import annotations

__all__ = ["ASR_GRAPH_VERSION", "ASR_WEIGHTS", "MAX_ASR_POSITIONS"]

# int8: the products' weights in 8 bits (OpenVINO: per output row, computed as its CPU plugin
# chooses; ONNX Runtime: the layers per output row in 7 bits times activations per token in 8
# (`hearth.convert.asr_ort`), the heads in MatMulNBits' 8-bit blocks), the default as on the
# speaking side; fp32: as stored.
ASR_WEIGHTS = ("int8", "fp32")
# Bumped when a graph changes, so stale cached conversions are never reused. 2: ONNX Runtime's int8
# layers as per-token integer products.
ASR_GRAPH_VERSION = "asr-2"
# ONNX Runtime's rotary table (12.6 MB at head_dim 128): prompt and generated tokens of one session.
# The longest piece Hearth decodes (20 minutes of audio, 15 600 embeddings, with a context and 512
# new tokens) fits with room to spare.
MAX_ASR_POSITIONS = 24576

