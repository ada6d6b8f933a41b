"""Shared fixtures: tiny random checkpoints in the official layout, Hearth engines and official models."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# Tests see neither a developer's `hearth tune` settings nor their model cache: converted models go
# to a private cache for this run (subprocesses inherit both).
os.environ["HEARTH_IGNORE_TUNED"] = "1"
os.environ["HEARTH_CACHE"] = tempfile.mkdtemp(prefix="hearth-test-cache-")

from hearth.random_checkpoint import tiny_configs, write_checkpoint


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> Path:
    """0.6B-style: talker and predictor of the same width, instruct ignored."""
    config, codec = tiny_configs("0b6", hidden=64, layers=2)
    return write_checkpoint(tmp_path_factory.mktemp("tiny06"), config, codec, seed=11)


@pytest.fixture(scope="session")
def tiny17_dir(tmp_path_factory) -> Path:
    """1.7B-style: a talker wider than its predictor (small_to_mtp_projection), instruct honoured."""
    config, codec = tiny_configs("1b7", hidden=96, layers=2, predictor_hidden=48)
    return write_checkpoint(tmp_path_factory.mktemp("tiny17"), config, codec, seed=23)


@pytest.fixture(scope="session")
def base_dir(tmp_path_factory) -> Path:
    """A tiny Base checkpoint (voice cloning: speaker encoder and speech-tokenizer encoder included)."""
    from hearth.random_checkpoint import as_model_type

    config, codec = tiny_configs("0b6", hidden=64, layers=2)
    return write_checkpoint(tmp_path_factory.mktemp("base06"), as_model_type(config, "base", speaker_channels=32),
                            codec, seed=31)


@pytest.fixture(scope="session")
def engine(tiny_dir):
    """The torch reference: what the parity tests compare with the official package."""
    import hearth

    return hearth.load(tiny_dir, backend="torch")


@pytest.fixture(scope="session")
def fast_engine(tiny_dir):
    """What `hearth.load` gives by default: OpenVINO, int8 weights, bf16 vocoder."""
    import hearth

    engine = hearth.load(tiny_dir)
    assert engine.options.backend == "openvino" and engine.options.weights == "int8"
    return engine


@pytest.fixture(scope="session", params=["torch", "openvino"])
def any_engine(request, engine, fast_engine):
    """Each backend in turn, for tests of behaviour every backend must share."""
    return engine if request.param == "torch" else fast_engine


@pytest.fixture(scope="session")
def engine17(tiny17_dir):
    import hearth

    return hearth.load(tiny17_dir, backend="torch")


@pytest.fixture(scope="session")
def official(tiny_dir):
    from official import load_official

    return load_official(tiny_dir)


@pytest.fixture(scope="session")
def official17(tiny17_dir):
    from official import load_official

    return load_official(tiny17_dir)


@pytest.fixture(scope="session")
def reference_tokenizer(tiny_dir):
    from official import reference_tokenizer

    return reference_tokenizer(tiny_dir)


@pytest.fixture(scope="module")
def server(tiny_dir):
    """A `hearth serve` process on the tiny checkpoint (one per test module), stopped cleanly."""
    from servers import Server

    s = Server(tiny_dir)
    yield s
    code, err = s.stop()
    assert code == 0, err
