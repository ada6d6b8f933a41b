"""The codec decoder equals the official decoder's whole-sequence forward (SNR >= 100 dB)."""

from __future__ import annotations

import pytest
import torch

from hearth.checkpoint import load_codec, open_checkpoint
from hearth.random_checkpoint import tiny_configs, write_checkpoint


def snr_db(ref: torch.Tensor, got: torch.Tensor) -> float:
    ref, got = ref.double(), got.double()
    noise = (ref - got).pow(2).sum().clamp(min=1e-300)
    return float(10 * torch.log10(ref.pow(2).sum() / noise))


def official_decoder(path):
    """The official speech-tokenizer decoder, built from the config and the same weights."""
    from official import import_official
    from safetensors.torch import load_file

    _, _, tokenizer_mod = import_official()
    import json

    from qwen_tts.core.tokenizer_12hz.configuration_qwen3_tts_tokenizer_v2 import Qwen3TTSTokenizerV2Config

    cfg = Qwen3TTSTokenizerV2Config(**json.loads((path / "speech_tokenizer/config.json").read_text()))
    model = tokenizer_mod.Qwen3TTSTokenizerV2Model(cfg).eval()
    state = {k: v for k, v in load_file(str(path / "speech_tokenizer/model.safetensors")).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and all(k.startswith("encoder.") for k in missing)
    return model.decoder


@pytest.fixture(scope="module")
def small_window_dir(tmp_path_factory):
    config, codec = tiny_configs("0b6", hidden=32, layers=1, window=8)
    return write_checkpoint(tmp_path_factory.mktemp("win8"), config, codec, seed=5)


@pytest.mark.parametrize("frames", [1, 7, 160])
def test_matches_official_forward(tiny_dir, frames):
    ref_dec = official_decoder(tiny_dir)
    ours = load_codec(open_checkpoint(tiny_dir))
    gen = torch.Generator().manual_seed(frames)
    codes = torch.randint(0, 2048, (frames, 16), generator=gen)
    with torch.inference_mode():
        ref = ref_dec(codes.T[None])[0, 0]
        got = ours(codes)
    assert got.shape == (frames * 1920,)
    assert ref.abs().max() < 1.0, "fixture audio clips; the comparison would be weak"
    assert snr_db(ref, got) >= 100


def test_window_crossed_many_times(small_window_dir):
    ref_dec = official_decoder(small_window_dir)
    ours = load_codec(open_checkpoint(small_window_dir))
    codes = torch.randint(0, 2048, (60, 16), generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        ref = ref_dec(codes.T[None])[0, 0]
        got = ours(codes)
    assert snr_db(ref, got) >= 100


def test_rejects_wrong_codebook_count(tiny_dir):
    ours = load_codec(open_checkpoint(tiny_dir))
    with pytest.raises(ValueError, match="shape"):
        ours(torch.zeros(4, 15, dtype=torch.long))
