"""The reference model in torch: talker (`talker`), code predictor and layers (`layers`), the codec
that turns codes into audio (`codec`) and audio into codes (`codec_encoder`), the speaker encoder for
cloning (`speaker`), the sampling step (`torch_sampling`) and the loaders of its weights (`weights`);
for hearing, Qwen3-ASR's and Qwen3-ForcedAligner's audio encoder (`asr_encoder`), decoder
(`asr_decoder`) and weight loaders (`asr_weights`)."""
