"""The language model on ONNX Runtime, its own matters: conversions cached and keyed, `--fast`, a
voice's prompt prefix kept. What both compiled backends do alike is in test_compiled_backends.py;
how the batch's slots follow each row's solo session, in test_batch.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

import hearth
from hearth.prompt import embed_prompt

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def ort_int8(tiny_dir):
    return hearth.load(tiny_dir, backend="onnxruntime", weights="int8", threads=2)


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
