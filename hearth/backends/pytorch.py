"""The torch reference backend: the talker, its code predictor and the codec decoder as torch
modules, bit-exact with the official model (fp32), and the yardstick every other backend is
measured against.
"""

from __future__ import annotations

import torch

from ..checkpoint import Checkpoint, load_codec, load_talker
from ..model.codec import CodecDecoder, CodecState
from ..model.talker import Talker
from ..sampling import SamplingOptions, pick
from . import SequentialBatch

__all__ = ["TorchLanguageModel", "TorchSession", "TorchVocoder"]


def _mb(module: torch.nn.Module, name: str) -> dict[str, dict[str, float]]:
    tensors = list(module.state_dict().values())
    stored = sum(t.numel() * t.element_size() for t in tensors)
    return {name: {"fp32_mb": sum(t.numel() * 4 for t in tensors) / 1e6, "stored_mb": stored / 1e6}}


class TorchLanguageModel:
    """The torch talker and predictor; each session holds its own KV caches."""

    def __init__(self, talker: Talker):
        self.talker = talker

    @classmethod
    def load(cls, ckpt: Checkpoint, dtype: torch.dtype = torch.float32) -> TorchLanguageModel:
        return cls(load_talker(ckpt, dtype))

    def embed_text(self, ids: list[int]) -> torch.Tensor:
        return self.talker.embed_text(ids)

    def embed_codec(self, ids: list[int]) -> torch.Tensor:
        return self.talker.embed_codec(ids)

    def embed_frames(self, codes: torch.Tensor) -> torch.Tensor:
        return self.talker.embed_frames(codes)

    def session(self, options: SamplingOptions, rng: torch.Generator | None, prompt_length: int,
                prefix: int = 0) -> TorchSession:
        # (No prefix reuse: computing a prompt in two parts rounds differently, and this backend is exact.)
        return TorchSession(self.talker, options, rng, prompt_length)

    def batch(self, max_rows: int) -> SequentialBatch:
        return SequentialBatch(self, max_rows)

    def warm_up(self) -> None:
        with torch.inference_mode():
            s = self.session(SamplingOptions().greedy(), None, 4)
            s.prefill(torch.zeros(1, 4, self.talker.cfg.stack.hidden_size, dtype=self.talker.codec_head.weight.dtype))
            _, summed = s.predict(0)
            s.step(summed)
            s.close()

    def weights_mb(self) -> dict[str, dict[str, float]]:
        return _mb(self.talker, "talker+predictor (torch)")


class TorchSession:
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
            code = pick(scores, o.sub_do_sample, o.sub_temperature, o.sub_top_k, o.sub_top_p, self.rng)
            codes.append(code)
            # Needed as the next step's input (except the last) and in the talker's next input.
            embeds.append(predictor.model.codec_embedding[j](torch.tensor([[code]])))
        return codes, torch.cat(embeds, dim=1).sum(1, keepdim=True)

    def close(self) -> None:
        self.hidden = torch.empty(0)


class TorchVocoder:
    """The torch codec decoder (fp32), streaming with a `CodecState` per audio stream."""

    first_chunk_frames = 2  # its cost grows with the frames: a short first call, then the ramp

    def __init__(self, decoder: CodecDecoder):
        self.decoder = decoder

    @classmethod
    def load(cls, ckpt: Checkpoint) -> TorchVocoder:
        return cls(load_codec(ckpt, torch.float32))

    def start(self) -> CodecState:
        return self.decoder.start()

    def decode(self, codes: torch.Tensor, state: CodecState) -> torch.Tensor:
        return self.decoder.decode(codes, state)

    def fork(self, state: CodecState) -> CodecState:
        return state.fork()

    def __call__(self, codes: torch.Tensor) -> torch.Tensor:
        return self.decoder(codes)

    def warm_up(self) -> None:
        with torch.inference_mode():
            self.decode(torch.zeros(1, self.decoder.cfg.num_quantizers, dtype=torch.long), self.start())

    def weights_mb(self) -> dict[str, dict[str, float]]:
        return _mb(self.decoder, "vocoder (torch)")
