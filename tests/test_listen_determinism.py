"""Listening gives the same result however and wherever it runs.

- The features are the same bits at every x86 level the CPU can show (`fixed_math`: no kernel
  chosen by the CPU's SIMD level computes them): checked here through the CPUID mask, in a process
  per level.
- Each runtime's transcript (token ids, text, word times) is the same when the recording is heard
  alone or while another is heard on another thread, and heard again.
- `make test-cpus` runs this module at every level with HEARTH_CPU_RECORD set: each level's
  results (features, and per runtime the token ids, transcripts and word times) are written
  there, and scripts/listen_levels.py compares the levels, naming what differs and by how much.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from sounds import SIGNALS

from hearth.listen import Aligner, Listener, ListenOptions
from hearth.platform.topology import CPU_LEVELS, simd

RUNTIMES = [pytest.param(r, id="-".join(filter(None, r)), marks=[pytest.mark.slow] if r[0] != "torch" else [])
            for r in [("torch", None), ("onnxruntime", "fp32"), ("onnxruntime", "int8"), ("openvino", "fp32"),
                      ("openvino", "int8")]]


def recordings() -> dict[str, tuple[np.ndarray, int]]:
    """The recordings heard: 16 kHz mono, and 44.1 kHz stereo (resampled and mixed down first)."""
    stereo = np.stack([SIGNALS["bursts"](2.3 * 44100 / 16000), SIGNALS["sweep"](2.3 * 44100 / 16000)], axis=1)
    return {"bursts-16k": (SIGNALS["bursts"](4.5), 16000), "noise-16k": (SIGNALS["noise"](1.7), 16000),
            "stereo-44k": (stereo.astype(np.float32), 44100)}


FEATURES_SCRIPT = """
import hashlib, json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from test_listen_determinism import features_digests
from hearth.platform.topology import simd
print(json.dumps({"simd": simd(), "features": features_digests()}))
"""


def features_digests() -> dict[str, str]:
    """sha256 of each recording's log-mel features (and of the 16 kHz samples they are made from)."""
    from hearth.checkpoint.asr_config import FeatureConfig
    from hearth.listen.audio import prepare_audio
    from hearth.listen.audio_in import listening_audio
    from hearth.listen.features import LogMel

    logmel = LogMel(FeatureConfig(feature_size=128, sampling_rate=16000, hop_length=160, n_fft=400))
    out = {}
    for name, (audio, rate) in recordings().items():
        samples = prepare_audio(listening_audio(audio, rate), 16000, logmel.min_samples)
        out[name] = hashlib.sha256(samples.tobytes() + logmel(samples).tobytes()).hexdigest()
    return out


def _levels_here() -> list[str]:
    if os.environ.get("HEARTH_CPU_MASK"):
        pytest.skip("this process shows one level already (make test-cpus compares the levels' records)")
    try:
        from hearth.tools.bench import cpu_mask_library

        cpu_mask_library()
    except ValueError as e:
        pytest.skip(f"the CPU's features cannot be hidden here: {e}")
    return list(CPU_LEVELS)


@pytest.mark.slow
def test_the_features_are_the_same_bits_at_every_level():
    from hearth.tools.bench import masked_env

    levels = _levels_here()
    native = features_digests()
    seen = {}
    for level in levels:
        r = subprocess.run([sys.executable, "-c", FEATURES_SCRIPT, str(Path(__file__).parent)], env=masked_env(level),
                           capture_output=True, text=True, timeout=120, check=False)
        assert r.returncode == 0, r.stderr[-2000:]
        shown = json.loads(r.stdout)
        seen[level] = shown["simd"]
        assert shown["features"] == native, (level, shown["simd"])
    assert len(set(seen.values())) >= 2, f"only one level could be shown here: {seen}"  # the mask took effect


@pytest.fixture(scope="module", params=RUNTIMES)
def heard(request, asr_dir, aligner_dir):
    backend, weights = request.param
    aligner = Aligner.load(aligner_dir, backend=backend, weights=weights)
    return request.param, Listener.load(asr_dir, backend=backend, weights=weights, aligner=aligner)


def _result(listener: Listener, audio: np.ndarray, rate: int) -> list[dict[str, object]]:
    options = ListenOptions(language="English", timestamps=True, max_new_tokens=24)
    return [{"ids": list(p.token_ids), "text": p.text, "words": [[u.text, u.start, u.end] for u in p.units or ()]}
            for p in listener.pieces(audio, options, rate)]


def test_a_recording_is_heard_the_same_alone_beside_another_and_again(heard):
    runtime, listener = heard
    cases = recordings()
    alone = {name: _result(listener, audio, rate) for name, (audio, rate) in cases.items()}
    assert any(piece["ids"] for result in alone.values() for piece in result)
    beside: dict[str, list[dict[str, object]]] = {}
    other = threading.Thread(target=lambda: [_result(listener, a, r) for a, r in reversed(list(cases.values()))])
    other.start()
    try:
        for name, (audio, rate) in cases.items():
            beside[name] = _result(listener, audio, rate)
    finally:
        other.join(120)
    assert beside == alone
    assert {name: _result(listener, audio, rate) for name, (audio, rate) in cases.items()} == alone
    record = os.environ.get("HEARTH_CPU_RECORD")
    if record:  # (make test-cpus: one file per level and runtime, compared by scripts/listen_levels.py)
        level = os.environ.get("HEARTH_CPU_MASK") or "native"
        path = Path(record) / f"{level}--{'-'.join(filter(None, runtime))}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"level": level, "simd": simd(), "runtime": "-".join(filter(None, runtime)),
                                    "features": features_digests(), "heard": alone}), encoding="utf-8")
