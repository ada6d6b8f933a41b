"""Qwen3-ASR and Qwen3-ForcedAligner checkpoints: the typed configs read what the official classes
read, the true-shape configs give the official tensor tables, Hearth's writer makes checkpoints
that load in qwen-asr's classes and in Hearth's, and a broken checkpoint is refused with a message
naming the file and the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file
from sounds import noise

from hearth.checkpoint.asr_loading import open_asr_checkpoint
from hearth.checkpoint.loading import CheckpointError
from hearth.errors import InputError
from hearth.listen import Listener, ListenOptions
from hearth.model.asr_weights import asr_tensor_shapes
from hearth.tools.random_asr_checkpoint import reference_asr_config


def _official_config(data: dict):
    from qwen_asr.core.transformers_backend import Qwen3ASRConfig

    return Qwen3ASRConfig(**{k: v for k, v in data.items() if k != "transformers_version"})


@pytest.mark.parametrize("which", ["asr_dir", "asr17_dir", "aligner_dir", "own_asr_dir", "own_aligner_dir"])
def test_the_configs_read_what_the_official_classes_read(request, which):
    path = request.getfixturevalue(which)
    ours = open_asr_checkpoint(path).config
    theirs = _official_config(json.loads((path / "config.json").read_text(encoding="utf-8"))).thinker_config
    a, t = theirs.audio_config, theirs.text_config
    assert (ours.encoder.num_layers, ours.encoder.num_heads, ours.encoder.ffn_dim, ours.encoder.d_model,
            ours.encoder.n_window, ours.encoder.n_window_infer, ours.encoder.output_dim, ours.encoder.conv_channels,
            ours.encoder.conv_chunksize, ours.encoder.max_source_positions) == (
        a.encoder_layers, a.encoder_attention_heads, a.encoder_ffn_dim, a.d_model, a.n_window, a.n_window_infer,
        a.output_dim, a.downsample_hidden_size, a.conv_chunksize, a.max_source_positions)
    d = ours.decoder
    assert (d.hidden_size, d.intermediate_size, d.num_layers, d.num_heads, d.num_kv_heads, d.head_dim, d.vocab_size,
            d.rms_norm_eps, d.rope_theta, ours.tie_word_embeddings, ours.audio_token_id) == (
        t.hidden_size, t.intermediate_size, t.num_hidden_layers, t.num_attention_heads, t.num_key_value_heads,
        t.head_dim, t.vocab_size, t.rms_norm_eps, t.rope_theta, t.tie_word_embeddings, theirs.audio_token_id)
    assert (ours.aligner is not None) == ("forced_aligner" in theirs.model_type)
    if ours.aligner:
        assert ours.aligner.classify_num == theirs.classify_num


@pytest.mark.parametrize("model, size", [("asr", "0.6b"), ("asr", "1.7b"), ("aligner", "0.6b")])
def test_the_true_shapes_are_the_official_classes_tensors(model, size):
    """The released shapes, built by qwen-asr's classes on the meta device: the same tensor table."""
    from qwen_asr.core.transformers_backend import Qwen3ASRForConditionalGeneration

    from hearth.checkpoint.asr_config import AsrConfig

    data = reference_asr_config(model, size)
    config = _official_config(data)
    with torch.device("meta"):
        official = Qwen3ASRForConditionalGeneration(config)
    theirs = {k: tuple(v.shape) for k, v in official.state_dict().items()}
    if data["thinker_config"]["text_config"]["tie_word_embeddings"]:
        del theirs["thinker.lm_head.weight"]  # tied: not stored
    assert asr_tensor_shapes(AsrConfig.from_json(data)) == theirs
    params = sum(int(np.prod(s)) for s in theirs.values())
    assert {("asr", "0.6b"): 0.7e9 < params < 1.0e9, ("asr", "1.7b"): 1.9e9 < params < 2.5e9,
            ("aligner", "0.6b"): 0.7e9 < params < 1.0e9}[(model, size)], params


@pytest.mark.parametrize("which", ["own_asr_dir", "own_aligner_dir"])
def test_our_writer_s_checkpoints_load_in_the_official_classes(request, which):
    from qwen_asr.core.transformers_backend import Qwen3ASRForConditionalGeneration

    path = request.getfixturevalue(which)
    official, info = Qwen3ASRForConditionalGeneration.from_pretrained(str(path), dtype=torch.float32,
                                                                      output_loading_info=True)
    assert not any(info.values()), info  # no missing, unexpected or mismatched tensors
    stored = load_file(str(path / "model.safetensors"))
    state = official.state_dict()
    assert all(torch.equal(state[name], tensor.float()) for name, tensor in stored.items())


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_missing_file_is_named(own_asr_dir, tmp_path):
    ckpt = _copy(own_asr_dir, tmp_path / "c")
    (ckpt / "preprocessor_config.json").unlink()
    with pytest.raises(CheckpointError, match="missing preprocessor_config.json.*hf download Qwen/Qwen3-ASR"):
        open_asr_checkpoint(ckpt)
    with pytest.raises(CheckpointError, match="does not exist.*Qwen/Qwen3-ASR-0.6B"):
        open_asr_checkpoint(tmp_path / "nowhere")


@pytest.mark.parametrize("edit, message", [
    (lambda c: c.update(model_type="qwen3_tts"), "not a Qwen3-ASR"),
    (lambda c: c["thinker_config"]["text_config"].pop("num_hidden_layers"), "missing key 'num_hidden_layers'"),
    (lambda c: c["thinker_config"]["audio_config"].update(n_window_infer=10), "n_window_infer"),
    (lambda c: c["thinker_config"]["audio_config"].update(output_dim=40), "output_dim"),
    (lambda c: c["thinker_config"]["text_config"].update(rope_scaling={"rope_type": "yarn"}), "yarn"),
    (lambda c: c["thinker_config"].update(audio_token_id=151675), "audio_token_id is 151675"),
])
def test_a_wrong_config_is_refused(own_asr_dir, tmp_path, edit, message):
    ckpt = _copy(own_asr_dir, tmp_path / "c")
    _edit_json(ckpt / "config.json", edit)
    with pytest.raises(CheckpointError, match=message):
        open_asr_checkpoint(ckpt).tokenizer()


def test_configs_that_disagree_are_refused(own_asr_dir, tmp_path):
    ckpt = _copy(own_asr_dir, tmp_path / "c")
    _edit_json(ckpt / "generation_config.json", lambda c: c.update(do_sample=True))
    with pytest.raises(CheckpointError, match="do_sample is True.*greedily"):
        open_asr_checkpoint(ckpt)
    _edit_json(ckpt / "generation_config.json", lambda c: c.update(do_sample=False))
    _edit_json(ckpt / "preprocessor_config.json", lambda c: c.update(feature_size=80))
    with pytest.raises(CheckpointError, match="80 mel bins"):
        open_asr_checkpoint(ckpt)


def test_the_wrong_kind_is_named(own_asr_dir, own_aligner_dir):
    with pytest.raises(CheckpointError, match="is a Qwen3-ASR checkpoint; this needs a Qwen3-ForcedAligner"):
        open_asr_checkpoint(own_asr_dir, expect="aligner")
    with pytest.raises(CheckpointError, match="is a Qwen3-ForcedAligner checkpoint; this needs a Qwen3-ASR"):
        Listener.load(own_aligner_dir)


@pytest.mark.parametrize("damage, message", [
    ("shape", "thinker.model.norm.weight has shape \\[47\\]"),
    ("missing", "1 tensors missing \\(first: thinker.audio_tower.proj2.bias\\)"),
    ("extra", "1 unexpected tensors \\(first: thinker.spare.weight\\)"),
])
def test_wrong_weights_are_refused_by_name(own_asr_dir, tmp_path, damage, message):
    ckpt = _copy(own_asr_dir, tmp_path / "c")
    tensors = load_file(str(ckpt / "model.safetensors"))
    if damage == "shape":
        tensors["thinker.model.norm.weight"] = tensors["thinker.model.norm.weight"][:47].clone()
    elif damage == "missing":
        del tensors["thinker.audio_tower.proj2.bias"]
    else:
        tensors["thinker.spare.weight"] = torch.zeros(3)
    save_file(tensors, str(ckpt / "model.safetensors"))
    with pytest.raises(CheckpointError, match=message):
        Listener.load(ckpt, backend="torch")


def test_a_stored_tied_head_is_the_embeddings(own_asr_dir, tmp_path):
    """A tied head stored anyway (some converters do) is checked and then tied, as transformers does."""
    ckpt = _copy(own_asr_dir, tmp_path / "c")
    tensors = load_file(str(ckpt / "model.safetensors"))
    tensors["thinker.lm_head.weight"] = torch.zeros_like(tensors["thinker.model.embed_tokens.weight"])
    save_file(tensors, str(ckpt / "model.safetensors"))
    samples, options = noise(1.1, 4), ListenOptions(max_new_tokens=8)
    ours, reference = Listener.load(ckpt, backend="torch"), Listener.load(own_asr_dir, backend="torch")
    assert ours.transcribe(samples, options) == reference.transcribe(samples, options)


def test_sharded_weights_load(own_asr_dir, listener, tmp_path):
    """Weights split across files named by model.safetensors.index.json read as one."""
    ckpt = _copy(own_asr_dir, tmp_path / "c")
    tensors = load_file(str(ckpt / "model.safetensors"))
    (ckpt / "model.safetensors").unlink()
    names = sorted(tensors)
    shards = {"model-00001-of-00002.safetensors": names[::2], "model-00002-of-00002.safetensors": names[1::2]}
    for file, part in shards.items():
        save_file({n: tensors[n] for n in part}, str(ckpt / file))
    (ckpt / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {n: f for f, part in shards.items() for n in part}}), encoding="utf-8")
    samples = noise(1.1, 4)
    options = ListenOptions(max_new_tokens=8)
    ours, reference = Listener.load(ckpt, backend="torch"), Listener.load(own_asr_dir, backend="torch")
    assert ours.transcribe(samples, options) == reference.transcribe(samples, options)


def test_bad_options_say_what_to_do(listener):
    with pytest.raises(InputError, match="unknown language 'Elvish'.*English") as e:
        listener.transcribe(noise(0.5), ListenOptions(language="Elvish"))
    assert e.value.param == "language"
    with pytest.raises(InputError, match="max_new_tokens"):
        listener.transcribe(noise(0.5), ListenOptions(max_new_tokens=0))
    with pytest.raises(InputError, match="at least 201 samples"):
        listener.transcribe(noise(0.01))
    with pytest.raises(InputError, match="4000 to 384000 Hz"):
        listener.transcribe(noise(1.0), sample_rate=1000)
    assert listener.check_options(ListenOptions(language=" english ")).language == "English"
