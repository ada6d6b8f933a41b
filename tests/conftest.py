"""Shared fixtures: tiny random checkpoints in the official layout, Hearth engines and official models."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

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
def engine(tiny_dir):
    import hearth

    return hearth.load(tiny_dir)


@pytest.fixture(scope="session")
def engine17(tiny17_dir):
    import hearth

    return hearth.load(tiny17_dir)


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
