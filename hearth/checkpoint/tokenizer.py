"""Text front end: the Qwen2 byte-level BPE tokenizer.

The tokenizer is built with `tokenizers` from vocab.json + merges.txt (no tokenizer.json ships
with the checkpoints): NFC normalisation, the standard Qwen2 split regex, byte-level mapping, no
BOS/EOS, and the added special tokens of tokenizer_config.json kept whole.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

__all__ = ["QWEN2_SPLIT_PATTERN", "TextTokenizer"]

# The standard Qwen2 pre-tokenizer split (what the hub-id load of the official package uses).
QWEN2_SPLIT_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


class TextTokenizer:
    def __init__(self, vocab_file: Path, merges_file: Path, tokenizer_config: dict):
        bpe = models.BPE.from_file(str(vocab_file), str(merges_file), unk_token=None, fuse_unk=False)
        tok = Tokenizer(bpe)
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(QWEN2_SPLIT_PATTERN), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        tok.decoder = decoders.ByteLevel()
        added = tokenizer_config.get("added_tokens_decoder", {})
        specials = []
        for token_id, spec in sorted(added.items(), key=lambda kv: int(kv[0])):
            specials.append((int(token_id), spec))
        # Added tokens must land on their configured ids: they follow the BPE vocabulary directly.
        base = tok.get_vocab_size()
        for expected, (token_id, _) in enumerate(specials, start=base):
            if token_id != expected:
                raise ValueError(
                    f"tokenizer_config.json: added token id {token_id} does not follow the vocabulary "
                    f"(expected {expected}); vocab.json and tokenizer_config.json do not match"
                )
        for _, spec in specials:
            token = AddedToken(
                spec["content"],
                single_word=bool(spec.get("single_word", False)),
                lstrip=bool(spec.get("lstrip", False)),
                rstrip=bool(spec.get("rstrip", False)),
                normalized=bool(spec.get("normalized", False)),
                special=bool(spec.get("special", True)),
            )
            if token.special:
                tok.add_special_tokens([token])
            else:
                tok.add_tokens([token])
        self._tok = tok

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int], skip_special: bool = False) -> str:
        """The text of `ids`; with `skip_special`, the special tokens' left out (transformers'
        skip_special_tokens: the added tokens marked special, not <asr_text> or <timestamp>)."""
        return self._tok.decode(ids, skip_special_tokens=skip_special)

    def added_tokens(self) -> list[str]:
        """The special and added tokens' texts (matched whole, before splitting)."""
        return [t.content for t in self._tok.get_added_tokens_decoder().values()]

    def token_id(self, token: str) -> int | None:
        return self._tok.token_to_id(token)

    @classmethod
    def from_dir(cls, path: Path) -> TextTokenizer:
        """The tokenizer of the checkpoint at `path`. Built once per process for the same three
        files (by path, size and time): building takes 0.4-0.5 s (151k tokens and merges), and a
        process may load a checkpoint many times (a worker restarted, a voice's engine, the tests).
        A TextTokenizer is never changed after it is built, so one serves every engine."""
        names = ("tokenizer_config.json", "vocab.json", "merges.txt")
        key = tuple((str((path / n).resolve()), (st := (path / n).stat()).st_size, st.st_mtime_ns) for n in names)
        with _BUILT_LOCK:
            built = _BUILT.get(key)
            if built is None:
                with open(path / "tokenizer_config.json", encoding="utf-8") as f:
                    config = json.load(f)
                built = _BUILT[key] = cls(path / "vocab.json", path / "merges.txt", config)
                while len(_BUILT) > 4:  # the oldest goes (a dict keeps its order of insertion)
                    del _BUILT[next(iter(_BUILT))]
            return built


_BUILT: dict[tuple[tuple[str, int, int], ...], TextTokenizer] = {}
_BUILT_LOCK = threading.Lock()
