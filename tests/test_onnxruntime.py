"""The language model on ONNX Runtime: the same algorithm on the runtime whose quantized kernels
are the faster ones without AVX-512.

fp32 weights reproduce the official codes under greedy decoding, for both talker widths; seeded
sampling is reproducible and independent of chunking; the in-graph sampler follows the reference
distribution; int8 stays close to fp32 (teacher-forced); a conversion is cached. How the batch's
slots follow each row's solo session is in test_batch.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from test_official_equality import assert_same_codes

import hearth
from hearth.backends.accuracy import compare_formats, teacher_forced_logits
from hearth.prompt import embed_prompt
from hearth.sampling import warp

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def ort_fp32(tiny_dir):
    return hearth.load(tiny_dir, backend="onnxruntime", weights="fp32", vocoder="torch", threads=2)


@pytest.fixture(scope="module")
def ort_int8(tiny_dir):
    return hearth.load(tiny_dir, backend="onnxruntime", weights="int8", threads=2)


@pytest.mark.parametrize("text_mode", ["whole", "interleaved"])
def test_fp32_greedy_equals_official(official, ort_fp32, reference_tokenizer, text_mode):
    assert_same_codes(official, ort_fp32, reference_tokenizer, "It's a fine day; isn't it? Let's walk.",
                      "ryan", "english", text_mode=text_mode, greedy=True, max_new_tokens=40)


def test_fp32_greedy_wide_talker_equals_official(official17, tiny17_dir, reference_tokenizer):
    engine = hearth.load(tiny17_dir, backend="onnxruntime", weights="fp32", vocoder="torch")
    assert_same_codes(official17, engine, reference_tokenizer, "Speak softly, please.", "vivian", "chinese",
                      greedy=True, instruct="Whisper.", max_new_tokens=30)


@pytest.mark.parametrize("which", ["ort_fp32", "ort_int8"])
def test_sampled_codes_reproducible_and_independent_of_chunking(request, which):
    engine = request.getfixturevalue(which)
    text = "Streaming must not change a single code."
    whole = engine.generate_codes(text, "aiden", "english", seed=123, max_new_tokens=30, budget=None).codes
    assert whole.shape[0] > 5
    for chunk, first in ((1, 1), (3, 2), (7, 4)):
        got = engine.synthesize(text, "aiden", "english", seed=123, max_new_tokens=30, budget=None,
                                chunk_frames=chunk, first_chunk_frames=first)
        assert torch.equal(got.codes, whole)
    other = engine.generate_codes(text, "aiden", "english", seed=124, max_new_tokens=30, budget=None).codes
    assert not torch.equal(other, whole)


@pytest.mark.parametrize("temperature,top_k,top_p", [(1.0, 0, 1.0), (0.7, 50, 1.0), (1.3, 20, 0.8), (0.9, 0, 0.5)])
def test_in_graph_sampler_follows_reference_distribution(temperature, top_k, top_p):
    import onnxruntime as ort
    from onnx import TensorProto as T
    from onnx import helper

    from hearth.backends.ort_graphs import _Graph, _model, _sample

    vocab = 300
    g = _Graph()
    picked = _sample(g, "logits", "draw", "temperature", "top_k", "top_p")
    g.op("Identity", [picked])
    g.nodes[-1].output[0] = "picked"
    inputs = [helper.make_tensor_value_info("logits", T.FLOAT, [1, vocab]),
              helper.make_tensor_value_info("draw", T.FLOAT, [1, 1]),
              helper.make_tensor_value_info("temperature", T.FLOAT, [1, 1]),
              helper.make_tensor_value_info("top_k", T.INT64, [1]),
              helper.make_tensor_value_info("top_p", T.FLOAT, [1, 1])]
    session = ort.InferenceSession(_model(g, inputs, [helper.make_tensor_value_info("picked", T.INT64, [1])],
                                          "sampler").SerializeToString(), providers=["CPUExecutionProvider"])

    def pick(logits: torch.Tensor, u: float) -> int:
        return int(session.run(["picked"], {
            "logits": logits.numpy(), "draw": np.array([[u]], np.float32),
            "temperature": np.array([[temperature]], np.float32), "top_k": np.array([top_k or vocab], np.int64),
            "top_p": np.array([[top_p]], np.float32)})[0][0])

    gen = torch.Generator().manual_seed(int(temperature * 100) + top_k)
    for _ in range(3):
        logits = torch.randn(1, vocab, generator=gen) * 3
        probs = torch.softmax(warp(logits, temperature, top_k, top_p), dim=-1)[0].double()
        order = torch.argsort(probs, descending=True)
        cdf = torch.cumsum(probs[order], 0)
        kept = int((probs > 0).sum())
        lower = torch.cat((torch.zeros(1, dtype=torch.float64), cdf[:-1]))
        ranks = [r for r in range(kept) if probs[order[r]] > 1e-4]
        assert len(ranks) >= min(kept, 5)
        for rank in ranks[:40] + ranks[-1:]:  # a draw inside a candidate's interval picks it
            assert pick(logits, float((lower[rank] + cdf[rank]) / 2)) == int(order[rank]), (rank, kept)
        assert probs[pick(logits, 0.9999999)] > 0  # never an excluded code


def test_int8_logits_stay_close_to_fp32(ort_fp32):
    """Teacher-forced on the fp32 engine's greedy codes: int8 (8-bit blocks of 32, int8 activations)
    keeps every codebook's logits near fp32's."""
    engine = ort_fp32
    ckpt = engine.checkpoint
    codes = engine.generate_codes("Close enough is measured.", "ryan", "english", greedy=True,
                                  max_new_tokens=12, budget=None).codes
    with torch.inference_mode():
        embeds = embed_prompt(engine.lm, engine.config, engine.prompt("Close enough is measured."), "ryan",
                              "english", "whole")
        ref = teacher_forced_logits(ckpt, "fp32", embeds, codes, engine.lm.embed_codec, backend="onnxruntime")
        got = teacher_forced_logits(ckpt, "int8", embeds, codes, engine.lm.embed_codec, backend="onnxruntime")
    t = engine.config.talker
    vocabs = [t.stack.vocab_size] + [t.predictor.vocab_size] * (t.num_code_groups - 1)
    assert (ref[:, 1:, : t.predictor.vocab_size].argmax(-1) == codes[:, 1:].numpy()).all()
    for r in compare_formats(ref, got, vocabs):
        assert r.snr_db > 25, r
        assert r.top1 >= 0.75, r


def test_a_conversion_is_cached_and_keyed(tiny_dir, ort_int8, caplog):
    """A second load of the same checkpoint and weights reads the cache; int4 is another entry."""
    import logging

    with caplog.at_level(logging.INFO, logger="hearth"):
        again = hearth.load(tiny_dir, backend="onnxruntime", weights="int8", threads=2)
    assert again.lm.converted.directory == ort_int8.lm.converted.directory
    assert not any("converting the language model" in r.message for r in caplog.records)
    int4 = hearth.load(tiny_dir, backend="onnxruntime", weights="int4", threads=2)
    assert int4.lm.converted.directory != ort_int8.lm.converted.directory
    assert int4.backend.weights_mb()["talker"]["stored_mb"] < ort_int8.backend.weights_mb()["talker"]["stored_mb"]


def test_fast_is_four_bit_weights_on_onnxruntime(tiny_dir):
    """`fast=True` / `--fast`: the fastest combination measured (docs/performance.md)."""
    engine = hearth.load(tiny_dir, fast=True)
    assert (engine.options.backend, engine.options.weights) == ("onnxruntime", "int4")
    assert engine.synthesize("Fast.", "ryan", "english", seed=1, max_new_tokens=6).samples.size > 0
    with pytest.raises(hearth.InputError, match="fast"):
        hearth.load(tiny_dir, fast=True, backend="torch")
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "codes", "Fast.", "--model", str(tiny_dir), "--fast",
                        "--seed", "1", "--max-new-tokens", "6"], capture_output=True, text=True, timeout=300,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert "(onnxruntime)" in r.stderr and json.loads(r.stdout)["backend"] == "onnxruntime"


def test_a_voices_prompt_prefix_is_computed_once(ort_int8):
    """The prompt's voice-and-language prefix is computed once and kept: the next sentence in that
    voice starts from the kept keys and values, and gives exactly the codes it gives when the prefix
    was computed for it (a prompt is always computed in those two parts), while another voice gets
    a prefix of its own."""
    engine = ort_int8
    engine.lm.prefixes._kept.clear()
    first = engine.generate_codes("A first sentence.", "ryan", "english", seed=5, max_new_tokens=12).codes
    assert len(engine.lm.prefixes._kept) == 1
    other_text = engine.generate_codes("Another one, longer than the first.", "ryan", "english", seed=5,
                                       max_new_tokens=12).codes
    assert len(engine.lm.prefixes._kept) == 1 and other_text.shape[0] > 0  # the same voice: reused
    again = engine.generate_codes("A first sentence.", "ryan", "english", seed=5, max_new_tokens=12).codes
    assert torch.equal(first, again)
    engine.generate_codes("A first sentence.", "aiden", "english", seed=5, max_new_tokens=12)
    assert len(engine.lm.prefixes._kept) == 2


def test_a_kept_prefix_changes_the_prompt_only_by_rounding(tiny_dir, ort_int8):
    """Prefill logits with the prefix computed apart equal one-piece prefill's up to rounding (a
    wrong position or slot would change them completely)."""
    from hearth.backends.ort import SlotBatch
    from hearth.sampling import SamplingOptions

    lm = ort_int8.lm
    embeds = embed_prompt(lm, ort_int8.config, ort_int8.prompt("Split or whole, the same sentence."), "serena",
                          "english", "whole")
    with torch.inference_mode():
        whole = SlotBatch(lm, 1).open(SamplingOptions().greedy(), None, embeds.prefill.shape[1]).prefill(
            embeds.prefill)
        split_row = SlotBatch(lm, 1).open(SamplingOptions().greedy(), None, embeds.prefill.shape[1], embeds.prefix)
        split = split_row.prefill(embeds.prefill)
    assert 0 < embeds.prefix < embeds.prefill.shape[1] and split_row.position == embeds.prefill.shape[1]
    torch.testing.assert_close(split, whole, rtol=0.05, atol=0.05 * float(whole.abs().max()))
