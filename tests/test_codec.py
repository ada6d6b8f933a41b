"""The codec decoder equals the official decoder's whole-sequence forward (SNR >= 100 dB)."""

from __future__ import annotations

import pytest
import torch

from hearth.checkpoint.loading import open_checkpoint
from hearth.model.weights import load_codec
from hearth.streaming.sinks import snr_db as audio_snr_db
from hearth.tools.random_checkpoint import tiny_configs, write_checkpoint


def snr_db(ref: torch.Tensor, got: torch.Tensor) -> float:
    return audio_snr_db(ref.detach().numpy(), got.detach().numpy())


def official_decoder(path):
    """The official speech-tokenizer decoder, built from the config and the same weights."""
    from official import import_official
    from safetensors.torch import load_file

    _, _, tokenizer_mod = import_official()
    import json

    from qwen_tts.core.tokenizer_12hz.configuration_qwen3_tts_tokenizer_v2 import Qwen3TTSTokenizerV2Config

    cfg = Qwen3TTSTokenizerV2Config(**json.loads((path / "speech_tokenizer/config.json").read_text(encoding="utf-8")))
    model = tokenizer_mod.Qwen3TTSTokenizerV2Model(cfg).eval()
    state = {k: v for k, v in load_file(str(path / "speech_tokenizer/model.safetensors")).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and all(k.startswith("encoder.") for k in missing)
    return model.decoder


def official_audio(path, frames: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random codes of `frames` frames (from `seed`) and the official decoder's audio of them."""
    codes = torch.randint(0, 2048, (frames, 16), generator=torch.Generator().manual_seed(seed))
    with torch.inference_mode():
        return codes, official_decoder(path)(codes.T[None])[0, 0]


@pytest.fixture(scope="module")
def small_window_dir(tmp_path_factory):
    config, codec = tiny_configs("0b6", hidden=32, layers=1, window=8)
    return write_checkpoint(tmp_path_factory.mktemp("win8"), config, codec, seed=5)


@pytest.mark.parametrize("frames", [1, 7, 160])
def test_matches_official_forward(tiny_dir, frames):
    codes, ref = official_audio(tiny_dir, frames, seed=frames)
    with torch.inference_mode():
        got = load_codec(open_checkpoint(tiny_dir))(codes)
    assert got.shape == (frames * 1920,)
    assert ref.abs().max() < 1.0, "fixture audio clips; the comparison would be weak"
    assert snr_db(ref, got) >= 100


def test_window_crossed_many_times(small_window_dir):
    codes, ref = official_audio(small_window_dir, 60, seed=1)
    with torch.inference_mode():
        got = load_codec(open_checkpoint(small_window_dir))(codes)
    assert snr_db(ref, got) >= 100


def test_rejects_wrong_codebook_count(tiny_dir):
    ours = load_codec(open_checkpoint(tiny_dir))
    with pytest.raises(ValueError, match="shape"):
        ours(torch.zeros(4, 15, dtype=torch.long))


def decode_in_chunks(decoder, codes, sizes):
    """Decode with a repeating pattern of chunk sizes; each call must return exactly 1920 * k samples."""
    stream = decoder.start()
    out, i, j = [], 0, 0
    with torch.inference_mode():
        while i < codes.shape[0]:
            k = min(sizes[j % len(sizes)], codes.shape[0] - i)
            samples = decoder.decode(codes[i : i + k], stream)
            assert samples.shape == (k * 1920,)
            out.append(samples)
            i, j = i + k, j + 1
    return torch.cat(out)


@pytest.mark.parametrize("sizes", [[1], [2], [3], [5], [8], [2, 5], [7, 1, 3]])
@pytest.mark.parametrize("which", ["window8", "window72"])
def test_chunked_equals_whole(tiny_dir, small_window_dir, sizes, which):
    path = small_window_dir if which == "window8" else tiny_dir
    decoder = load_codec(open_checkpoint(path))
    frames = 40 if which == "window8" else 170  # the window is crossed 5 and 2 times
    codes = torch.randint(0, 2048, (frames, 16), generator=torch.Generator().manual_seed(len(sizes)))
    with torch.inference_mode():
        whole = decoder(codes)
    chunked = decode_in_chunks(decoder, codes, sizes)
    assert snr_db(whole, chunked) >= 100


def test_chunked_equals_official_whole(small_window_dir):
    codes, ref = official_audio(small_window_dir, 45, seed=3)
    assert snr_db(ref, decode_in_chunks(load_codec(open_checkpoint(small_window_dir)), codes, [5])) >= 100


def test_prefix_output_is_output_prefix(tiny_dir):
    decoder = load_codec(open_checkpoint(tiny_dir))
    codes = torch.randint(0, 2048, (30, 16), generator=torch.Generator().manual_seed(9))
    with torch.inference_mode():
        whole = decoder(codes)
        prefix = decoder(codes[:11])
    assert snr_db(whole[: 11 * 1920], prefix) >= 100


def test_decoder_states_are_independent(tiny_dir):
    decoder = load_codec(open_checkpoint(tiny_dir))
    a = torch.randint(0, 2048, (6, 16), generator=torch.Generator().manual_seed(1))
    b = torch.randint(0, 2048, (6, 16), generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        sa, sb = decoder.start(), decoder.start()
        a1, b1 = decoder.decode(a[:3], sa), decoder.decode(b[:3], sb)
        a2, b2 = decoder.decode(a[3:], sa), decoder.decode(b[3:], sb)
        assert snr_db(decoder(a), torch.cat((a1, a2))) >= 100
        assert snr_db(decoder(b), torch.cat((b1, b2))) >= 100
