"""The decoding loop over a backend's session: a token budget's output is a prefix of a larger
budget's, tokens come one by one and a caller may stop early (the session is closed), and the loop
drives any implementation of the interfaces (here a scripted one)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sounds import bursts, noise

from hearth.listen import Listener, ListenOptions, prepare_audio
from hearth.listen.decoding import greedy_tokens
from hearth.listen.prompt import Prompt


class Scripted:
    """An AsrModel whose logits spell out `script`, one token per call; counts its open sessions."""

    def __init__(self, script: list[int], vocab: int = 50):
        self.script, self.vocab, self.open = script, vocab, 0

    def _logits(self, i: int) -> np.ndarray:
        out = np.zeros(self.vocab, np.float32)
        out[self.script[i]] = 1.0
        out[self.script[i] + 1 :] = 1.0  # ties after the winner: the first of equals wins
        return out

    def session(self, capacity: int):
        model = self
        model.open += 1

        class Session:
            steps = 0

            def prefill(self, ids, audio, audio_at):
                assert len(ids) + 0 <= capacity
                return model._logits(0)

            def step(self, token):
                self.steps += 1
                return model._logits(self.steps)

            def close(self):
                model.open -= 1

        return Session()


PROMPT = Prompt(np.arange(5, dtype=np.int64), 1, 2)


def test_the_loop_stops_after_a_stop_token_and_keeps_it():
    model = Scripted([3, 4, 9, 5, 6])
    assert list(greedy_tokens(model, PROMPT, np.zeros((2, 4), np.float32), frozenset({9}), 10)) == [3, 4, 9]
    assert list(greedy_tokens(model, PROMPT, np.zeros((2, 4), np.float32), frozenset({9}), 2)) == [3, 4]
    assert model.open == 0


def test_stopping_early_closes_the_session():
    model = Scripted(list(range(10, 30)))
    tokens = greedy_tokens(model, PROMPT, np.zeros((2, 4), np.float32), frozenset(), 20)
    assert [next(tokens), next(tokens)] == [10, 11] and model.open == 1
    tokens.close()
    assert model.open == 0


@pytest.fixture(scope="module")
def full_run(listener):
    samples = prepare_audio(bursts(3.3, 7), 16000)
    options = listener.check_options(ListenOptions(max_new_tokens=30))
    return samples, list(listener.tokens(samples, options))


@settings(max_examples=8, deadline=None)
@given(budget=st.integers(1, 30))
def test_a_smaller_budget_gives_a_prefix(listener, full_run, budget):
    samples, full = full_run
    options = listener.check_options(ListenOptions(max_new_tokens=budget))
    assert list(listener.tokens(samples, options)) == full[:budget]


def test_pieces_arrive_one_by_one(listener, monkeypatch):
    from hearth.listen import listener as listener_module

    monkeypatch.setattr(listener_module, "MAX_PIECE_SECONDS", 6.0)
    pieces = listener.pieces(np.concatenate([noise(5.0, 1), noise(5.0, 2)]), ListenOptions(max_new_tokens=4))
    first = next(pieces)
    assert first.offset == 0.0 and 1.0 <= first.duration <= 6.0 + 5.0  # cut within 5 s of the limit
    rest = list(pieces)
    assert len(rest) == 1 and rest[0].offset == pytest.approx(first.duration)


def test_bfloat16_runs(asr_dir):
    """Half the memory; not equal to the fp32 official (bf16 rounds every layer), but it transcribes."""
    listener = Listener.load(asr_dir, backend="torch", dtype="bfloat16")
    piece = listener.transcribe(noise(1.5, 3), ListenOptions(max_new_tokens=6))
    assert 1 <= len(piece.pieces[0].token_ids) <= 6


@pytest.mark.slow
def test_the_run_time_side_needs_no_torch(own_asr_dir, tmp_path):
    """Everything but the networks runs where torch is not installed (as `pip install hearth-tts`
    leaves a machine): the checkpoint, the features, the prompt, the units, the parsing; asking for
    the torch backend there says what to install."""
    import os
    import subprocess
    import sys

    script = (
        "import sys, numpy as np\n"
        "from hearth.checkpoint.asr_loading import open_asr_checkpoint\n"
        "from hearth.listen import LogMel, Listener\n"
        "from hearth.listen.prompt import asr_prompt\n"
        "from hearth.listen.units import split_units\n"
        "from hearth.listen.transcript import parse_transcript\n"
        "from hearth.errors import InputError\n"
        f"c = open_asr_checkpoint({str(own_asr_dir)!r})\n"
        "tok, special = c.tokenizer()\n"
        "f = LogMel(c.features)(np.zeros(16000, np.float32))\n"
        "p = asr_prompt(tok, special, c.config.encoder.tokens_for(f.shape[1]), 'ctx', 'English')\n"
        "assert split_units('你好 world', None) == ['你', '好', 'world']\n"
        "assert parse_transcript('language English<asr_text>hi') == ('English', 'hi')\n"
        "try:\n    Listener.load(c.path, backend='torch')\nexcept InputError as e:\n    print('refused:', e)\n"
        "print(len(p.ids), sorted(m for m in sys.modules if m.split('.')[0] == 'torch'))\n"
    )
    env = {**os.environ, "HEARTH_TEST_WITHOUT": "torch,onnx,onnxscript,nncf", "HEARTH_CACHE": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120, check=False, env=env)
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr.decode()
    assert "refused: the torch backend needs torch: pip install 'hearth-tts[convert]'" in out
    assert out.strip().endswith("[]")
