"""Base checkpoints (voices cloned from reference audio) and VoiceDesign checkpoints (voices
described in words), against the official package on the same random weights: the speaker
embedding and the codes, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from official import load_official, official_codes

import hearth
from hearth.tools.random_checkpoint import as_model_type, tiny_configs, write_checkpoint
from hearth.voices.primed_states import prime_on_disk

TEXT = "The kettle is on. Come in and sit down."


@pytest.fixture(scope="module")
def design_dir(tmp_path_factory):
    config, codec = tiny_configs("1b7", hidden=96, layers=2, predictor_hidden=48)
    return write_checkpoint(tmp_path_factory.mktemp("design17"), as_model_type(config, "voice_design"), codec,
                            seed=37)


@pytest.fixture(scope="module")
def design(design_dir):
    return hearth.load(design_dir, backend="torch")


@pytest.fixture(scope="module")
def official_design(design_dir):
    return load_official(design_dir)


@pytest.fixture(scope="module")
def base(base_dir):
    return hearth.load(base_dir, backend="torch")


@pytest.fixture(scope="module")
def base_fp32(base_dir):
    """OpenVINO with fp32 weights: the fast path's arithmetic, close enough to give torch's greedy codes."""
    return hearth.load(base_dir, backend="openvino", weights="fp32", vocoder="fp32", threads=2)


@pytest.fixture(scope="module")
def official_base(base_dir):
    return load_official(base_dir)


def reference_audio(seconds: float, seed: int) -> np.ndarray:
    """A voice-like test signal: a gliding harmonic tone with noise, under 1 in magnitude."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(24000 * seconds)) / 24000
    pitch = 110 + 40 * np.sin(2 * np.pi * 0.7 * t) + rng.uniform(0, 60)
    phase = 2 * np.pi * np.cumsum(pitch) / 24000
    tone = sum(np.sin(k * phase) / k for k in range(1, 6))
    return (0.3 * tone + 0.02 * rng.standard_normal(t.size)).astype(np.float32)


def official_embedding(official, audio: np.ndarray) -> torch.Tensor:
    return official.model.extract_speaker_embedding(audio=audio, sr=24000)


@pytest.mark.parametrize("seconds,seed", [(1.0, 1), (3.7, 2)])
def test_speaker_embedding_equals_the_official_one(base, official_base, seconds, seed):
    audio = reference_audio(seconds, seed)
    ours = base.speaker_embedding(audio, 24000)
    assert np.array_equal(ours.vector, official_embedding(official_base, audio))


def ids(tok, text: str) -> list[int]:
    return tok.encode(f"<|im_start|>assistant\n{text}<|im_end|>\n<|im_start|>assistant\n")


@pytest.mark.parametrize("text_mode", [None, "whole"])  # None: the official clone's default (interleaved)
@pytest.mark.parametrize("greedy", [True, False], ids=["greedy", "sampled"])
def test_x_vector_clone_codes_equal_the_official_ones(base, official_base, reference_tokenizer, text_mode, greedy):
    audio = reference_audio(2.5, 7)
    voice = base.speaker_embedding(audio, 24000)
    prompt = {"ref_code": [None], "ref_spk_embedding": [official_embedding(official_base, audio)],
              "x_vector_only_mode": [True], "icl_mode": [False]}
    expected = official_codes(official_base, ids(reference_tokenizer, TEXT), None, "english",
                              voice_clone_prompt=prompt, text_mode=text_mode or "interleaved", greedy=greedy,
                              seed=11, max_new_tokens=20)
    got = base.generate_codes(TEXT, voice, "english", text_mode=text_mode, greedy=greedy, seed=11,
                              max_new_tokens=20, budget=None).codes
    assert got.shape == expected.shape and np.array_equal(got, expected)


def test_the_speaker_embedding_steers_the_codes(base):
    a = base.generate_codes(TEXT, base.speaker_embedding(reference_audio(2, 3), 24000), greedy=True,
                            max_new_tokens=8).codes
    b = base.generate_codes(TEXT, base.speaker_embedding(reference_audio(2, 4), 24000), greedy=True,
                            max_new_tokens=8).codes
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("instruct", ["A deep, calm male voice, speaking slowly.", "Bright and quick."])
@pytest.mark.parametrize("greedy", [True, False], ids=["greedy", "sampled"])
def test_voice_design_codes_equal_the_official_ones(design, official_design, reference_tokenizer, instruct, greedy):
    engine, official = design, official_design
    instruct_ids = reference_tokenizer.encode(f"<|im_start|>user\n{instruct}<|im_end|>\n") if instruct else None
    expected = official_codes(official, ids(reference_tokenizer, TEXT), None, "auto", instruct_ids=instruct_ids,
                              greedy=greedy, seed=5, max_new_tokens=16)
    got = engine.generate_codes(TEXT, None, "auto", instruct=instruct, greedy=greedy, seed=5, max_new_tokens=16,
                                budget=None).codes
    assert np.array_equal(got, expected)


def test_a_designed_voice_needs_its_instruction(design):
    """The one VoiceDesign rule (VoiceRules.check_instruct), as every surface meets it."""
    for instruct in (None, "", "   "):
        with pytest.raises(hearth.InputError, match="VoiceDesign checkpoint speaks the voice its instruction") as e:
            design.generate_codes(TEXT, None, "auto", instruct=instruct, max_new_tokens=2)
        assert e.value.param == "instruct"


def test_each_kind_refuses_what_it_cannot_do(base, engine, design):
    with pytest.raises(hearth.InputError, match="unknown voice .ryan.: Base .* cloned voices.*hearth voice add"):
        base.generate_codes(TEXT, "ryan", max_new_tokens=2)
    with pytest.raises(hearth.InputError, match="needs a Base checkpoint"):
        engine.speaker_embedding(reference_audio(1, 0), 24000)
    voice = base.speaker_embedding(reference_audio(1, 0), 24000)
    with pytest.raises(hearth.InputError, match="a cloned voice needs a Base checkpoint.*ryan"):
        engine.generate_codes(TEXT, voice, max_new_tokens=2)
    with pytest.raises(hearth.InputError, match="describe the voice in the instruction"):
        design.generate_codes(TEXT, "ryan", instruct="A bright voice.", max_new_tokens=2)


def test_a_cloned_voice_on_openvino(base, base_fp32):
    """The fast path takes the same speaker embedding: fp32 weights give the torch reference's greedy codes,
    and stream audio."""
    fp32 = base_fp32
    voice = base.speaker_embedding(reference_audio(2, 9), 24000)
    want = base.generate_codes(TEXT, voice, "english", greedy=True, max_new_tokens=12, budget=None).codes
    got = fp32.generate_codes(TEXT, voice, "english", greedy=True, max_new_tokens=12, budget=None).codes
    assert np.array_equal(got, want)
    with fp32.stream(TEXT, voice, "english", seed=3, max_new_tokens=10) as stream:
        chunks = list(stream)
    assert chunks and sum(c.frames for c in chunks) * 1920 == sum(len(c.samples) for c in chunks)


@pytest.mark.parametrize("seconds,seed", [(1.0, 5), (4.3, 6)])
def test_reference_codes_equal_the_official_speech_tokenizer(base, official_base, seconds, seed):
    """The speech tokenizer's encoder (read from the checkpoint the official package reads too)."""
    audio = reference_audio(seconds, seed)
    want = official_base.model.speech_tokenizer.encode(audio, sr=24000).audio_codes[0]
    got = base.reference_codes(audio, 24000)
    assert got.shape == want.shape == (-(-audio.size // 1920), 16)
    assert np.array_equal(got, want) and len(set(got[:, 0].tolist())) > 1


REF_TEXT = "A quick brown fox jumps over the lazy dog."


def official_icl_prompt(official, audio: np.ndarray) -> dict:
    codes = official.model.speech_tokenizer.encode(audio, sr=24000).audio_codes[0]
    return {"ref_code": [codes], "ref_spk_embedding": [official_embedding(official, audio)],
            "x_vector_only_mode": [False], "icl_mode": [True]}


@pytest.mark.parametrize("text_mode,text", [(None, TEXT), ("whole", TEXT), (None, "Hi."),
                                            ("whole", "Hi."), (None, "Yes, " * 40)])
@pytest.mark.parametrize("greedy", [True, False], ids=["greedy", "sampled"])
def test_in_context_clone_codes_equal_the_official_ones(base, official_base, reference_tokenizer, text_mode, text,
                                                        greedy):
    """Short texts leave the reference's codec track longer than the text track, long ones the
    reverse (their text then trails, interleaved): both sides of the official layout."""
    audio = reference_audio(1.6, 21)
    voice = base.clone_voice(audio, 24000, REF_TEXT)
    ref_ids = reference_tokenizer.encode(f"<|im_start|>assistant\n{REF_TEXT}<|im_end|>\n")
    assert voice.text_ids == ref_ids[3:-2] and voice.codes.shape == (20, 16)
    expected = official_codes(official_base, ids(reference_tokenizer, text), None, "english",
                              voice_clone_prompt=official_icl_prompt(official_base, audio), ref_ids=ref_ids,
                              text_mode=text_mode or "interleaved", greedy=greedy, seed=13, max_new_tokens=18)
    got = base.generate_codes(text, voice, "english", text_mode=text_mode, greedy=greedy, seed=13,
                              max_new_tokens=18, budget=None).codes
    assert got.shape == expected.shape and np.array_equal(got, expected)


def test_in_context_clone_audio_equals_the_official_voice_clone(base, official_base):
    """The whole path of `generate_voice_clone` (its own prompt building, generation, decoding of
    reference + new codes, and cut) against Hearth's stream, whose vocoder hears the reference first."""
    from hearth.streaming.sinks import snr_db

    audio = reference_audio(2.2, 23)
    voice = base.clone_voice(audio, 24000, REF_TEXT)
    wavs, rate = official_base.generate_voice_clone(TEXT, language="English", ref_audio=(audio, 24000),
                                                    ref_text=REF_TEXT, do_sample=False, subtalker_dosample=False,
                                                    max_new_tokens=15)
    got = base.synthesize(TEXT, voice, "english", greedy=True, max_new_tokens=15, budget=None)
    frames, ref = got.codes.shape[0], voice.codes.shape[0]
    # The official cut is int(ref / total * samples): float rounding leaves one reference sample in now and then.
    extra = ref * 1920 - int(ref / (ref + frames) * (ref + frames) * 1920)
    want = wavs[0][extra:]
    assert rate == 24000 and got.samples.shape == want.shape == (frames * 1920,)
    assert snr_db(want, got.samples) > 100
    # Again: the vocoder now starts from a fork of the reference-primed state it kept; the first use changed nothing.
    again = base.synthesize(TEXT, voice, "english", greedy=True, max_new_tokens=15, budget=None)
    assert np.array_equal(again.samples, got.samples)


def test_in_context_clone_on_openvino(base, base_fp32):
    fp32 = base_fp32
    audio = reference_audio(1.2, 29)
    voice = base.clone_voice(audio, 24000, REF_TEXT)
    want = base.generate_codes(TEXT, voice, "english", greedy=True, max_new_tokens=12, budget=None).codes
    assert np.array_equal(fp32.generate_codes(TEXT, voice, "english", greedy=True, max_new_tokens=12,
                                           budget=None).codes, want)


def test_openvino_keeps_a_voices_primed_vocoder_on_disk(base, base_fp32):
    """The first utterance decodes the reference and keeps that state; after the in-memory copy is
    dropped (as in a new process) the state comes from disk: the reference is not decoded again and
    the audio is the same."""
    voice = base.clone_voice(reference_audio(1.5, 41), 24000, REF_TEXT)
    vocoder = base_fp32.vocoder
    first = base_fp32.synthesize(TEXT, voice, "english", seed=3, max_new_tokens=8)
    assert len(list((vocoder.converted.directory / "primed").glob("*.npz"))) >= 1
    base_fp32.forget_primed(voice)  # memory and disk: as if never used
    assert prime_on_disk(vocoder, voice.codes)  # what `hearth voice add` does
    decoded = []
    original = vocoder.decode

    def counting(codes, state):
        decoded.append(codes.shape[0])
        return original(codes, state)

    vocoder.decode = counting
    try:
        again = base_fp32.synthesize(TEXT, voice, "english", seed=3, max_new_tokens=8)
    finally:
        del vocoder.decode
    assert sum(decoded) == len(again.codes)  # only the new frames: the reference's state was loaded
    assert np.array_equal(first.samples, again.samples)


def test_clone_input_errors(base):
    audio = reference_audio(1.2, 1)
    with pytest.raises(hearth.InputError, match="transcript"):
        base.clone_voice(audio, 24000)
    with pytest.raises(hearth.InputError, match="transcript"):
        base.clone_voice(audio, 24000, "   ")
    assert not base.clone_voice(audio, 24000, x_vector_only=True).in_context
    voice = base.clone_voice(audio, 24000, REF_TEXT)
    with pytest.raises(hearth.InputError, match="whole text"):
        base.open(voice, "english")


@pytest.mark.parametrize("rate", [16000, 44100])
def test_other_sample_rates_are_resampled_as_the_official_pipeline_does(base, official_base, rate):
    audio = reference_audio(1.5 * rate / 24000, 41)  # 1.5 s at `rate`
    voice = base.clone_voice(audio, rate, REF_TEXT)
    item = official_base.create_voice_clone_prompt(ref_audio=(audio, rate), ref_text=REF_TEXT)[0]
    assert np.array_equal(voice.vector, item.ref_spk_embedding) and np.array_equal(voice.codes, item.ref_code)


@pytest.mark.parametrize("audio,match", [
    (np.zeros(48000, np.float32), "silent"),
    (reference_audio(0.5, 1), "at least 1 s"),
    (reference_audio(31, 1), "at most 30 s"),
    (np.full(48000, np.nan, np.float32), "non-finite"),
])
def test_bad_references_are_refused(base, audio, match):
    with pytest.raises(hearth.InputError, match=match):
        base.clone_voice(audio, 24000, REF_TEXT)


def write_with_official_classes(source, out):
    """The official classes write a random checkpoint of `source`'s configs (Base: the speaker encoder
    and the speech tokenizer's encoder included); the configs and tokenizer files are copied."""
    import json
    import shutil

    from official import import_official

    _, modeling, tok_modeling = import_official()
    from qwen_tts.core.models.configuration_qwen3_tts import Qwen3TTSConfig
    from qwen_tts.core.tokenizer_12hz.configuration_qwen3_tts_tokenizer_v2 import Qwen3TTSTokenizerV2Config

    torch.manual_seed(5)
    model = modeling.Qwen3TTSForConditionalGeneration(Qwen3TTSConfig(**json.loads((source / "config.json")
                                                                                  .read_text(encoding="utf-8")))).eval()
    model.save_pretrained(out, safe_serialization=True)
    codec_json = (source / "speech_tokenizer/config.json").read_text(encoding="utf-8")
    codec = Qwen3TTSTokenizerV2Config(**json.loads(codec_json))
    tok_modeling.Qwen3TTSTokenizerV2Model(codec).save_pretrained(out / "speech_tokenizer", safe_serialization=True)
    # The weights are the official classes'; the configs stay in the released layout (save_pretrained
    # adds a model_type to speaker_encoder_config that its own loader then refuses).
    for name in ("config.json", "speech_tokenizer/config.json", "vocab.json", "merges.txt", "tokenizer_config.json",
                 "generation_config.json", "preprocessor_config.json", "speech_tokenizer/preprocessor_config.json"):
        if (source / name).is_file():
            shutil.copy(source / name, out / name)
    return out


@pytest.mark.slow
def test_checkpoints_written_by_the_official_classes(base_dir, design_dir, reference_tokenizer, tmp_path):
    """Base and VoiceDesign checkpoints as the official classes write them (their own random init):
    Hearth's in-context clone and designed voice give the official package's codes on them."""
    written = write_with_official_classes(base_dir, tmp_path / "base")
    ours, theirs = hearth.load(written, backend="torch"), load_official(written)
    audio = reference_audio(1.4, 51)
    voice = ours.clone_voice(audio, 24000, REF_TEXT)
    assert np.array_equal(voice.vector, official_embedding(theirs, audio))
    ref_ids = reference_tokenizer.encode(f"<|im_start|>assistant\n{REF_TEXT}<|im_end|>\n")
    expected = official_codes(theirs, ids(reference_tokenizer, TEXT), None, "english",
                              voice_clone_prompt=official_icl_prompt(theirs, audio), ref_ids=ref_ids,
                              text_mode="interleaved", seed=17, max_new_tokens=14)
    assert np.array_equal(ours.generate_codes(TEXT, voice, "english", seed=17, max_new_tokens=14, budget=None).codes,
                       expected)

    written = write_with_official_classes(design_dir, tmp_path / "design")
    ours, theirs = hearth.load(written, backend="torch"), load_official(written)
    instruct = "A bright, quick voice."
    instruct_ids = reference_tokenizer.encode(f"<|im_start|>user\n{instruct}<|im_end|>\n")
    expected = official_codes(theirs, ids(reference_tokenizer, TEXT), None, "english", instruct_ids=instruct_ids,
                              seed=19, max_new_tokens=14)
    got = ours.generate_codes(TEXT, None, "english", instruct=instruct, seed=19, max_new_tokens=14, budget=None)
    assert np.array_equal(got.codes, expected)
