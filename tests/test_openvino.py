"""The OpenVINO backend's own matters: the streaming vocoder matches the torch decoder; converted
models are cached and keyed; mapped cache pages are dropped; the int4 predictor loop. What both
compiled backends do alike (fp32 codes equal to the official ones, seeded sampling, the in-graph
sampler, int8 near fp32) is in test_compiled_backends.py.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
import torch

import hearth
from hearth.text.prompt import embed_prompt
from hearth.tools.accuracy import compare_formats, snr_db, teacher_forced_logits


@pytest.fixture(scope="module")
def ov_fp32(tiny_dir):
    return hearth.load(tiny_dir, backend="openvino", weights="fp32", vocoder="fp32", threads=2)


@pytest.fixture(scope="module")
def ov_int8(tiny_dir):
    return hearth.load(tiny_dir, backend="openvino", weights="int8", vocoder="bf16", threads=2)


@pytest.mark.parametrize("precision,min_snr", [("fp32", 90.0), ("bf16", 25.0)])
def test_streaming_vocoder_matches_torch_decoder(engine, ov_fp32, ov_int8, precision, min_snr):
    vocoder = ov_fp32.vocoder if precision == "fp32" else ov_int8.vocoder
    gen = torch.Generator().manual_seed(3)
    codes = torch.randint(0, engine.checkpoint.codec.codebook_size, (23, 16), generator=gen)
    expected = engine.decode(codes)
    state = vocoder.start()
    parts, pos = [], 0
    for size in (1, 2, 5, 3, 8, 4):
        parts.append(vocoder.decode(codes[pos : pos + size], state))
        pos += size
    got = np.concatenate(parts)
    assert got.shape == expected.shape
    assert snr_db(expected, got) > min_snr
    assert snr_db(expected, vocoder(codes)) > min_snr


def test_converted_models_are_cached_and_keyed(tiny_dir, ov_fp32, tmp_path):
    from hearth.backends.openvino import convert_language_model
    from hearth.convert import CONVERT_ON_FIRST_USE as converter

    first = ov_fp32.lm.converted
    again = convert_language_model(ov_fp32.checkpoint, "fp32", converter=converter)
    assert again.directory == first.directory
    assert again.manifest == first.manifest  # read back, not rebuilt
    assert convert_language_model(ov_fp32.checkpoint, "int8", converter=converter).directory != first.directory
    parts = first.manifest["parts"]
    assert parts["talker"]["stored_bytes"] == parts["talker"]["fp32_bytes"]
    int8 = convert_language_model(ov_fp32.checkpoint, "int8", converter=converter).manifest["parts"]
    assert int8["talker"]["stored_bytes"] < 0.3 * int8["talker"]["fp32_bytes"]
    # A different checkpoint (here: the same files, rewritten) gets a new key.
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(tiny_dir, copy)
    (copy / "model.safetensors").touch()
    other = convert_language_model(hearth.checkpoint.loading.open_checkpoint(copy), "fp32", converter=converter)
    assert other.directory != first.directory


def test_bad_backend_options_are_refused_with_the_choices(tiny_dir):
    with pytest.raises(hearth.InputError, match="openvino, onnxruntime, torch"):
        hearth.load(tiny_dir, backend="cuda")
    with pytest.raises(hearth.InputError, match="int8, int4, mix, fp16, fp32"):
        hearth.load(tiny_dir, backend="openvino", weights="int3")
    with pytest.raises(hearth.InputError, match="BackendOptions"):
        hearth.load(tiny_dir, backend="openvino", wieghts="int8")


def _resident_kb(path) -> int:
    """SharedEngine kB of this process's mappings of `path` (from /proc/self/smaps)."""
    total, current = 0, None
    with open("/proc/self/smaps", encoding="utf-8") as fh:
        for line in fh:
            first = line.split(maxsplit=5)
            if "-" in first[0] and not first[0].endswith(":"):
                current = first[5].strip() if len(first) > 5 else None
            elif line.startswith("Rss:") and current == str(path):
                total += int(first[1])
    return total


def test_mapped_cache_pages_are_dropped_and_read_back_intact_from_memory(tmp_path):
    """Pages given back leave this process, not the page cache: read again, they come back intact
    and without a read from the disk (no major fault; MADV_PAGEOUT made each a disk read, and an
    OpenVINO load that read its files twice took 12-14 s to be ready instead of 4-5)."""
    import mmap
    import resource

    from hearth.backends.openvino import bounded_mapping, release_mapped_files

    path = (tmp_path / "weights.bin").resolve()
    data = np.random.default_rng(0).integers(0, 255, 32 << 20, dtype=np.uint8)
    with open(path, "wb") as fh:  # on disk (a page not yet written back stays, whatever is asked)
        fh.write(data.tobytes())
        fh.flush()
        os.fsync(fh.fileno())
    with open(path, "rb") as fh:
        view = np.frombuffer(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ), np.uint8)
    assert int(view[::4096].astype(np.int64).sum()) == int(data[::4096].astype(np.int64).sum())
    assert _resident_kb(path) >= 30 << 10
    assert release_mapped_files([tmp_path]) >= 32 << 20
    assert _resident_kb(path) < 1 << 10
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
    assert np.array_equal(view, data)  # dropped pages come back from the file, unchanged
    assert resource.getrusage(resource.RUSAGE_SELF).ru_majflt == faults  # from the page cache
    with bounded_mapping([tmp_path]):
        for start in range(0, len(view), 4 << 20):  # read in steps, as the runtime does
            assert np.array_equal(view[start : start + (4 << 20)], data[start : start + (4 << 20)])
    assert _resident_kb(path) < 1 << 10  # given back when the block ends


def test_vocoder_crosses_the_attention_window(engine, ov_fp32):
    """Chunks shorter and longer than a call (5 frames) over a stream more than twice the vocoder's
    72-frame attention window: still the torch decoder's audio. A call padded past its real frames
    (the `valid` input) gives the same audio and state too."""
    vocoder, frames = ov_fp32.vocoder, ov_fp32.vocoder.frames
    gen = torch.Generator().manual_seed(frames)
    codes = torch.randint(0, engine.checkpoint.codec.codebook_size, (170, 16), generator=gen)
    sizes = torch.randint(1, 2 * frames + 2, (170,), generator=gen).tolist()
    state, parts, pos = vocoder.start(), [], 0
    for size in sizes:
        if pos >= len(codes):
            break
        parts.append(vocoder.decode(codes[pos : pos + size], state))
        pos += size
    assert snr_db(engine.decode(codes), np.concatenate(parts)) > 90

    plain, padded = vocoder.start(), vocoder.start()
    head = vocoder.decode(codes[:frames], plain)  # both at the same point first
    vocoder.decode(codes[:frames], padded)
    real = max(1, frames - 2)
    expected = vocoder.decode(codes[frames : frames + real], plain)
    request = vocoder.model.create_infer_request()
    request.infer([codes[frames : 2 * frames].numpy(), np.array(padded.frames, np.int64), np.array(real, np.int64),
                   *padded.tensors])
    upsample = engine.checkpoint.codec.upsample
    assert request.get_output_tensor(0).data.shape[0] == frames * upsample and head.size == frames * upsample
    np.testing.assert_allclose(request.get_output_tensor(0).data[: real * upsample], expected, atol=1e-5)
    for i, tensor in enumerate(plain.tensors):
        np.testing.assert_allclose(request.get_output_tensor(i + 1).data, tensor, atol=1e-5)


def test_a_lone_frame_mid_stream_goes_in_a_padded_call(engine, ov_int8, monkeypatch):
    """A stream's first call may be one frame; a later lone frame is a 2-frame call with `valid` 1
    (a CPU's one-row kernels round otherwise: docs/determinism.md), its audio and state the frame's."""
    vocoder = ov_int8.vocoder
    calls: list[tuple[int, int, int]] = []
    infer = vocoder.infer

    def spy(codes, position, valid, tensors):
        calls.append((codes.shape[0], position, valid))
        return infer(codes, position, valid, tensors)

    gen = torch.Generator().manual_seed(8)
    codes = torch.randint(0, engine.checkpoint.codec.codebook_size, (9, 16), generator=gen).numpy()
    alone = vocoder.start()
    parts = [vocoder.decode(codes[a:b], alone) for a, b in ((0, 2), (2, 3), (3, 6), (6, 7), (7, 9))]
    monkeypatch.setattr(vocoder, "infer", spy)
    state = vocoder.start()
    got = [vocoder.decode(codes[a:b], state) for a, b in ((0, 1), (1, 2), (2, 3), (3, 6), (6, 7), (7, 9))]
    assert calls == [(1, 0, 1), (2, 1, 1), (2, 2, 1), (3, 3, 3), (2, 6, 1), (2, 7, 2)]
    assert state.frames == 9 and [g.size for g in got] == [1920, 1920, 1920, 5760, 1920, 3840]
    assert snr_db(np.concatenate(parts), np.concatenate(got)) > 25.0
    assert snr_db(engine.decode(codes), np.concatenate(got)) > 25.0


def test_first_chunk_defaults_to_one_frame_with_the_openvino_vocoder(engine, ov_int8):
    assert engine.default_first_chunk == 2 and ov_int8.default_first_chunk == 1
    with ov_int8.stream("First audio early.", "ryan", seed=4, max_new_tokens=12, budget=None) as stream:
        sizes = [c.frames for c in stream]
    assert sizes[0] == 1 and sum(sizes) >= 1


@pytest.mark.smoke
def test_default_engine_streams_what_the_reference_vocoder_hears(engine, ov_int8):
    """The OpenVINO smoke test `make test-fast` keeps: the default arrangement (int8 language model,
    bf16 vocoder) streams a sentence whose audio is its own codes decoded by the torch reference."""
    with ov_int8.stream("A short smoke test.", "ryan", seed=2, max_new_tokens=12, budget=None) as stream:
        chunks = list(stream)
    codes = np.concatenate([c.codes for c in chunks])
    audio = np.concatenate([c.samples for c in chunks])
    assert codes.shape[0] >= 1 and codes.shape[1] == 16
    assert len(audio) == codes.shape[0] * engine.checkpoint.codec.upsample
    assert snr_db(engine.decode(codes), audio) > 25.0


def test_long_steps_report_progress(caplog):
    import logging

    from hearth.backends.conversions import progress

    log = logging.getLogger("hearth.test-progress")
    with caplog.at_level(logging.INFO, logger=log.name), progress("converting something", log, every_s=0.05):
        time.sleep(0.3)
    beats = [r.message for r in caplog.records if r.message.startswith("converting something: ")]
    assert len(beats) >= 2 and beats[-1].endswith("s so far")


def _predictor_inputs(cfg, rows, seed):
    rng = np.random.default_rng(seed)
    h = cfg.stack.hidden_size
    return {"hidden": rng.standard_normal((rows, 1, h)).astype(np.float32),
            "first": rng.standard_normal((rows, 1, h)).astype(np.float32),
            "draws": rng.random((rows, cfg.num_code_groups - 1)).astype(np.float32),
            "temperature": np.full(rows, 0.9, np.float32), "top_k": np.int64(50),
            "top_p": np.full(rows, 0.95, np.float32)}


@pytest.mark.parametrize("weights", ["fp32", "int4"])
def test_predictor_loop_equals_the_unrolled_steps(tiny17_dir, weights):
    """int4's predictor is one OpenVINO Loop (each weight once in the graph); the other formats
    unroll the steps. On the same weights both forms must give the same codes and sums, sampled and
    teacher-forced (the 1.7B shape: the loop carries the projection into the predictor's width)."""
    import openvino as ov

    from hearth.backends.openvino import runtime_properties
    from hearth.checkpoint.loading import open_checkpoint
    from hearth.checkpoint.safetensors_mmap import SafetensorsFile
    from hearth.convert.ov_int4 import compress_int4, int4_candidates
    from hearth.convert.ov_predictor import build_predictor_loop

    ckpt = open_checkpoint(tiny17_dir)
    cfg = ckpt.config.talker
    f = SafetensorsFile(ckpt.path / "model.safetensors")

    def source(name):
        return f.get(name).to(torch.float32).numpy().copy()

    compressed = compress_int4(int4_candidates(cfg), source) if weights == "int4" else None
    core = ov.Core()
    props = runtime_properties("CPU", weights, None, precise=True)

    def compiled(loop, forced):
        model, _ = build_predictor_loop(cfg, source, weights, forced, compressed, loop=loop)
        assert any(op.get_type_name() == "Loop" for op in model.get_ops()) == loop
        return core.compile_model(model, "CPU", props).create_infer_request()

    looped, unrolled = compiled(True, False), compiled(False, False)
    for seed, rows in ((0, 1), (1, 3)):
        inputs = _predictor_inputs(cfg, rows, seed)
        looped.infer(inputs)
        unrolled.infer(inputs)
        np.testing.assert_array_equal(looped.get_tensor("codes").data, unrolled.get_tensor("codes").data)
        np.testing.assert_allclose(looped.get_tensor("summed").data, unrolled.get_tensor("summed").data,
                                   rtol=1e-5, atol=1e-5)
    looped, unrolled = compiled(True, True), compiled(False, True)
    inputs = _predictor_inputs(cfg, 2, 5)
    forced = {"hidden": inputs["hidden"], "first": inputs["first"],
              "forced": np.random.default_rng(6).integers(0, cfg.predictor.vocab_size, (2, cfg.num_code_groups - 1))}
    looped.infer(forced)
    unrolled.infer(forced)
    np.testing.assert_allclose(looped.get_tensor("logits").data, unrolled.get_tensor("logits").data,
                               rtol=1e-4, atol=1e-4)


def test_int4_engine_stores_each_weight_once_and_stays_near_fp32(tiny_dir, ov_fp32):
    """`weights="int4"`: NNCF's compression of every transformer layer, each weight stored once in
    the converted model and in the runtime's compiled one (the predictor's Loop), an engine that
    speaks, and teacher-forced logits that follow fp32 (loosely: 4 bits on random weights)."""
    engine = hearth.load(tiny_dir, backend="openvino", weights="int4")
    try:
        converted = engine.lm.converted
        assert converted.manifest["int4_layers"] > 0
        bins = sum((converted.directory / f"{n}.bin").stat().st_size for n in ("talker", "predictor"))
        stored = sum(part["stored_bytes"] for part in converted.manifest["parts"].values())
        assert bins <= 1.1 * stored  # every weight once in the IR
        blobs = sum(p.stat().st_size for p in (converted.directory / "compiled").glob("*.blob"))
        assert blobs <= 1.5 * bins  # and once in the compiled blobs (unrolled: x1.7 here, x6.7 at 0.6B)
        audio = engine.synthesize("Four bits.", "ryan", "english", seed=3, max_new_tokens=8)
        assert audio.codes.shape[0] > 0 and np.isfinite(audio.samples).all()
    finally:
        engine.close()
    codes = ov_fp32.generate_codes("Close enough is measured.", "ryan", "english", greedy=True,
                                   max_new_tokens=12, budget=None).codes
    prompt = ov_fp32.prompt("Close enough is measured.")
    with torch.inference_mode():
        embeds = embed_prompt(ov_fp32.lm, ov_fp32.config, prompt, "ryan", "english", "whole")
        ref = teacher_forced_logits(ov_fp32.checkpoint, "fp32", embeds, codes, ov_fp32.lm.embed_codec)
        got = teacher_forced_logits(ov_fp32.checkpoint, "int4", embeds, codes, ov_fp32.lm.embed_codec)
    t = ov_fp32.config.talker
    rows = compare_formats(ref, got, [t.stack.vocab_size] + [t.predictor.vocab_size] * (t.num_code_groups - 1))
    assert all(r.snr_db > 3 for r in rows), rows  # the same logits, coarser: not noise
    assert np.mean([r.top1 for r in rows]) > 0.3
