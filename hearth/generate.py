"""The frame loop: prompt embeddings, KV caches, logits processing, sampling and stopping.

This reproduces the official generation bit for bit (same tensor shapes per call, same fp32 logits
pipeline, same order of random draws: cb0, then cb1..cb15 for each frame), with one difference by
design: an explicit `torch.Generator` instead of the global RNG, and a runaway guard.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Protocol

import torch

from .config import GenerationDefaults, ModelConfig
from .model.talker import Talker
from .text import Prompt

__all__ = [
    "FrameBudget",
    "DEFAULT_BUDGET",
    "FrameGenerator",
    "GenerationStats",
    "LMSession",
    "LanguageModel",
    "PromptEmbeds",
    "SamplingOptions",
    "TorchLanguageModel",
    "embed_prompt",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SamplingOptions:
    """Per-request sampling. Built from generation_config.json; override with `replace` or `from_defaults`."""

    do_sample: bool = True
    temperature: float = 0.9
    top_k: int = 50
    top_p: float = 1.0
    repetition_penalty: float = 1.05
    sub_do_sample: bool = True
    sub_temperature: float = 0.9
    sub_top_k: int = 50
    sub_top_p: float = 1.0
    max_new_tokens: int = 8192
    min_new_tokens: int = 2

    @classmethod
    def from_defaults(cls, d: GenerationDefaults, **overrides: object) -> SamplingOptions:
        base = cls(
            do_sample=d.do_sample, temperature=d.temperature, top_k=d.top_k, top_p=d.top_p,
            repetition_penalty=d.repetition_penalty, sub_do_sample=d.subtalker_do_sample,
            sub_temperature=d.subtalker_temperature, sub_top_k=d.subtalker_top_k, sub_top_p=d.subtalker_top_p,
            max_new_tokens=d.max_new_tokens,
        )
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})  # type: ignore[arg-type]

    def greedy(self) -> SamplingOptions:
        return replace(self, do_sample=False, sub_do_sample=False)

    def validate(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be at least 1")
        for name in ("temperature", "sub_temperature"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive (use greedy decoding instead of 0)")
        for name in ("top_p", "sub_top_p"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"{name} must lie in (0, 1]")
        if self.top_k < 0 or self.sub_top_k < 0:
            raise ValueError("top_k must not be negative (0 disables it)")
        if self.repetition_penalty <= 0:
            raise ValueError("repetition_penalty must be positive")


@dataclass(frozen=True)
class FrameBudget:
    """The runaway guard: at most `base + per_token * text_tokens` frames (80 ms each).

    Real speech runs at 2-5 frames per text token; a model that never emits EOS (a few in a
    thousand real requests) would otherwise speak noise until max_new_tokens (11 minutes).
    """

    base: int = 40
    per_token: int = 12

    def frames(self, text_tokens: int) -> int:
        return self.base + self.per_token * text_tokens


DEFAULT_BUDGET = FrameBudget()


@dataclass
class GenerationStats:
    frames: int = 0
    stop_reason: str = ""  # "eos", "max_new_tokens", "frame_budget", "closed"
    prefill_s: float = 0.0
    talker_s: float = 0.0
    predictor_s: float = 0.0


@dataclass
class PromptEmbeds:
    prefill: torch.Tensor  # [1, L, hidden]
    trailing: torch.Tensor  # [1, n, hidden]: added to the talker input of step k < n
    tts_pad: torch.Tensor  # [1, 1, hidden]: added once trailing is exhausted
    text_tokens: int


def resolve_language(config: ModelConfig, voice: str, language: str) -> int | None:
    """The codec language id (None for auto), with the dialect rule applied."""
    t = config.talker
    lang = language.lower()
    language_id = None if lang == "auto" else t.language_ids[lang]
    dialect = t.speaker_dialects.get(voice.lower())
    if lang in ("chinese", "auto") and dialect is not None:
        language_id = t.language_ids[dialect]
    return language_id


class Embedder(Protocol):
    def embed_text(self, ids: list[int]) -> torch.Tensor: ...

    def embed_codec(self, ids: list[int]) -> torch.Tensor: ...


def embed_prompt(
    talker: Embedder, config: ModelConfig, prompt: Prompt, voice: str, language: str, text_mode: str
) -> PromptEmbeds:
    """The talker's prefill (layout in docs: role, codec tags + speaker, text) and trailing text.

    Each projection is called with the same batch shapes as the official model, so every row is
    rounded identically.
    """
    t = config.talker
    language_id = resolve_language(config, voice, language)
    special = talker.embed_text([config.tts_bos_id, config.tts_eos_id, config.tts_pad_id])
    tts_bos, tts_eos, tts_pad = special[:, 0:1], special[:, 1:2], special[:, 2:3]
    if language_id is None:
        tags = [t.codec_nothink_id, t.codec_think_bos_id, t.codec_think_eos_id]
    else:
        tags = [t.codec_think_id, t.codec_think_bos_id, language_id, t.codec_think_eos_id]
    codec = talker.embed_codec(tags + [t.speaker_ids[voice.lower()], t.codec_pad_id, t.codec_bos_id])
    n_codec = codec.shape[1]
    role = talker.embed_text(prompt.role)
    tagged = torch.cat((tts_pad.expand(-1, n_codec - 2, -1), tts_bos), dim=1) + codec[:, :-1]
    parts = [role, tagged]
    if prompt.instruct:
        parts.insert(0, talker.embed_text(prompt.instruct))
    text = prompt.text
    if text_mode == "whole":
        pads = talker.embed_codec([t.codec_pad_id] * (len(text) + 1))
        body = torch.cat((talker.embed_text(text), tts_eos), dim=1) + pads
        parts += [body, tts_pad + talker.embed_codec([t.codec_bos_id])]
        trailing = tts_pad
    elif text_mode == "stream":
        parts.append(talker.embed_text(text[:1]) + codec[:, -1:])
        rest = talker.embed_text(text[1:]) if len(text) > 1 else tts_eos[:, :0]
        trailing = torch.cat((rest, tts_eos), dim=1)
    else:
        raise ValueError(f"text_mode must be 'whole' or 'stream', got {text_mode!r}")
    return PromptEmbeds(torch.cat(parts, dim=1), trailing, tts_pad, len(text))


def _process_talker_logits(
    logits: torch.Tensor, history: list[int], opts: SamplingOptions, eos: int, suppress: torch.Tensor
) -> torch.Tensor:
    """logits [1, vocab] fp32 -> processed scores, in the order of the official pipeline."""
    scores = logits
    if opts.repetition_penalty != 1.0 and history:
        ids = torch.tensor([history], dtype=torch.long)
        picked = torch.gather(scores, 1, ids)
        picked = torch.where(picked < 0, picked * opts.repetition_penalty, picked / opts.repetition_penalty)
        scores = scores.scatter(1, ids, picked)
    if len(history) < opts.min_new_tokens:
        mask = torch.zeros_like(scores, dtype=torch.bool)
        mask[:, eos] = True
        scores = torch.where(mask, -float("inf"), scores)
    scores = torch.where(suppress, -float("inf"), scores)
    return scores


def _warp(scores: torch.Tensor, temperature: float, top_k: int, top_p: float) -> torch.Tensor:
    if temperature != 1.0:
        scores = scores / temperature
    if top_k:
        k = min(max(top_k, 1), scores.shape[-1])
        kth = torch.topk(scores, k)[0][..., -1, None]
        scores = scores.masked_fill(scores < kth, -float("inf"))
    if top_p < 1.0:
        sorted_logits, sorted_idx = torch.sort(scores, descending=False)
        cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        remove_sorted = cumulative <= (1 - top_p)
        remove_sorted[..., -1:] = False
        remove = remove_sorted.scatter(1, sorted_idx, remove_sorted)
        scores = scores.masked_fill(remove, -float("inf"))
    return scores


def _pick(scores: torch.Tensor, sample: bool, temperature: float, top_k: int, top_p: float,
          rng: torch.Generator | None) -> int:
    if not sample:
        return int(torch.argmax(scores, dim=-1))
    probs = torch.softmax(_warp(scores, temperature, top_k, top_p), dim=-1)
    return int(torch.multinomial(probs, num_samples=1, generator=rng))


class LMSession(Protocol):
    """One utterance's language-model state on some backend (KV caches, the last hidden state)."""

    def prefill(self, embeds: torch.Tensor) -> torch.Tensor:
        """The prompt [1, L, hidden] -> fp32 codebook-0 logits of its last position [1, vocab]."""
        ...

    def step(self, embeds: torch.Tensor) -> torch.Tensor:
        """The next talker input [1, 1, hidden] -> fp32 codebook-0 logits [1, vocab]."""
        ...

    def predict(self, cb0: int) -> tuple[list[int], torch.Tensor]:
        """Codebooks 1..G-1 of the current frame, and the summed embedding of all G codes [1, 1, hidden]."""
        ...


class LanguageModel(Protocol):
    """The talker and its code predictor on some backend: prompt embeddings and sessions."""

    def embed_text(self, ids: list[int]) -> torch.Tensor: ...

    def embed_codec(self, ids: list[int]) -> torch.Tensor: ...

    def session(self, options: SamplingOptions, rng: torch.Generator | None, prompt_length: int) -> LMSession: ...


class TorchLanguageModel:
    """The reference backend: the torch talker, bit-exact with the official model."""

    def __init__(self, talker: Talker):
        self.talker = talker

    def embed_text(self, ids: list[int]) -> torch.Tensor:
        return self.talker.embed_text(ids)

    def embed_codec(self, ids: list[int]) -> torch.Tensor:
        return self.talker.embed_codec(ids)

    def session(self, options: SamplingOptions, rng: torch.Generator | None, prompt_length: int) -> LMSession:
        return _TorchSession(self.talker, options, rng, prompt_length)


class _TorchSession:
    def __init__(self, talker: Talker, options: SamplingOptions, rng: torch.Generator | None, prompt_length: int):
        self.talker = talker
        self.opts = options
        self.rng = rng
        dtype = talker.codec_head.weight.dtype
        self.cache = talker.model.new_cache(prompt_length + 256, dtype)
        self.pcache = talker.code_predictor.new_cache(dtype)
        self.hidden = torch.empty(0)

    def prefill(self, embeds: torch.Tensor) -> torch.Tensor:
        return self.step(embeds)

    def step(self, embeds: torch.Tensor) -> torch.Tensor:
        self.hidden, logits = self.talker(embeds, self.cache)
        return logits[:, -1, :].to(torch.float32)

    def predict(self, cb0: int) -> tuple[list[int], torch.Tensor]:
        o = self.opts
        predictor = self.talker.code_predictor
        cache = self.pcache
        cache.reset()
        first = self.talker.embed_codec([cb0])  # [1, 1, hidden]
        embeds = [first]
        logits = predictor(torch.cat((self.hidden, first), dim=1), 0, cache)
        codes: list[int] = []
        for j in range(predictor.num_groups - 1):
            if j > 0:
                logits = predictor(embeds[-1], j, cache)  # the embedding of the code just picked
            scores = logits[:, -1, :].to(torch.float32)
            code = _pick(scores, o.sub_do_sample, o.sub_temperature, o.sub_top_k, o.sub_top_p, self.rng)
            codes.append(code)
            # Needed as the next step's input (except the last) and in the talker's next input.
            embeds.append(predictor.model.codec_embedding[j](torch.tensor([[code]])))
        return codes, torch.cat(embeds, dim=1).sum(1, keepdim=True)


class FrameGenerator:
    """Yields frames ([num_code_groups] int64 codes) until EOS, max_new_tokens or the frame budget.

    Backend-neutral: the language model's session holds the caches; codebook 0 is sampled here
    (repetition penalty needs the history), the rest by the session. Abandoning the iterator
    simply drops the session.
    """

    def __init__(
        self,
        lm: LanguageModel,
        config: ModelConfig,
        embeds: PromptEmbeds,
        options: SamplingOptions,
        rng: torch.Generator | None = None,
        budget: FrameBudget | None = DEFAULT_BUDGET,
    ):
        options.validate()
        self.lm = lm
        self.config = config
        self.embeds = embeds
        self.opts = options
        self.rng = rng
        self.max_frames = options.max_new_tokens - 1
        self.budget_frames = budget.frames(embeds.text_tokens) if budget is not None else None
        self.stats = GenerationStats()
        t = config.talker
        vocab = t.stack.vocab_size
        self._eos = t.codec_eos_id
        # The official processor suppresses the top 1024 codec ids (control tokens), EOS excepted.
        self._suppress = torch.zeros(1, vocab, dtype=torch.bool)
        self._suppress[:, max(vocab - 1024, 0) :] = True
        self._suppress[:, self._eos] = False

    def _sample_cb0(self, logits: torch.Tensor, history: list[int]) -> int:
        o = self.opts
        scores = _process_talker_logits(logits, history, o, self._eos, self._suppress)
        return _pick(scores, o.do_sample, o.temperature, o.top_k, o.top_p, self.rng)

    def __iter__(self) -> Iterator[torch.Tensor]:
        stats = self.stats
        t0 = time.perf_counter()
        session = self.lm.session(self.opts, self.rng, self.embeds.prefill.shape[1])
        with torch.inference_mode():
            logits = session.prefill(self.embeds.prefill)
            history: list[int] = []
            cb0 = self._sample_cb0(logits, history)
            stats.prefill_s = time.perf_counter() - t0
            step = 0
            while True:
                if cb0 == self._eos:
                    stats.stop_reason = "eos"
                    return
                if step >= self.max_frames:
                    stats.stop_reason = "max_new_tokens"
                    return
                if self.budget_frames is not None and step >= self.budget_frames:
                    stats.stop_reason = "frame_budget"
                    log.warning(
                        "runaway guard: no end of speech after %d frames (%.1f s) for %d text tokens; stopping",
                        step, step * 0.08, self.embeds.text_tokens,
                    )
                    return
                t1 = time.perf_counter()
                rest, summed = session.predict(cb0)
                t2 = time.perf_counter()
                stats.predictor_s += t2 - t1
                frame = torch.tensor([cb0] + rest, dtype=torch.long)
                history.append(cb0)
                trailing = self.embeds.trailing
                extra = trailing[:, step : step + 1] if step < trailing.shape[1] else self.embeds.tts_pad
                hidden_next = summed + extra
                step += 1
                stats.frames = step
                yield frame
                t3 = time.perf_counter()
                logits = session.step(hidden_next)
                cb0 = self._sample_cb0(logits, history)
                stats.talker_s += time.perf_counter() - t3
