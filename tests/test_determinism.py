"""The determinism contract (docs/determinism.md) at the language model's depth: a row's numbers
depend on its own inputs only, never on the other rows of its batch, their number, contents, lengths
or comings and goings, nor on the width the engine was compiled for.

Each compiled backend and preset runs random batch compositions (hypothesis): one to four rows
joining and leaving at random frames, with their own prompt lengths and seeds, some sitting frames
out; every talker step's logits and every predictor call's codes and summed embedding must equal,
bit for bit, the same row stepped alone in an engine compiled for lone rows. This runs on whatever
CPU the suite runs on; `make test-cpus` runs it as every x86 level the runtimes dispatch on."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hearth
from hearth.backends.openvino import language_model_refusal
from hearth.backends.ort import check_shapes
from hearth.backends.row_pairs import paired
from hearth.checkpoint.loading import open_checkpoint
from hearth.errors import InputError
from hearth.tools.random_checkpoint import tiny_configs, write_checkpoint

pytestmark = pytest.mark.slow

# Every compiled backend's weight formats ("mix": an int8 talker beside an int4 predictor). On ARM
# and on x86 without AVX2 OpenVINO's language model does not run (no paged-attention kernel: it is
# refused, see below), so ONNX Runtime's formats are all there is (scripts/arm64.sh runs this module
# under qemu; `make test-cpus` at the sse42 level).
ORT_PRESETS = [("onnxruntime", "int8"), ("onnxruntime", "int4"), ("onnxruntime", "mix"), ("onnxruntime", "fp32")]
OV_PRESETS = [("openvino", "int8"), ("openvino", "int4"), ("openvino", "fp32")]
PRESETS = ORT_PRESETS if language_model_refusal() else [*OV_PRESETS, *ORT_PRESETS]

FRAMES = 14


@pytest.fixture(scope="module", params=PRESETS, ids="-".join)
def engines(request, tiny_dir):
    backend, weights = request.param
    solo = hearth.load(tiny_dir, backend=backend, weights=weights)
    wide = hearth.load(tiny_dir, backend=backend, weights=weights, batch_rows=3)
    yield solo, wide
    solo.close()
    wide.close()


rows_strategy = st.lists(
    st.fixed_dictionaries({
        "join": st.integers(0, 6),
        "prompt": st.integers(2, 24),
        "seed": st.integers(0, 2**31 - 1),
        "leave": st.one_of(st.none(), st.integers(3, FRAMES - 1)),
        "sits_out": st.sampled_from([0, 2, 3]),  # every n-th frame without a step (0: never)
    }),
    min_size=1, max_size=4,
)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=rows_strategy, inputs_seed=st.integers(0, 2**31 - 1))
def test_every_row_of_any_batch_equals_itself_alone(engines, rows, inputs_seed):
    solo_engine, wide_engine = engines
    lm, alone = wide_engine.lm, solo_engine.lm
    hidden = wide_engine.config.talker.stack.hidden_size
    options = wide_engine.sampling()
    gen = np.random.default_rng(inputs_seed)
    batch = lm.batch(4)
    open_rows: dict[int, list] = {}
    for frame in range(FRAMES):
        for k, spec in enumerate(rows):
            if spec["join"] == frame:
                open_rows[k] = [batch.open(options, spec["seed"], spec["prompt"]),
                                alone.session(options, spec["seed"], spec["prompt"]), True]
            if spec["leave"] == frame and k in open_rows:
                for session in open_rows.pop(k)[:2]:
                    session.close()
        live = [k for k in sorted(open_rows)
                if open_rows[k][2] or not (rows[k]["sits_out"] and frame % rows[k]["sits_out"] == 1)]
        if not live:
            continue
        inputs = [gen.standard_normal((1, rows[k]["prompt"] if open_rows[k][2] else 1, hidden), np.float32)
                  for k in live]
        got = batch.talker([open_rows[k][0] for k in live], inputs, [open_rows[k][2] for k in live])
        for k, x, logits in zip(live, inputs, got, strict=True):
            session = open_rows[k][1]
            want = session.prefill(x) if open_rows[k][2] else session.step(x)
            assert not isinstance(logits, BaseException), logits
            assert np.array_equal(logits, want), f"row {k}'s talker output differs in frame {frame}"
            open_rows[k][2] = False
        cb0 = [int(gen.integers(0, 2048)) for _ in live]
        for k, code, result in zip(live, cb0, batch.predict([open_rows[k][0] for k in live], cb0), strict=True):
            assert not isinstance(result, BaseException), result
            codes, summed = result
            solo_codes, solo_summed = open_rows[k][1].predict(code)
            assert codes == solo_codes, f"row {k}'s codes differ in frame {frame}"
            assert np.array_equal(summed, solo_summed)
    for row, session, _ in open_rows.values():
        row.close()
        session.close()
    batch.close()


def test_openvinos_language_model_is_refused_on_arm_before_converting(tiny_dir, monkeypatch):
    """On ARM OpenVINO's CPU plugin fails to compile the paged talker; the load says what runs there
    (as an ARM machine shows itself: really under scripts/arm64.sh, here through the platform fact)."""
    import hearth.platform.topology

    monkeypatch.setattr(hearth.platform.topology, "is_arm", lambda: True)
    with pytest.raises(InputError, match="backend='onnxruntime'"):
        hearth.load(tiny_dir, backend="openvino", vocoder="onnxruntime")


def test_openvinos_language_model_is_refused_without_avx2_before_converting(tiny_dir, monkeypatch):
    """On an x86 without AVX2 (SSE4.2: the NAS class) OpenVINO's paged talker fails at its first
    step; the load says what runs there (the real CPU level is test_cli_arguments' `--cpu sse42`)."""
    import hearth.backends.openvino

    monkeypatch.setattr(hearth.backends.openvino, "simd", lambda: "sse42")
    with pytest.raises(InputError, match="without AVX2.*backend='onnxruntime'"):
        hearth.load(tiny_dir, backend="openvino", vocoder="onnxruntime")


def test_rows_come_in_pairs():
    assert [paired(n) for n in range(1, 8)] == [2, 2, 4, 4, 6, 6, 8]


def test_onnxruntime_refuses_head_sizes_its_attention_cannot_run_before_converting(tmp_path, monkeypatch):
    """The official classes accept a head size of 12; ONNX Runtime's GroupQueryAttention does not:
    the load says which backend takes it before anything converts (its vocoder included)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("HEARTH_CACHE", str(cache))
    config, codec = tiny_configs("0b6", hidden=48, layers=1)
    config["talker_config"]["code_predictor_config"]["head_dim"] = 12
    ckpt = open_checkpoint(write_checkpoint(tmp_path / "ckpt", config, codec, seed=1))
    other = "torch" if language_model_refusal() else "openvino"
    with pytest.raises(InputError, match=f"backend='{other}'") as e:
        check_shapes(ckpt)  # (the first thing ONNX Runtime's language model does)
    assert e.value.param == "backend"
    with pytest.raises(InputError, match="multiples of 8"):
        hearth.load(ckpt.path, backend="onnxruntime")
    with pytest.raises(InputError, match="multiples of 8"):
        hearth.load(ckpt.path, small=True)  # (its language model and vocoder load side by side)
    assert not any(cache.rglob("*.xml")) and not any(cache.rglob("*.onnx")), sorted(cache.rglob("*"))
    engine = hearth.load(ckpt.path, backend=other, vocoder="torch")  # the one it names takes it
    try:
        audio = engine.synthesize("Twelve.", engine.voices[0], "english", seed=1, max_new_tokens=6)
        assert len(audio.samples) > 0
    finally:
        engine.close()
