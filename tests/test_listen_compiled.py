"""The compiled hearing backends (OpenVINO, ONNX Runtime) against the torch reference, which equals
qwen-asr (test_listen_equality.py).

fp32 cannot be bit-exact there: each runtime sums a product's terms in its own order (blocked,
vectorised kernels, fused attention), so activations differ from torch's by float rounding. What
is held: the audio embeddings within 2e-5, the decoder's logits (teacher-forced on the reference's
tokens, so one flip cannot hide the rest) within 2e-4 of the reference's, the same greedy choice at
every step whose top two logits the reference separates by more than twice that, and whole
transcripts and alignments equal. int8 is lossy: its drift is measured by `hearth bench --listen`
(tools/listen_drift.py), not held here; these tests only check that it runs and stores less.
Conversions are made once into the run's cache and read back (a converter that refuses proves it),
and a process without torch loads them and refuses what it cannot convert.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
from sounds import SIGNALS, noise

from hearth.backends.asr_factory import create_asr_model
from hearth.checkpoint.asr_loading import open_asr_checkpoint
from hearth.errors import ConversionUnavailable, InputError
from hearth.listen import Aligner, Listener, ListenOptions
from hearth.listen.prompt import asr_prompt

BACKENDS = [pytest.param(b, marks=pytest.mark.skipif(importlib.util.find_spec(m) is None, reason=f"no {m}"))
            for b, m in (("openvino", "openvino"), ("onnxruntime", "onnxruntime"))]
EMBEDDING_BOUND = 2e-5
LOGIT_BOUND = 2e-4
CASES = [("noise", 0.3), ("sweep", 2.5), ("bursts", 4.3), ("noise", 9.3)]


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture(scope="module", params=["asr06", "asr17"])
def pair(request, backend):
    """(the torch reference, the compiled fp32 model) of a 0.6B-style checkpoint (tied head, 2 s
    windows) and a 1.7B-style one (own head, 8 s windows)."""
    path = request.getfixturevalue("asr_dir" if request.param == "asr06" else "asr17_dir")
    return Listener.load(path, backend="torch"), Listener.load(path, backend=backend, weights="fp32")


def _forced(model, prompt, audio, tokens) -> np.ndarray:
    """The logits after the prompt and after each of `tokens` [len(tokens) + 1, vocab]."""
    session = model.session(len(prompt.ids) + len(tokens) + 1)
    try:
        out = [session.prefill(prompt.ids, audio, prompt.audio_at)]
        out += [session.step(t) for t in tokens]
        return np.stack(out)
    finally:
        session.close()


@pytest.mark.parametrize("seconds", [0.3, 1.0, 1.99, 2.01, 4.5, 9.3])
def test_the_audio_embeddings_agree_with_the_reference(pair, seconds):
    """Within one convolution chunk, across chunks and across attention windows."""
    ref, ours = pair
    features = ref.features(noise(seconds, seed=int(seconds * 100)))
    want, got = ref.model.encode_audio(features), ours.model.encode_audio(features)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=EMBEDDING_BOUND)


@pytest.mark.parametrize("signal, seconds", CASES)
@pytest.mark.parametrize("language, context", [(None, ""), ("English", "Names: Hearth.")])
def test_the_decoder_agrees_and_chooses_as_the_reference(pair, signal, seconds, language, context):
    ref, ours = pair
    samples = SIGNALS[signal](seconds)
    o = ref.check_options(ListenOptions(context, language, 24))
    tokens = list(ref.transcribe(samples, o).pieces[0].token_ids)
    audio = ref.model.encode_audio(ref.features(samples))  # the same audio into both decoders
    prompt = asr_prompt(ref.tokenizer, ref.special, audio.shape[0], o.context, o.language)
    want, got = _forced(ref.model, prompt, audio, tokens), _forced(ours.model, prompt, audio, tokens)
    np.testing.assert_allclose(got, want, rtol=0, atol=LOGIT_BOUND)
    top2 = np.sort(want, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 2 * LOGIT_BOUND
    assert np.array_equal(got.argmax(1)[clear], want.argmax(1)[clear])
    assert clear.mean() > 0.9  # (the comparison means something)


@pytest.mark.parametrize("signal, seconds", CASES)
def test_the_transcripts_equal_the_reference(pair, signal, seconds):
    ref, ours = pair
    samples = SIGNALS[signal](seconds)
    for o in (ListenOptions(max_new_tokens=24), ListenOptions("Names: Qwen.", "Chinese", 24)):
        assert ours.transcribe(samples, o) == ref.transcribe(samples, o)


@pytest.fixture(scope="module")
def aligners(aligner, aligner_dir, backend):
    return aligner, Aligner.load(aligner_dir, backend=backend, weights="fp32")


@pytest.mark.parametrize("seconds, text, language", [(1.2, "hello there", "English"), (4.5, "今天天气很好", "Chinese"),
                                                     (9.3, "one two three four five six", None)])
def test_the_aligner_agrees_with_the_reference(aligners, seconds, text, language):
    ref, ours = aligners
    samples = noise(seconds, seed=7)
    features = ref.features(samples)
    audio = ref.model.encode_audio(features)
    np.testing.assert_allclose(ours.model.encode_audio(features), audio, rtol=0, atol=EMBEDDING_BOUND)
    from hearth.listen.prompt import aligner_prompt

    prompt, positions = aligner_prompt(ref.tokenizer, ref.special, audio.shape[0], ref.units(text, language))
    want = ref.model.timestamp_logits(prompt.ids, audio, prompt.audio_at, positions)
    got = ours.model.timestamp_logits(prompt.ids, audio, prompt.audio_at, positions)
    np.testing.assert_allclose(got, want, rtol=0, atol=LOGIT_BOUND)
    assert ours.align(samples, text, language) == ref.align(samples, text, language)


class Refuses:
    """A converter that must not be needed."""

    def asr_networks(self, *args):
        raise AssertionError("converted again: the cache was not read")


def test_a_conversion_is_made_once_and_read_back(asr_dir, backend):
    ckpt = open_asr_checkpoint(asr_dir)
    Listener.load(asr_dir, backend=backend, weights="fp32")  # (made by now, by this or an earlier test)
    model = create_asr_model(ckpt, backend, weights="fp32", converter=Refuses())
    from hearth.platform.process import cache_dir

    entries = sorted((cache_dir() / backend).glob("asr-fp32-*/manifest.json"))
    assert [e.parent for e in entries].count(model.converted.directory) == 1
    assert model.converted.manifest["weights"] == "fp32" and model.converted.manifest["kind"] == "Qwen3-ASR"


def test_int8_is_the_default_and_stores_less(asr_dir, backend):
    listener = Listener.load(asr_dir, backend=backend)
    assert listener.model.weights == "int8"
    parts = listener.model.weights_mb()
    assert set(parts) == {"conv", "windows", "decoder"}
    for name in ("windows", "decoder"):
        assert parts[name]["stored_mb"] < 0.5 * parts[name]["fp32_mb"]
    piece = listener.transcribe(noise(2.2, 5), ListenOptions(max_new_tokens=6)).pieces[0]
    assert 1 <= len(piece.token_ids) <= 6


def test_options_are_checked(asr_dir):
    with pytest.raises(InputError, match="backend 'tensorrt' cannot run Qwen3-ASR; choose one of: openvino"):
        Listener.load(asr_dir, backend="tensorrt")
    with pytest.raises(InputError, match="weights is for the compiled backends"):
        Listener.load(asr_dir, backend="torch", weights="int8")
    with pytest.raises(InputError, match="dtype is the torch reference's"):
        Listener.load(asr_dir, backend="onnxruntime", dtype="bfloat16")
    with pytest.raises(InputError, match="weights must be one of int8, fp32"):
        Listener.load(asr_dir, backend="openvino", weights="int4")
    with pytest.raises(InputError, match="threads must be a whole number"):
        Listener.load(asr_dir, backend="openvino", threads=0)


def test_a_missing_conversion_without_a_converter_is_refused(own_asr_dir, backend, tmp_path, monkeypatch):
    monkeypatch.setenv("HEARTH_CACHE", str(tmp_path))  # (missing whatever other tests converted before)
    with pytest.raises(ConversionUnavailable, match="no converter was handed in"):
        create_asr_model(open_asr_checkpoint(own_asr_dir), backend, weights="fp32", converter=None)


WITHOUT = "torch,onnx,onnxscript,nncf"
_SCRIPT = (
    "import sys, numpy as np\n"
    "from hearth.listen import Listener, ListenOptions\n"
    "from hearth.errors import InputError\n"
    "try:\n"
    "    l = Listener.load(sys.argv[1], backend=sys.argv[2], weights='fp32')\n"
    "except InputError as e:\n"
    "    print('refused:', e)\n"
    "    sys.exit(0)\n"
    "rng = np.random.default_rng(3)\n"
    "t = l.transcribe((0.1 * rng.standard_normal(40000)).astype(np.float32), ListenOptions(max_new_tokens=12))\n"
    "print('tokens', list(t.pieces[0].token_ids))\n"
    "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'onnx', 'onnxscript', 'nncf')"
    " or m.startswith(('hearth.convert.', 'hearth.model'))))\n"
)


def _without_torch(path, backend, cache) -> str:
    env = {**os.environ, "HEARTH_TEST_WITHOUT": WITHOUT, "HEARTH_CACHE": str(cache)}
    r = subprocess.run([sys.executable, "-c", _SCRIPT, str(path), backend], capture_output=True, timeout=300,
                       check=False, env=env)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


@pytest.mark.slow
def test_a_process_without_torch_loads_a_conversion_and_refuses_a_missing_one(asr_dir, backend, tmp_path):
    out = _without_torch(asr_dir, backend, tmp_path / "empty")
    assert out.startswith("refused:") and "converting needs torch" in out and "hearth-tts[convert]" in out, out
    assert not any((tmp_path / "empty").rglob("manifest.json"))
    ours = Listener.load(asr_dir, backend=backend, weights="fp32")  # converted into the run's cache
    rng = np.random.default_rng(3)
    samples = (0.1 * rng.standard_normal(40000)).astype(np.float32)
    want = list(ours.transcribe(samples, ListenOptions(max_new_tokens=12)).pieces[0].token_ids)
    from hearth.platform.process import cache_dir

    lines = _without_torch(asr_dir, backend, cache_dir()).splitlines()
    assert lines[0] == f"tokens {want}"
    assert lines[1] == "[]"  # neither torch nor the converting half of Hearth
