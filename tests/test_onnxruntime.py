"""The language model on ONNX Runtime, its own matters: conversions cached and keyed, `--fast`, a
voice's prompt prefix kept. What both compiled backends do alike is in test_compiled_backends.py;
how the batch's slots follow each row's solo session, in test_batch.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import hearth
from hearth.streaming.sinks import snr_db
from hearth.text.prompt import embed_prompt


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


def test_small_is_fast_with_the_vocoders_products_in_8_bits(tiny_dir):
    """`small=True` / `--small` / `hearth export --preset small`: the fast language model and ONNX
    Runtime's vocoder with its products' weights in 8-bit blocks (`onnxruntime-int8`): every MatMul
    by a weight whose width has a block is a MatMulNBits of 8 bits; its own cache entry beside
    fp32's; the same codes as fast, audio within 8-bit rounding of the fp32 vocoder's."""
    import onnx

    from hearth.backends.settings import backend_options
    from hearth.convert.export_model import PRESETS

    fp32, small = hearth.load(tiny_dir, fast=True, vocoder="onnxruntime"), hearth.load(tiny_dir, small=True)
    assert (small.options.backend, small.options.weights, small.options.vocoder_precision) == \
        ("onnxruntime", "int4", "onnxruntime-int8")
    assert backend_options(**PRESETS["small"].load) == small.options
    assert not small.options.uses_openvino and small.options.loads_side_by_side
    graph = onnx.load(str(small.vocoder.converted.directory / "vocoder.onnx"), load_external_data=False).graph
    widths = {i.name: i.dims[0] for i in graph.initializer if len(i.dims) == 2}
    products = [n for n in graph.node if n.op_type in ("MatMul", "MatMulNBits")]
    quantized = [n for n in products if n.op_type == "MatMulNBits"]
    assert quantized and all(a.i == 8 for n in quantized for a in n.attribute if a.name == "bits")
    assert all(widths[n.input[1]] % 16 for n in products if n.op_type == "MatMul" and n.input[1] in widths)
    parts = small.backend.weights_mb()["vocoder"]
    assert parts["stored_mb"] < 0.9 * parts["fp32_mb"]
    names = (fp32.vocoder.converted.directory.name, small.vocoder.converted.directory.name)
    assert names[0].startswith("vocoder-fp32-") and names[1].startswith("vocoder-int8-")
    text = "A small board speaks for itself."
    a = fp32.synthesize(text, "ryan", "english", seed=4, max_new_tokens=24, budget=None)
    b = small.synthesize(text, "ryan", "english", seed=4, max_new_tokens=24, budget=None)
    assert np.array_equal(a.codes, b.codes) and a.samples.shape == b.samples.shape
    assert 15 < snr_db(a.samples, b.samples) < 80  # near, and not the fp32 graph again
    with pytest.raises(hearth.InputError, match="onnxruntime-int8 vocoder runs on the CPU"):
        hearth.load(tiny_dir, small=True, vocoder_device="GPU")


def test_the_vocoder_in_calls_of_one_frame(tiny_dir):
    """`vocoder_call_frames=1`: the compiled vocoder is given one frame per call (its buffers for
    one frame only); the same codes and audio the same to the vocoder's rounding."""
    fast, one = hearth.load(tiny_dir, fast=True), hearth.load(tiny_dir, fast=True, vocoder_call_frames=1)
    assert one.options.vocoder_call_frames == 1 and fast.options.vocoder_call_frames is None
    calls: dict[str, list[int]] = {"fast": [], "one": []}
    for name, engine in (("fast", fast), ("one", one)):
        infer = engine.vocoder.infer

        def counted(codes, *rest, _infer=infer, _calls=calls[name]):
            _calls.append(codes.shape[0])
            return _infer(codes, *rest)

        engine.vocoder.infer = counted
    text = "A small board speaks for itself."
    a = fast.synthesize(text, "ryan", "english", seed=4, max_new_tokens=24, budget=None)
    b = one.synthesize(text, "ryan", "english", seed=4, max_new_tokens=24, budget=None)
    assert max(calls["fast"]) == 5 and set(calls["one"]) == {1}
    assert np.array_equal(a.codes, b.codes) and a.samples.shape == b.samples.shape
    assert snr_db(a.samples, b.samples) > 30
    for bad in (0, 6, True, 2.0):
        with pytest.raises(hearth.InputError, match="vocoder_call_frames"):
            hearth.load(tiny_dir, fast=True, vocoder_call_frames=bad)
    with pytest.raises(hearth.InputError, match="vocoder_call_frames"):
        hearth.load(tiny_dir, backend="torch", vocoder_call_frames=1)


def test_a_runtimes_mapped_weights_are_given_back_once_it_holds_its_own(tmp_path):
    """`release_mapped_files`: a file's pages mapped read-only, or privately writable (as ONNX
    Runtime maps each initializer) but never written, leave the resident memory; a mapping with a
    written page keeps it (what was written is not the file's), as does a file not named."""
    import mmap

    from hearth.backends.conversions import release_mapped_files

    ours, other = tmp_path / "ours", tmp_path / "other"
    ours.mkdir(), other.mkdir()
    size = 64 * mmap.PAGESIZE
    maps = {}
    for name, folder, access in (("read", ours, mmap.ACCESS_READ), ("clean", ours, mmap.ACCESS_COPY),
                                 ("written", ours, mmap.ACCESS_COPY), ("elsewhere", other, mmap.ACCESS_READ)):
        path = folder / f"{name}.bin"
        with path.open("wb") as f:  # on disk: pages not yet written back count as dirty, and stay
            f.write(bytes(range(256)) * (size // 256))
            f.flush()
            os.fsync(f.fileno())
        with path.open("rb") as f:
            maps[name] = mmap.mmap(f.fileno(), size, access=access)
        assert sum(maps[name][i] for i in range(0, size, mmap.PAGESIZE)) >= 0  # every page read
    maps["written"][5] = 77

    def resident_kb(name: str) -> int:
        path, kb, current = str((ours if name != "elsewhere" else other).resolve() / f"{name}.bin"), 0, False
        for line in Path("/proc/self/smaps").read_text(encoding="utf-8").splitlines():
            fields = line.split()
            if "-" in fields[0] and not fields[0].endswith(":"):
                current = fields[-1] == path
            elif current and fields[0] == "Rss:":
                kb += int(fields[1])
        return kb

    assert all(resident_kb(n) >= size // 1024 for n in maps)
    assert release_mapped_files([ours]) == 2 * size
    assert resident_kb("read") == 0 and resident_kb("clean") == 0
    assert resident_kb("written") >= size // 1024 and resident_kb("elsewhere") >= size // 1024
    assert maps["written"][5] == 77 and maps["clean"][5] == 5 and maps["read"][300] == 300 % 256
    for m in maps.values():
        m.close()


def test_giving_pages_back_never_changes_memory_that_stopped_being_the_files(tmp_path):
    """The list of mapped ranges is a snapshot: a runtime unmaps its weights when it is done with
    them, and malloc may map fresh memory at the same addresses before the pages are given back.
    Whatever is there by then keeps its contents (MADV_DONTNEED on such memory zeroed it: a crash):
    a range no longer the file's is left alone."""
    import ctypes
    import mmap

    from hearth.backends.conversions import mapped_spans, release_spans

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = 256 * mmap.PAGESIZE
    path = tmp_path / "weights.bin"
    path.write_bytes(bytes(range(256)) * (size // 256))
    with path.open("rb") as f:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_PRIVATE, f.fileno(), 0)
    assert addr not in (None, ctypes.c_void_p(-1).value)
    assert sum(ctypes.string_at(addr + i, 1)[0] for i in range(0, size, mmap.PAGESIZE)) >= 0  # resident
    spans = mapped_spans([tmp_path])
    assert spans == [(addr, addr + size, str(path.resolve()))]
    assert libc.munmap(addr, size) == 0  # the runtime lets go of the file...
    fixed = 0x10  # MAP_FIXED: ...and the same addresses become someone's own memory at once
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | fixed
    again = libc.mmap(addr, size, mmap.PROT_READ | mmap.PROT_WRITE, flags, -1, 0)
    assert again == addr
    data = np.random.default_rng(size).integers(1, 255, size, dtype=np.uint8).tobytes()
    ctypes.memmove(addr, data, size)
    try:
        assert release_spans(spans) == 0
        assert ctypes.string_at(addr, size) == data
    finally:
        libc.munmap(addr, size)


def test_a_written_page_of_a_mapping_made_read_only_is_kept(tmp_path):
    """A runtime may convert weights in place in a private mapping and then make it read-only (as a
    loader relocates a library): those pages are the process's own copies, not the file's, so the
    mapping is left alone (dropping them put the file's bytes back under live data)."""
    import ctypes
    import mmap

    from hearth.backends.conversions import mapped_spans, release_mapped_files

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    size = 64 * mmap.PAGESIZE
    path = tmp_path / "weights.bin"
    path.write_bytes(bytes(size))
    with path.open("rb") as f:
        addr = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE, f.fileno(), 0)
    try:
        ctypes.memmove(addr + 3 * mmap.PAGESIZE, b"converted", 9)  # one page becomes the process's own
        assert libc.mprotect(addr, size, mmap.PROT_READ) == 0
        assert mapped_spans([tmp_path]) == []
        assert release_mapped_files([tmp_path]) == 0
        assert ctypes.string_at(addr + 3 * mmap.PAGESIZE, 9) == b"converted"
    finally:
        libc.munmap(addr, size)


def test_a_release_waits_for_the_loads_under_way(tmp_path):
    """A release of files a `bounded_mapping` load on another thread also reads waits for it (nothing
    may map or unmap them between the release's snapshot and its madvise) and happens when that load
    ends; files no load touches are released at once."""
    import mmap
    import threading

    from hearth.backends.conversions import bounded_mapping, release_mapped_files

    (tmp_path / "loading").mkdir()
    (tmp_path / "other").mkdir()
    path, other = tmp_path / "loading" / "weights.bin", tmp_path / "other" / "weights.bin"
    for file in (path, other):
        file.write_bytes(bytes(range(256)) * (64 * mmap.PAGESIZE // 256))
    loading, done = threading.Event(), threading.Event()

    def load() -> None:
        with bounded_mapping([tmp_path / "loading"]):
            loading.set()
            done.wait(30)

    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m, \
            other.open("rb") as g, mmap.mmap(g.fileno(), 0, access=mmap.ACCESS_READ) as n:
        assert sum(m[i] + n[i] for i in range(0, len(m), mmap.PAGESIZE)) >= 0
        loader = threading.Thread(target=load)
        loader.start()
        assert loading.wait(30)
        assert release_mapped_files([tmp_path / "loading", tmp_path / "other"]) == len(n)  # the loading one: later
        assert _resident_kb(path) > 0 and _resident_kb(other) == 0
        done.set()
        loader.join(30)
        assert _resident_kb(path) == 0  # released when the load ended
        assert m[300] == 300 % 256


def _resident_kb(path) -> int:
    kb, current = 0, False
    for line in Path("/proc/self/smaps").read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            current = fields[-1] == str(path.resolve())
        elif current and fields[0] == "Rss:":
            kb += int(fields[1])
    return kb


def test_mix_is_the_int8_talker_beside_the_four_bit_predictor(tiny_dir, ort_int8):
    """weights "mix": the talker (and the first codebook) as int8 converts it, the predictor (the
    other 15 codebooks) as int4 does, byte for byte; it speaks, and OpenVINO refuses it by name."""
    from hearth.backends.ort import convert_language_model
    from hearth.convert import CONVERT_ON_FIRST_USE

    ckpt = hearth.checkpoint.loading.open_checkpoint(tiny_dir)
    int4 = convert_language_model(ckpt, "int4", converter=CONVERT_ON_FIRST_USE).directory
    mix = hearth.load(tiny_dir, backend="onnxruntime", weights="mix", threads=2)
    here = mix.lm.converted.directory
    assert here not in (int4, ort_int8.lm.converted.directory)
    for network, twin in (("talker", ort_int8.lm.converted.directory), ("predictor", int4)):
        for suffix in (".onnx", ".onnx.data"):
            assert (here / f"{network}{suffix}").read_bytes() == (twin / f"{network}{suffix}").read_bytes(), network
    assert mix.synthesize("Mixed.", "ryan", "english", seed=1, max_new_tokens=6).samples.size > 0
    with pytest.raises(hearth.InputError, match="onnxruntime"):
        hearth.load(tiny_dir, backend="openvino", weights="mix")


def test_a_voices_prompt_prefix_is_computed_once(ort_int8):
    """The prompt's voice-and-language prefix is computed once and kept: the next sentence in that
    voice starts from the kept keys and values, and gives exactly the codes it gives when the prefix
    was computed for it (a prompt is always computed in those two parts), while another voice gets
    a prefix of its own."""
    engine = ort_int8
    engine.lm.prefixes.clear()
    first = engine.generate_codes("A first sentence.", "ryan", "english", seed=5, max_new_tokens=12).codes
    assert len(engine.lm.prefixes) == 1
    other_text = engine.generate_codes("Another one, longer than the first.", "ryan", "english", seed=5,
                                       max_new_tokens=12).codes
    assert len(engine.lm.prefixes) == 1 and other_text.shape[0] > 0  # the same voice: reused
    again = engine.generate_codes("A first sentence.", "ryan", "english", seed=5, max_new_tokens=12).codes
    assert np.array_equal(first, again)
    engine.generate_codes("A first sentence.", "aiden", "english", seed=5, max_new_tokens=12)
    assert len(engine.lm.prefixes) == 2


def test_a_kept_prefix_changes_the_prompt_only_by_rounding(tiny_dir, ort_int8):
    """Prefill logits with the prefix computed apart equal one-piece prefill's up to rounding (a
    wrong position or slot would change them completely)."""
    from hearth.backends.ort import SlotBatch
    from hearth.checkpoint.sampling import SamplingOptions

    lm = ort_int8.lm
    embeds = embed_prompt(lm, ort_int8.config, ort_int8.prompt("Split or whole, the same sentence."), "serena",
                          "english", "whole")
    whole = SlotBatch(lm, 1).open(SamplingOptions().greedy(), None, embeds.prefill.shape[1]).prefill(
        embeds.prefill)
    split_row = SlotBatch(lm, 1).open(SamplingOptions().greedy(), None, embeds.prefill.shape[1], embeds.prefix)
    split = split_row.prefill(embeds.prefill)
    assert 0 < embeds.prefix < embeds.prefill.shape[1] and split_row.position == embeds.prefill.shape[1]
    np.testing.assert_allclose(split, whole, rtol=0.05, atol=0.05 * float(np.abs(whole).max()))


@pytest.fixture(scope="module")
def ort_vocoder(tiny_dir):
    """The vocoder on ONNX Runtime (the default with the ONNX Runtime language model where the CPU
    has no bf16 arithmetic)."""
    from hearth.backends.ort_vocoder import ORTVocoder
    from hearth.convert import CONVERT_ON_FIRST_USE

    return ORTVocoder(hearth.checkpoint.loading.open_checkpoint(tiny_dir), threads=2, converter=CONVERT_ON_FIRST_USE)


def test_the_onnxruntime_vocoder_is_the_torch_decoder_in_any_chunking(engine, ort_vocoder):
    """Chunks shorter and longer than a call (5 frames) over a stream more than twice the decoder's
    attention window: the torch decoder's audio to fp32 rounding. A call padded past its real frames
    (the `valid` input) gives the same audio and state as the unpadded one."""
    from hearth.tools.accuracy import snr_db

    vocoder, frames = ort_vocoder, ort_vocoder.frames
    gen = torch.Generator().manual_seed(11)
    n = 2 * engine.checkpoint.codec.sliding_window + 31
    codes = torch.randint(0, engine.checkpoint.codec.codebook_size, (n, 16), generator=gen)
    sizes = torch.randint(1, 2 * frames + 2, (n,), generator=gen).tolist()
    state, parts, pos = vocoder.start(), [], 0
    for size in sizes:
        if pos >= n:
            break
        parts.append(vocoder.decode(codes[pos : pos + size], state))
        pos += size
    expected = engine.decode(codes)
    assert snr_db(expected, np.concatenate(parts)) > 90
    assert snr_db(expected, vocoder(codes)) > 90

    plain, padded = vocoder.start(), vocoder.start()
    vocoder.decode(codes[:frames], plain)
    vocoder.decode(codes[:frames], padded)
    real = frames - 2
    expected_audio = vocoder.decode(codes[frames : frames + real], plain)
    audio, state_out = vocoder.infer(codes[frames : 2 * frames].numpy(), padded.frames, real, padded.tensors)
    upsample = engine.checkpoint.codec.upsample
    assert audio.shape[0] == frames * upsample
    np.testing.assert_allclose(audio[: real * upsample], expected_audio, atol=1e-5)
    for got, want in zip(state_out, plain.tensors, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_a_primed_state_kept_on_disk_reads_back_whole(ort_vocoder):
    """A cloned voice's primed vocoder state (kept on disk for later processes) reads back equal,
    and goes on to decode as the state it was saved from."""
    state = ort_vocoder.start()
    codes = torch.randint(0, 64, (7, 16), generator=torch.Generator().manual_seed(5))
    ort_vocoder.decode(codes, state)
    ort_vocoder.save_state(state, "test-primed")
    try:
        back = ort_vocoder.load_state("test-primed")
        assert back is not None and back.frames == state.frames == 7
        more = codes[:3]
        assert np.array_equal(ort_vocoder.decode(more, back), ort_vocoder.decode(more, state))
    finally:
        ort_vocoder.drop_state("test-primed")
    assert ort_vocoder.load_state("test-primed") is None


def test_one_runtime_engine_speaks_without_loading_openvino(tiny_dir):
    """With the vocoder on ONNX Runtime too, the engine runs on one runtime: OpenVINO is never
    imported, and the stream's first chunk is one frame (the earliest audio)."""
    script = (
        "import sys, hearth\n"
        f"e = hearth.load({str(tiny_dir)!r}, backend='onnxruntime', vocoder='onnxruntime', threads=2)\n"
        "with e.stream('One runtime.', 'ryan', seed=3, max_new_tokens=8, budget=None) as s:\n"
        "    chunks = list(s)\n"
        "print(chunks[0].frames, sum(c.samples.size for c in chunks), 'openvino' in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    first, samples, openvino = r.stdout.split()
    assert first == "1" and int(samples) > 0 and openvino == "False"


def test_an_export_copied_to_another_machine_loads_with_no_conversion(tiny_dir, ort_int8, ort_vocoder, tmp_path):
    """`hearth export --runtimes onnxruntime` (what an ARM board runs), copied with new file times
    and loaded where the cache is empty: nothing converts, the export's own options apply (ONNX
    Runtime for both networks), and the speech is the same, code for code and sample for sample,
    as the original checkpoint's with those options."""
    import shutil

    from hearth.cli import main
    from hearth.convert.export_model import export_model

    manifest = export_model(str(tiny_dir), tmp_path / "export", "default", ["onnxruntime"])
    assert [p["what"] for p in manifest["converted"]] == ["onnxruntime language model (int8)", "onnxruntime vocoder"]
    assert manifest["load_options"] == {"backend": "onnxruntime", "vocoder": "onnxruntime"}
    assert manifest["source"]["identity"] and manifest["versions"]["onnxruntime"]
    assert main(["export", str(tiny_dir), str(tmp_path / "export")]) == 2  # exists: refused
    board = tmp_path / "board"
    shutil.copytree(tmp_path / "export", board, copy_function=shutil.copy)  # new modification times
    empty = tmp_path / "empty-cache"
    script = (
        "import sys, hearth, numpy as np\n"
        f"e = hearth.load({str(board)!r}, threads=2)\n"
        "with e.stream('Copied to a board.', 'ryan', seed=3, max_new_tokens=8, budget=None) as s:\n"
        "    chunks = list(s)\n"
        "sys.stdout.buffer.write(np.concatenate([c.samples for c in chunks]).astype(np.float32).tobytes())\n"
        "print(e.options.backend, e.options.vocoder_precision, file=sys.stderr)\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=300, check=False,
                       env={**os.environ, "HEARTH_CACHE": str(empty)})
    assert r.returncode == 0, r.stderr.decode()
    assert "onnxruntime onnxruntime" in r.stderr.decode() and "converting" not in r.stderr.decode()
    assert not (empty / "onnxruntime").exists() and not (empty / "openvino").exists()
    copied = np.frombuffer(r.stdout, np.float32)
    original = hearth.load(tiny_dir, backend="onnxruntime", vocoder="onnxruntime", threads=2)
    with original.stream("Copied to a board.", "ryan", seed=3, max_new_tokens=8, budget=None) as s:
        expected = np.concatenate([c.samples for c in s])
    assert copied.size > 0 and np.array_equal(copied, expected)


def test_accuracy_reports_the_onnxruntime_vocoder(tiny_dir):
    """`hearth accuracy --vocoder onnxruntime`: the vocoder's SNR against the torch fp32 decoder
    (streamed in 5-frame chunks), which fp32 on ONNX Runtime keeps to rounding."""
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "accuracy", "--model", str(tiny_dir), "--frames", "6",
                        "--backend", "onnxruntime", "--vocoder", "onnxruntime", "--json"],
                       capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    vocoder = json.loads(r.stdout)["vocoder"]
    assert vocoder["precision"] == "onnxruntime" and vocoder["snr_db"] > 90


def test_tune_tries_the_onnxruntime_vocoder(tiny_dir, fast_engine, ort_int8, ort_vocoder, tmp_path):
    """With ONNX Runtime's language model `hearth tune` measures both vocoders (which is faster
    differs from machine to machine) and saves the faster one, which the next load then uses. Its
    cache is private (tuned.json is written there) but reads the session's conversions."""
    cache = tmp_path / "cache"
    cache.mkdir()
    session_cache = Path(os.environ["HEARTH_CACHE"])
    for runtime in ("onnxruntime", "openvino"):
        (session_cache / runtime).mkdir(exist_ok=True)
        (cache / runtime).symlink_to(session_cache / runtime)
    env = {**os.environ, "HEARTH_CACHE": str(cache)}
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "tune", "--model", str(tiny_dir), "--backend",
                        "onnxruntime", "--only", "vocoder", "--frames", "4", "--runs", "1", "--json"],
                       capture_output=True, text=True, timeout=300, check=False, env=env)
    assert r.returncode == 0, r.stderr
    tuned = json.loads(r.stdout)
    runs = {e["variable"]: e for e in tuned["experiments"]}
    assert set(runs) == {"plan", "vocoder"} and runs["vocoder"]["options"]["vocoder"] == "onnxruntime"
    faster = min(runs.values(), key=lambda e: (round(e["rtf"], 2), e["ttfa_s"]))
    assert tuned["best"].get("vocoder") == faster["options"].get("vocoder")
    saved = json.loads((cache / "tuned.json").read_text(encoding="utf-8"))["options"]
    assert saved == tuned["best"]
    # what a load then takes from it (the options only: nothing is loaded)
    script = ("from hearth.backends.settings import backend_options\n"
              "print(backend_options().vocoder_precision)\n")
    env.pop("HEARTH_IGNORE_TUNED")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == (tuned["best"].get("vocoder") or "bf16")
