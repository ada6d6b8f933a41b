"""The prompts' token ids equal qwen-asr's processor's (its chat template, its placeholder expansion,
its tokenizer), and the audio encoder's output length and attention windows equal the official
model's for every input length."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from official_asr import load_official_asr, official_prompt
from qwen_asr.core.transformers_backend.processing_qwen3_asr import _get_feat_extract_output_lengths
from sounds import noise

from hearth.errors import InputError
from hearth.listen.prompt import aligner_prompt, asr_prompt

CONTEXTS = ["", "Hearth, Qwen3, OpenVINO.", "会议：张三、李四\n第二行", "Don't SHOUT; it's LOUD: l'été, naïve",
            "<|im_end|> inside the context", "   spaces   ", "😀 emoji 👍🏽"]


@pytest.mark.parametrize("seconds", [0.0126, 0.99, 1.0, 1.01, 2.0, 2.5, 7.77])
@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("language", [None, "English", "Cantonese"])
def test_the_asr_prompt_is_the_official_one(listener, official_asr, seconds, context, language):
    samples = noise(seconds, 5)
    theirs = official_prompt(official_asr, samples, context, language)["input_ids"][0].tolist()
    tokens = listener.checkpoint.config.encoder.tokens_for(listener.features.frames(samples.shape[0]))
    ours = asr_prompt(listener.tokenizer, listener.special, tokens, context, language)
    assert ours.ids.tolist() == theirs
    assert set(ours.ids[ours.audio_at : ours.audio_at + ours.audio_tokens].tolist()) == {listener.special.audio_pad}


def test_the_chat_template_shipped_gives_the_same_layout(listener, asr_dir):
    """Rendered by transformers from the checkpoint's own template file, as qwen-asr renders it."""
    from transformers import AutoProcessor

    from hearth.checkpoint.asr_loading import open_asr_checkpoint

    template = open_asr_checkpoint(asr_dir).chat_template
    assert template
    processor = AutoProcessor.from_pretrained(str(asr_dir))
    messages = [{"role": "system", "content": "ctx"}, {"role": "user", "content": [{"type": "audio", "audio": ""}]}]
    text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert listener.tokenizer.encode(text) == asr_prompt(listener.tokenizer, listener.special, 1, "ctx").ids.tolist()


def test_the_audio_placeholder_count_is_the_official_formula(listener):
    cfg = listener.checkpoint.config.encoder
    for frames in range(1, 3001):
        assert cfg.tokens_for(frames) == int(_get_feat_extract_output_lengths(torch.tensor(frames))), frames


@settings(max_examples=60, deadline=None)
@given(frames=st.integers(1, 200_000))
def test_the_placeholder_count_for_any_length(listener, frames):
    assert listener.checkpoint.config.encoder.tokens_for(frames) == int(
        _get_feat_extract_output_lengths(torch.tensor(frames)))


@pytest.mark.parametrize("which", ["asr_dir", "asr17_dir"])
def test_the_attention_windows_are_the_official_ones(request, which):
    """The windows the official encoder computes (its cu_seqlens, caught on the way into a layer)."""
    from hearth.checkpoint.asr_loading import open_asr_checkpoint

    path = request.getfixturevalue(which)
    cfg = open_asr_checkpoint(path).config.encoder
    encoder = load_official_asr(path).model.thinker.audio_tower
    caught = []
    hook = encoder.layers[0].register_forward_pre_hook(lambda m, args: caught.append(args[1].tolist()))
    try:
        for frames in (1, 7, 99, 100, 101, 199, 200, 201, 399, 400, 401, 799, 800, 801, 1234, 2000):
            with torch.inference_mode():
                encoder(torch.zeros(128, frames), feature_lens=torch.tensor([frames]))
            assert np.diff(caught[-1]).tolist() == cfg.window_lengths(frames), frames
    finally:
        hook.remove()


def test_text_that_spells_the_audio_placeholder_is_refused(listener):
    with pytest.raises(InputError, match="placeholder") as e:
        asr_prompt(listener.tokenizer, listener.special, 5, "a <|audio_pad|> b")
    assert e.value.param == "context"
    with pytest.raises(InputError, match="<timestamp>"):
        aligner_prompt(listener.tokenizer, listener.special, 5, ["a<timestamp>b"])


def test_the_local_folder_regex_quirk(asr_dir, listener):
    """qwen-asr loading a local directory (with transformers 4.57.3 to 4.57.6, against a config.json
    they wrote) splits words with a Mistral regex; Hearth, like a hub-id load, with Qwen2's. The
    tests compare with the latter (tests/official_asr.py); here, where the two differ."""
    shipped = load_official_asr(asr_dir, qwen2_regex=False)
    text = "iPhone McDonald's HTTPServer"
    ours = listener.tokenizer.encode(text)
    assert shipped.processor.tokenizer.encode(text) != ours
    assert load_official_asr(asr_dir).processor.tokenizer.encode(text) == ours


def test_the_aligner_prompt_is_the_official_one(aligner, official_aligner):
    for text, language in [("hello world, this is it", "English"), ("你好世界", "Chinese"), ("", "English")]:
        units, official_text = official_aligner.aligner_processor.encode_timestamp(text, language)
        samples = noise(1.3, 2)
        theirs = official_aligner.processor(text=[official_text], audio=[samples], return_tensors="pt",
                                            padding=True)["input_ids"][0].tolist()
        tokens = aligner.checkpoint.config.encoder.tokens_for(samples.shape[0] // 160)
        prompt, positions = aligner_prompt(aligner.tokenizer, aligner.special, tokens, units)
        assert prompt.ids.tolist() == theirs
        assert positions.tolist() == [i for i, t in enumerate(theirs) if t == aligner.settings.timestamp_token_id]
