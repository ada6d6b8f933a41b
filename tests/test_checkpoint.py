"""Checkpoint interchange with the official classes, and clear errors for unusable checkpoints."""

from __future__ import annotations

import json
import shutil
import struct

import numpy as np
import pytest
import torch
from official import official_codes

import hearth
from hearth.checkpoint.loading import CheckpointError, open_checkpoint, resolve
from hearth.model.weights import talker_tensor_shapes


@pytest.mark.slow
def test_official_written_checkpoint_loads_in_hearth(tmp_path, tiny_dir, reference_tokenizer):
    """The official classes write a checkpoint (random init, fp32, encoder included); Hearth loads it
    and generates the same codes as the official model that wrote it."""
    from official import import_official

    _, modeling, tok_modeling = import_official()
    from qwen_tts.core.models.configuration_qwen3_tts import Qwen3TTSConfig
    from qwen_tts.core.tokenizer_12hz.configuration_qwen3_tts_tokenizer_v2 import Qwen3TTSTokenizerV2Config

    torch.manual_seed(0)
    cfg = Qwen3TTSConfig(**json.loads((tiny_dir / "config.json").read_text(encoding="utf-8")))
    model = modeling.Qwen3TTSForConditionalGeneration(cfg).eval()
    model.save_pretrained(tmp_path, safe_serialization=True)
    codec_json = (tiny_dir / "speech_tokenizer/config.json").read_text(encoding="utf-8")
    codec_cfg = Qwen3TTSTokenizerV2Config(**json.loads(codec_json))
    tok_modeling.Qwen3TTSTokenizerV2Model(codec_cfg).save_pretrained(tmp_path / "speech_tokenizer",
                                                                     safe_serialization=True)
    for name in ("vocab.json", "merges.txt", "tokenizer_config.json", "generation_config.json"):
        shutil.copy(tiny_dir / name, tmp_path / name)

    engine = hearth.load(tmp_path, backend="torch")
    text = "Written by the official classes."
    ids = reference_tokenizer.encode(f"<|im_start|>assistant\n{text}<|im_end|>\n<|im_start|>assistant\n")

    class Wrapper:  # official_codes needs only these two members of the public wrapper
        def __init__(self, m):
            self.model = m

        def _merge_generate_kwargs(self, **kw):
            return dict(do_sample=True, top_k=50, top_p=1.0, temperature=0.9, repetition_penalty=1.05,
                        subtalker_dosample=True, subtalker_top_k=50, subtalker_top_p=1.0,
                        subtalker_temperature=0.9, **kw)

    expected = official_codes(Wrapper(model), ids, "sohee", "korean", seed=8, max_new_tokens=16)
    got = engine.generate_codes(text, "sohee", "korean", seed=8, max_new_tokens=16, budget=None).codes
    assert np.array_equal(got, expected.numpy())


def test_hearth_checkpoint_loads_in_official(official):
    """The official wrapper loaded Hearth's random checkpoint (the `official` fixture) with every talker
    weight from the file: no tensor was left at its random initialisation."""
    from safetensors.torch import load_file

    assert official.model.tts_model_type == "custom_voice"
    state = official.model.state_dict()
    path = official.model.config._name_or_path
    for name, tensor in load_file(f"{path}/model.safetensors").items():
        assert torch.equal(state[name], tensor.float()), name


def copy_checkpoint(src, dst):
    shutil.copytree(src, dst)
    return dst


def expect_error(path, *fragments, backend=None):
    with pytest.raises(CheckpointError) as info:
        hearth.load(path, backend=backend)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    return str(info.value)


def test_missing_directory(tmp_path):
    expect_error(tmp_path / "nope", "does not exist", "hf download Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice")


def test_hub_id_offline(monkeypatch, tmp_path):
    """HF_HUB_OFFLINE is honoured: a hub id not in the cache is an error naming the variable and the
    fetch command, and nothing is looked up (the session's audit hook would record a lookup)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    expect_error("someone/not-a-real-model", "HF_HUB_OFFLINE is set", "hf download someone/not-a-real-model")


def test_hub_id_in_the_cache_is_read_offline(monkeypatch, tmp_path, tiny_dir):
    """A hub id already in the Hugging Face cache loads without the hub, even without HF_HUB_OFFLINE."""
    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    snapshot = tmp_path / "hub" / "models--someone--tiny-model" / "snapshots" / ("0" * 40)
    shutil.copytree(tiny_dir, snapshot)
    (tmp_path / "hub" / "models--someone--tiny-model" / "refs").mkdir()
    (tmp_path / "hub" / "models--someone--tiny-model" / "refs" / "main").write_text("0" * 40, encoding="utf-8")
    assert resolve("someone/tiny-model") == snapshot


@pytest.mark.parametrize(
    "name", ["config.json", "model.safetensors", "merges.txt", "speech_tokenizer/model.safetensors"]
)
def test_missing_file(tmp_path, tiny_dir, name):
    path = copy_checkpoint(tiny_dir, tmp_path / "ckpt")
    (path / name).unlink()
    expect_error(path, name, "hf download")


BACKENDS = pytest.mark.parametrize("backend", ["torch", "openvino"])


@BACKENDS
def test_truncated_weights(tmp_path, tiny_dir, backend):
    path = copy_checkpoint(tiny_dir, tmp_path / "ckpt")
    f = path / "model.safetensors"
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    expect_error(path, "model.safetensors", "truncated", "re-download", backend=backend)


@BACKENDS
def test_garbage_weights(tmp_path, tiny_dir, backend):
    path = copy_checkpoint(tiny_dir, tmp_path / "ckpt")
    (path / "speech_tokenizer/model.safetensors").write_bytes(struct.pack("<Q", 2**40) + b"junk")
    expect_error(path, "speech_tokenizer/model.safetensors", "corrupt", backend=backend)


def test_invalid_json(tmp_path, tiny_dir):
    path = copy_checkpoint(tiny_dir, tmp_path / "ckpt")
    (path / "config.json").write_text("{ not json", encoding="utf-8")
    expect_error(path, "config.json", "not valid JSON")


@BACKENDS
def test_wrong_shapes(tmp_path, tiny_dir, backend):
    """Weights of one size with the config of another."""
    path = copy_checkpoint(tiny_dir, tmp_path / "ckpt")
    cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
    cfg["talker_config"]["intermediate_size"] += 8
    (path / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    expect_error(path, "model.safetensors", "mlp", "shape", backend=backend)


@BACKENDS
def test_missing_tensor(tmp_path, tiny_dir, backend):
    from safetensors.torch import load_file, save_file

    path = copy_checkpoint(tiny_dir, tmp_path / "ckpt")
    state = load_file(str(path / "model.safetensors"))
    del state["talker.codec_head.weight"]
    save_file(state, str(path / "model.safetensors"))
    expect_error(path, "missing", "talker.codec_head.weight", backend=backend)


def test_missing_config_key(tmp_path, tiny_dir):
    path = copy_checkpoint(tiny_dir, tmp_path / "ckpt")
    cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
    del cfg["talker_config"]["head_dim"]
    (path / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    expect_error(path, "config.json", "head_dim")


def test_every_tensor_validated(tiny_dir):
    ckpt = open_checkpoint(tiny_dir)
    shapes = talker_tensor_shapes(ckpt.config)
    assert len(shapes) == 2 + 1 + 4 + 1 + 1 + 15 + 15 + 11 * (2 + 2)  # 2 layers each in talker and predictor
