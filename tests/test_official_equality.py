"""Hearth's codes equal the official model's, bit for bit, on the same random weights.

The official model is fed token ids from the standard Qwen2 tokenizer of `transformers` (not
Hearth's), so these tests also cover Hearth's tokenizer and prompt layout.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from official import official_codes

from hearth.text.normalize import normalize as normalize_text
from hearth.text.normalize.document import normalizer_language

TRAILER = [151645, 198, 151644, 77091, 198]


def reference_ids(tok, text: str) -> list[int]:
    return tok.encode(f"<|im_start|>assistant\n{text}<|im_end|>\n<|im_start|>assistant\n")


def assert_same_codes(official_model, engine, tok, text, voice, language, *, text_mode="whole", greedy=False,
                      seed=0, max_new_tokens=24, instruct=None, normalize=True):
    """Hearth's codes for `text` equal the official model's for what Hearth speaks: `text` made
    speakable by the front end (`normalize`), or, with normalize=False, `text` as it is."""
    instruct_ids = tok.encode(f"<|im_start|>user\n{instruct}<|im_end|>\n") if instruct else None
    if instruct and not engine.config.honours_instruct:
        instruct_ids = None  # the official wrapper drops instruct for 0.6B
    spoken = normalize_text(text, normalizer_language(language)).text if normalize else text
    expected = official_codes(official_model, reference_ids(tok, spoken), voice, language, instruct_ids=instruct_ids,
                              text_mode=text_mode, greedy=greedy, seed=seed, max_new_tokens=max_new_tokens)
    got = engine.generate_codes(text, voice, language, instruct=instruct, text_mode=text_mode, greedy=greedy,
                                seed=seed, max_new_tokens=max_new_tokens, budget=None, normalize=normalize).codes
    assert got.shape == expected.shape, (got.shape, expected.shape)
    mismatch = np.argwhere(got != np.asarray(expected))
    assert mismatch.size == 0, f"first mismatch at frame/codebook {mismatch[0].tolist()}"
    return got


@pytest.mark.parametrize("text_mode", ["whole", "interleaved", "stream"])  # "stream": the official name
@pytest.mark.parametrize("greedy", [True, False], ids=["greedy", "sampled"])
def test_modes(official, engine, reference_tokenizer, text_mode, greedy):
    assert_same_codes(official, engine, reference_tokenizer, "It's a fine day; isn't it? Let's walk.",
                      "ryan", "english", text_mode=text_mode, greedy=greedy, seed=5)


@pytest.mark.parametrize(
    "voice,language,text",
    [
        ("vivian", "chinese", "你好，欢迎回家。今天天气很好。"),
        ("serena", "auto", "Good evening. 晚上好。"),
        ("uncle_fu", "chinese", "一二三四五六七八九十。"),
        ("aiden", "german", "Guten Morgen, wie geht's?"),
        ("ono_anna", "japanese", "こんにちは、今日はいい天気ですね。"),
        ("sohee", "korean", "안녕하세요, 만나서 반갑습니다."),
        ("ryan", "french", "Bonjour à tous, ça va ?"),
        ("vivian", "russian", "Привет, как дела?"),
        ("serena", "spanish", "¿Dónde está la biblioteca?"),
        ("aiden", "italian", "Buongiorno a tutti."),
        ("ryan", "portuguese", "Olá, tudo bem?"),
    ],
)
def test_voices_and_languages(official, engine, reference_tokenizer, voice, language, text):
    assert_same_codes(official, engine, reference_tokenizer, text, voice, language, seed=17)


@pytest.mark.parametrize("voice", ["eric", "dylan", "Eric", "DYLAN"])
@pytest.mark.parametrize("language", ["chinese", "auto", "english"])
def test_dialect_rule(official, engine, reference_tokenizer, voice, language):
    assert_same_codes(official, engine, reference_tokenizer, "我们一起去吃火锅吧。", voice, language, seed=29,
                      max_new_tokens=12)


def test_dialect_changes_the_prompt(engine):
    """Guards the rule itself: eric/chinese must differ from eric/english (language id swapped)."""
    a = engine.generate_codes("我们去吃饭。", "eric", "chinese", greedy=True, max_new_tokens=6).codes
    b = engine.generate_codes("我们去吃饭。", "eric", "english", greedy=True, max_new_tokens=6).codes
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("text_mode", ["whole", "stream"])
@pytest.mark.parametrize("instruct", [None, "Speak slowly and warmly, like a bedtime story."])
@pytest.mark.parametrize("greedy", [True, False], ids=["greedy", "sampled"])
def test_wide_talker_with_instruct(official17, engine17, reference_tokenizer, text_mode, instruct, greedy):
    assert_same_codes(official17, engine17, reference_tokenizer, "Once upon a time, there was a small house.",
                      "serena", "english", text_mode=text_mode, instruct=instruct, greedy=greedy, seed=41)


def test_instruct_ignored_by_small_model(official, engine, reference_tokenizer, caplog):
    with caplog.at_level("WARNING"):
        assert_same_codes(official, engine, reference_tokenizer, "Hello there.", "vivian", "english",
                          instruct="Whisper.", seed=3)
    assert any("instruct is ignored" in r.message for r in caplog.records)


@pytest.mark.parametrize("normalize", [True, False], ids=["normalized", "as-written"])
@pytest.mark.parametrize("text", ["\nA line after a newline.", "1, 2, 3 and 4,567.89!", "Emoji 😀🎉 ok", "a",
                                  "It is 21.5 °C at 7:30 pm, **45 %** humidity.", "温度是-3.5℃，2350元。"])
def test_edge_texts(official, engine, reference_tokenizer, text, normalize):
    """Normalized, the codes are the official model's for the spoken form; as written, for the text."""
    assert_same_codes(official, engine, reference_tokenizer, text, "aiden", "auto", seed=9, max_new_tokens=10,
                      normalize=normalize)


def test_long_generation_with_eos_masking(official, engine, reference_tokenizer):
    """Longer run: repetition penalty over a long history; min-new-tokens masking at the start."""
    assert_same_codes(official, engine, reference_tokenizer, "A longer sentence to speak.", "vivian", "english",
                      seed=123, max_new_tokens=80)


def test_official_wrapper_end_to_end(official, engine):
    """The official public entry point (its own tokenizer and defaults) against Hearth's."""
    text = "Welcome home"  # no contractions: the wrapper's local-folder regex quirk does not apply
    torch.manual_seed(77)
    with torch.inference_mode():
        wavs, sr = official.generate_custom_voice(text, speaker="Vivian", language="English", max_new_tokens=20)
    audio = engine.synthesize(text, "vivian", "english", seed=77, max_new_tokens=20, budget=None)
    assert sr == audio.sample_rate
    ref = torch.as_tensor(wavs[0], dtype=torch.float64)
    got = torch.as_tensor(audio.samples, dtype=torch.float64)
    assert ref.shape == got.shape
    noise = (ref - got).pow(2).sum()
    snr = 10 * torch.log10(ref.pow(2).sum() / noise.clamp(min=1e-30))
    assert snr >= 100, f"SNR {snr:.1f} dB"
