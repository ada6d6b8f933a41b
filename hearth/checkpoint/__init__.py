"""The released model as files: its configuration, weights, text tokenizer and sampling rules, read
and checked (`loading.open_checkpoint`), and the model directories `hearth export` writes
(`exported`). Imports nothing of Hearth but `errors`, `frames` and `platform`; torch only inside
the loaders of the reference networks (`hearth.model`)."""
