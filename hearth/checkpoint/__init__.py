"""The released model as files: its configuration, weights, text tokenizer and sampling rules, read
and checked (`loading.open_checkpoint`), the model directories `hearth export` writes
(`exported`), and the hearing models' checkpoints, Qwen3-ASR and Qwen3-ForcedAligner
(`asr_config`, `asr_loading.open_asr_checkpoint`). Imports nothing of Hearth but `errors`, `frames`
and `platform`; torch only inside the loaders of the reference networks (`hearth.model`)."""
