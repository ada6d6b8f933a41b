"""What a conversion is made of, per runtime: the language model's weight formats and their
parameters, the vocoder's formats. The runtime names a conversion by them (its cache key); the converters
(`hearth.convert`) make it by them; so both read them here, and neither imports the other for them.
"""

from __future__ import annotations

__all__ = ["BLOCKS", "INT4_RATIO", "MAX_POSITIONS", "ONNXRUNTIME_FORMATS", "OPENVINO_FORMATS", "OPENVINO_VOCODERS",
           "ORT_VOCODERS", "PART_FORMATS", "VOCODER_FRAMES", "part_formats"]

# OpenVINO: weights per output row (int8), by NNCF (int4), or as they are.
OPENVINO_FORMATS = ("fp32", "fp16", "int8", "int4")
# int4: the share of the transformer layers NNCF puts in 4 bits (the least sensitive by its
# weight-quantization error); the rest int8.
INT4_RATIO = 1.0

# ONNX Runtime: MatMulNBits' block-quantized weights, or fp32.
ONNXRUNTIME_FORMATS = ("int8", "int4", "fp32")
# Inputs per quantization block (MatMulNBits block_size): int8 in blocks of 128 reads 8 % fewer bytes
# than blocks of 32 (a scale per block) and keeps teacher-forced logits as close to fp32 as OpenVINO's
# per-row int8; 4-bit needs the finer blocks.
BLOCKS = {"int8": 128, "int4": 32}
# Formats that differ per network: (the talker's, the predictor's).
PART_FORMATS = {"mix": ("int8", "int4")}
# The vocoder's step: the most frames one call takes (the default chunk; longer chunks take several
# calls, and `BackendOptions.vocoder_call_frames` may give it fewer).
VOCODER_FRAMES = 5
# The vocoder on OpenVINO: the precision it computes in (its weights stored fp16, or fp32 for fp32).
OPENVINO_VOCODERS = ("bf16", "fp16", "fp32")
# The vocoder on ONNX Runtime, by its name among the vocoder precisions: the format of its weights.
# int8: the products' weights (MatMul; the transposed convolution is one) in MatMulNBits' 8-bit
# blocks (BLOCKS["int8"]), computed on 8-bit inputs; the convolutions stay fp32 (as 8-bit products
# over unfolded inputs their buffers took more than their weights saved).
ORT_VOCODERS = {"onnxruntime": "fp32", "onnxruntime-int8": "int8"}
MAX_POSITIONS = 16384  # the talker's rotary table: the longest utterance (prompt + frames) it can run


def part_formats(weights: str) -> tuple[str, str]:
    """(the talker's format, the predictor's) for an ONNX Runtime weights format."""
    return PART_FORMATS.get(weights, (weights, weights))
