"""What both compiled backends (OpenVINO, and the language model on ONNX Runtime) must do alike.

fp32 weights reproduce the official codes under greedy decoding (sampling draws its randoms
differently by design), for both talker widths; within a backend, seeded sampling is reproducible
and independent of chunking; the in-graph sampler follows the reference distribution; int8 stays
close to fp32, teacher-forced. Each backend's own matters are in test_openvino.py and
test_onnxruntime.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_official_equality import assert_same_codes

import hearth
from hearth.model.torch_sampling import warp
from hearth.text.prompt import embed_prompt
from hearth.tools.accuracy import compare_formats, teacher_forced_logits

BACKENDS = ["openvino", "onnxruntime"]


_ENGINES: dict[tuple, hearth.Engine] = {}


def _engine(tiny_dir, backend: str, weights: str) -> hearth.Engine:
    key = (str(tiny_dir), backend, weights)
    if key not in _ENGINES:
        # ONNX Runtime's language model with its own vocoder, as where the CPU has no bf16 arithmetic
        vocoder = "onnxruntime" if backend == "onnxruntime" else "fp32" if weights == "fp32" else "bf16"
        _ENGINES[key] = hearth.load(tiny_dir, backend=backend, weights=weights, vocoder=vocoder, threads=2)
    return _ENGINES[key]


@pytest.fixture(scope="module", params=BACKENDS)
def fp32_engine(request, tiny_dir):
    return _engine(tiny_dir, request.param, "fp32")


@pytest.fixture(scope="module", params=[(b, w) for b in BACKENDS for w in ("fp32", "int8")],
                ids="-".join)
def any_weights_engine(request, tiny_dir):
    return _engine(tiny_dir, *request.param)


@pytest.mark.parametrize("text_mode", ["whole", "interleaved"])
def test_fp32_greedy_equals_official(official, fp32_engine, reference_tokenizer, text_mode):
    assert_same_codes(official, fp32_engine, reference_tokenizer, "It's a fine day; isn't it? Let's walk.",
                      "ryan", "english", text_mode=text_mode, greedy=True, max_new_tokens=40)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fp32_greedy_wide_talker_equals_official(official17, tiny17_dir, reference_tokenizer, backend):
    engine = hearth.load(tiny17_dir, backend=backend, weights="fp32", vocoder="torch")
    assert_same_codes(official17, engine, reference_tokenizer, "Speak softly, please.", "vivian", "chinese",
                      greedy=True, instruct="Whisper.", max_new_tokens=30)


def test_sampled_codes_reproducible_and_independent_of_chunking(any_weights_engine):
    engine = any_weights_engine
    text = "Streaming must not change a single code."
    whole = engine.generate_codes(text, "aiden", "english", seed=123, max_new_tokens=30, budget=None).codes
    assert whole.shape[0] > 5
    for chunk, first in ((1, 1), (3, 2), (7, 4)):
        got = engine.synthesize(text, "aiden", "english", seed=123, max_new_tokens=30, budget=None,
                                chunk_frames=chunk, first_chunk_frames=first)
        assert np.array_equal(got.codes, whole)
    other = engine.generate_codes(text, "aiden", "english", seed=124, max_new_tokens=30, budget=None).codes
    assert not np.array_equal(other, whole)


def _no_weights(name: str) -> np.ndarray:
    raise AssertionError(f"the sampler reads no weight ({name})")


def _openvino_sampler(vocab: int):
    import openvino as ov
    import openvino.opset13 as ops

    from hearth.convert import networks as recipe
    from hearth.convert.ov_graphs import Builder

    logits_in = ops.parameter([1, vocab], ov.Type.f32)
    draw_in = ops.parameter([1], ov.Type.f32)
    params = [ops.parameter([], t) for t in (ov.Type.f32, ov.Type.i64, ov.Type.f32)]
    picked = recipe.sample(Builder(weights=_no_weights, fmt="fp32"), logits_in.output(0), draw_in.output(0),
                           *(p.output(0) for p in params))
    model = ov.Model([ops.result(picked)], [logits_in, draw_in, *params])
    req = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()

    def pick(logits: torch.Tensor, u: float, temperature: float, top_k: int, top_p: float) -> int:
        req.infer([logits.numpy(), np.array([u], np.float32), np.float32(temperature), np.int64(top_k),
                   np.float32(top_p)])
        return int(req.get_output_tensor(0).data[0])

    return pick


def _onnxruntime_sampler(vocab: int):
    import onnxruntime as ort
    from onnx import TensorProto as T
    from onnx import helper

    from hearth.convert import networks as recipe
    from hearth.convert.ort_graphs import Graph, Writer, onnx_model

    g = Graph()
    sampler = Writer(g, _no_weights, "fp32")
    g.op("Identity", [recipe.sample(sampler, "logits", "draw", "temperature", "top_k", "top_p")])
    g.nodes[-1].output[0] = "picked"
    inputs = [helper.make_tensor_value_info("logits", T.FLOAT, [1, vocab]),
              helper.make_tensor_value_info("draw", T.FLOAT, [1, 1]),
              helper.make_tensor_value_info("temperature", T.FLOAT, [1, 1]),
              helper.make_tensor_value_info("top_k", T.INT64, [1]),
              helper.make_tensor_value_info("top_p", T.FLOAT, [1, 1])]
    model = onnx_model(g, inputs, [helper.make_tensor_value_info("picked", T.INT64, [1])], "sampler")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])

    def pick(logits: torch.Tensor, u: float, temperature: float, top_k: int, top_p: float) -> int:
        return int(session.run(["picked"], {
            "logits": logits.numpy(), "draw": np.array([[u]], np.float32),
            "temperature": np.array([[temperature]], np.float32), "top_k": np.array([top_k], np.int64),
            "top_p": np.array([[top_p]], np.float32)})[0][0])

    return pick


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("temperature,top_k,top_p", [(1.0, 0, 1.0), (0.7, 50, 1.0), (1.3, 20, 0.8), (0.9, 0, 0.5)])
def test_in_graph_sampler_follows_reference_distribution(backend, temperature, top_k, top_p):
    vocab = 300
    pick = (_openvino_sampler if backend == "openvino" else _onnxruntime_sampler)(vocab)
    gen = torch.Generator().manual_seed(int(temperature * 100) + top_k)
    for _ in range(3):
        logits = torch.randn(1, vocab, generator=gen) * 3
        probs = torch.softmax(warp(logits, temperature, top_k, top_p), dim=-1)[0].double()
        order = torch.argsort(probs, descending=True)
        cdf = torch.cumsum(probs[order], 0)
        kept = int((probs > 0).sum())
        # A draw in the middle of each candidate's interval of the inverse CDF must pick it (for
        # intervals float32 can resolve; the rest of the tail is covered by the last check).
        lower = torch.cat((torch.zeros(1, dtype=torch.float64), cdf[:-1]))
        ranks = [r for r in range(kept) if probs[order[r]] > 1e-4]
        assert len(ranks) >= min(kept, 5)
        k = top_k or vocab
        for rank in ranks[:40] + ranks[-1:]:
            u = float((lower[rank] + cdf[rank]) / 2)
            assert pick(logits, u, temperature, k, top_p) == int(order[rank]), (rank, kept)
        assert probs[pick(logits, 0.9999999, temperature, k, top_p)] > 0  # never an excluded code


def test_int8_logits_stay_close_to_fp32(fp32_engine):
    engine = fp32_engine
    backend = engine.options.backend
    ckpt = engine.checkpoint
    codes = engine.generate_codes("Close enough is measured.", "ryan", "english", greedy=True,
                                  max_new_tokens=12, budget=None).codes
    prompt = engine.prompt("Close enough is measured.")
    with torch.inference_mode():
        embeds = embed_prompt(engine.lm, engine.config, prompt, "ryan", "english", "whole")
        ref = teacher_forced_logits(ckpt, "fp32", embeds, codes, engine.lm.embed_codec, backend=backend)
        got = teacher_forced_logits(ckpt, "int8", embeds, codes, engine.lm.embed_codec, backend=backend)
    t = engine.config.talker
    vocabs = [t.stack.vocab_size] + [t.predictor.vocab_size] * (t.num_code_groups - 1)
    rows = compare_formats(ref, got, vocabs)
    assert len(rows) == 16
    # The fp32 teacher-forced predictor, fed the fp32 engine's own greedy codes, picks those codes
    # (codebook 0 is chosen after EOS/control-token processing, so only 1..15 are checked).
    assert (ref[:, 1:, : t.predictor.vocab_size].argmax(-1) == codes[:, 1:]).all()
    for r in rows:
        assert r.snr_db > 25, r
        assert r.top1 >= 0.75, r


_LIBRARIES_OPENED_BY_LOADING = r"""
import json, os, sys
import hearth
from hearth.backends import create, prepare_side_by_side
from hearth.checkpoint.loading import open_checkpoint
from hearth.convert import CONVERT_ON_FIRST_USE
from hearth.backends.settings import backend_options

ckpt = open_checkpoint(sys.argv[1])
options = backend_options(**json.loads(sys.argv[2]))
assert options.loads_side_by_side, options
prepare_side_by_side(ckpt, options, CONVERT_ON_FIRST_USE)
os.write(2, b"=== loading\n")
backend = create(ckpt, options, CONVERT_ON_FIRST_USE)
os.write(2, b"=== loaded\n")
"""


@pytest.mark.parametrize("options", [{"backend": "openvino"}, {"small": True}], ids=["openvino", "onnxruntime"])
def test_loading_side_by_side_opens_no_library(tiny_dir, options):
    """One runtime for both networks loads them (and the tokenizer) on several threads at once,
    which is safe only if no thread opens a shared library while another starts threads (glibc's
    TLS set-up does not survive it): after `prepare_side_by_side`, loading opens none."""
    import json
    import os
    import subprocess
    import sys

    # The loader's own account (LD_DEBUG=files) names every library mapped, also one that fails to
    # load and is dropped again (OpenVINO's GPU plugin without libOpenCL, at each device query).
    r = subprocess.run([sys.executable, "-c", _LIBRARIES_OPENED_BY_LOADING, str(tiny_dir), json.dumps(options)],
                       capture_output=True, text=True, timeout=300, check=False,
                       env={**os.environ, "LD_DEBUG": "files"})
    assert r.returncode == 0, r.stderr[-2000:]
    loading = r.stderr.split("=== loading\n", 1)[1].split("=== loaded\n", 1)[0]
    mapped = sorted({line.split("file=", 1)[1].split(" [", 1)[0] for line in loading.splitlines()
                     if "generating link map" in line})
    assert mapped == []
