"""The torch reference backend: the talker, its code predictor and the codec decoder as torch
modules, bit-exact with the official model (fp32), and the yardstick every other backend is
measured against.

The engine hands it numpy arrays, as it does every backend; they cross into torch here, without a
copy for float32 (bfloat16 weights get their inputs rounded on the way in, their outputs widened
on the way out).
"""

from __future__ import annotations

import numpy as np
import torch

from hearth.backends.interfaces import SequentialBatch
from hearth.checkpoint.loading import Checkpoint
from hearth.checkpoint.sampling import SamplingOptions
from hearth.model.codec import CodecDecoder, CodecState
from hearth.model.talker import Talker
from hearth.model.torch_sampling import TorchSampler
from hearth.model.weights import load_codec, load_talker

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

    @torch.inference_mode()
    def embed_text(self, ids: list[int]) -> np.ndarray:
        return _out(self.talker.embed_text(ids))

    @property
    def trailing_block(self) -> int | None:
        """None: the reference projects the trailing text as the official model does, in one call;
        live text relies on the measured batch invariance instead (`BatchInvariance`)."""
        return None

    def embed_trailing(self, ids: list[int]) -> np.ndarray:
        return self.embed_text(ids)

    @torch.inference_mode()
    def embed_codec(self, ids: list[int]) -> np.ndarray:
        return _out(self.talker.embed_codec(ids))

    @torch.inference_mode()
    def embed_frames(self, codes: np.ndarray) -> np.ndarray:
        return _out(self.talker.embed_frames(torch.from_numpy(np.asarray(codes, np.int64))))

    def session(self, options: SamplingOptions, seed: int | None, prompt_length: int,
                prefix: int = 0) -> TorchSession:
        # (No prefix reuse: computing a prompt in two parts rounds differently, and this backend is exact.)
        return TorchSession(self.talker, options, seed, prompt_length)

    def batch(self, max_rows: int) -> SequentialBatch:
        return SequentialBatch(self, max_rows)

    def warm_up(self) -> None:
        s = self.session(SamplingOptions().greedy(), None, 4)
        s.prefill(np.zeros((1, 4, self.talker.cfg.stack.hidden_size), np.float32))
        _, summed = s.predict(0)
        s.step(summed)
        s.close()

    def weights_mb(self) -> dict[str, dict[str, float]]:
        return _mb(self.talker, "talker+predictor (torch)")


def _out(x: torch.Tensor) -> np.ndarray:
    """A result for the engine: float32 numpy (a view where it already is float32)."""
    return x.to(torch.float32).numpy()


class TorchSession:
    def __init__(self, talker: Talker, options: SamplingOptions, seed: int | None, prompt_length: int):
        self.talker = talker
        self.sampler = TorchSampler(talker.cfg, options, seed)
        self.dtype = talker.codec_head.weight.dtype
        self.cache = talker.model.new_cache(prompt_length + 256, self.dtype)
        self.pcache = talker.code_predictor.new_cache(self.dtype)
        self.hidden = torch.empty(0)

    def prefill(self, embeds: np.ndarray) -> np.ndarray:
        return self.step(embeds)

    @torch.inference_mode()
    def step(self, embeds: np.ndarray) -> np.ndarray:
        self.hidden, logits = self.talker(torch.from_numpy(embeds).to(self.dtype), self.cache)
        return _out(logits[:, -1, :])

    @torch.inference_mode()
    def predict(self, cb0: int) -> tuple[list[int], np.ndarray]:
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
            code = self.sampler.sub(scores)
            codes.append(code)
            # Needed as the next step's input (except the last) and in the talker's next input.
            embeds.append(predictor.model.codec_embedding[j](torch.tensor([[code]])))
        return codes, _out(torch.cat(embeds, dim=1).sum(1, keepdim=True))

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

    @torch.inference_mode()
    def start(self) -> CodecState:
        return self.decoder.start()

    @torch.inference_mode()
    def decode(self, codes: np.ndarray, state: CodecState) -> np.ndarray:
        return _out(self.decoder.decode(torch.from_numpy(np.asarray(codes, np.int64)), state))

    @torch.inference_mode()
    def fork(self, state: CodecState) -> CodecState:
        return state.fork()

    @torch.inference_mode()
    def __call__(self, codes: np.ndarray) -> np.ndarray:
        return _out(self.decoder(torch.from_numpy(np.asarray(codes, np.int64))))

    def warm_up(self) -> None:
        self.decode(np.zeros((1, self.decoder.cfg.num_quantizers), np.int64), self.start())

    def weights_mb(self) -> dict[str, dict[str, float]]:
        return _mb(self.decoder, "vocoder (torch)")
