"""`hearth bench --listen` and `hearth accuracy --listen` on tiny checkpoints: the report's shape and
its arithmetic (speed itself is shown by the bench, never asserted here)."""

from __future__ import annotations

import importlib.util

import pytest

from hearth.tools.bench_listen import ListenBenchSettings, format_listen, run_listen, tokens_for

pytestmark = pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None, reason="no onnxruntime")


def test_the_token_counts_follow_the_pace_of_speech():
    assert tokens_for(5) == 23 and tokens_for(20) == 75


def test_the_listen_bench_reports_every_figure(own_asr_dir, own_aligner_dir):
    r = run_listen(ListenBenchSettings(asr=str(own_asr_dir), aligner=str(own_aligner_dir), backend="onnxruntime",
                                       runs=1))
    for key in ("5s", "20s"):
        f = r[key]
        assert f["tokens"] == tokens_for(float(key[:-1]))
        assert f["rtf"] == pytest.approx(f["wall_s"] / float(key[:-1]))
        assert f["wall_s"] * 1000 >= f["encoder_ms"] + f["prefill_ms"]
    assert r["aligner_ms_per_s"] > 0 and r["aligner_words"] == 50
    assert r["backend"] == {"backend": "onnxruntime", "weights": "int8", "kind": "Qwen3-ASR"}
    assert r["step_of_floor"] > 0 and r["bandwidth_gbs"] > 0
    assert r["peak_rss_mb"] >= r["listen_rss_mb"]
    text = format_listen(r)
    assert "5s of audio, 23 tokens" in text and "ms per second of speech" in text and "% of that speed" in text


@pytest.mark.slow  # (fed at real time: 5.4 s whatever the machine)
def test_a_live_session_is_fed_at_real_time_and_each_utterance_timed(own_asr_dir):
    """The live bench's arithmetic on a short session (two utterances, fed at real time: about 5 s)."""
    from hearth.listen import Listener
    from hearth.tools.bench_listen_live import format_live, run_live

    listener = Listener.load(own_asr_dir, backend="onnxruntime")
    r = run_live(listener, 3.0, tokens_for, silence_s=0.4, utterances=(1.0, 1.5))
    assert r["utterances"] == 2 and r["finals"] == 2
    assert r["audio_s"] == pytest.approx(0.5 + 1.0 + 1.2 + 1.5 + 1.2)
    for key in ("1s", "1.5s"):
        ready, given = r["by_length"][key]["ready_s"], r["by_length"][key]["given_s"]
        assert ready["n"] == given["n"] == 1
        # The final is given once silence_s of quiet has passed, after it was made.
        assert 0 < ready["p50"] <= given["p50"] and given["p50"] >= 0.4
    assert r["cpu_s_per_audio_s"] > 0 and r["memory_mb"]["samples"] >= 2
    assert "end of speech to the final ready" in format_live(r)


def test_the_drift_of_a_model_against_itself_is_none(own_asr_dir, own_aligner_dir):
    from hearth.listen import Aligner, Listener
    from hearth.tools.listen_drift import compare_models

    pair = (Listener.load(own_asr_dir, backend="onnxruntime", weights="fp32"),
            Aligner.load(own_aligner_dir, backend="onnxruntime", weights="fp32"))
    r = compare_models(pair, pair)
    assert set(r["recordings"]) == {"voice 5s", "noise 5s", "voice 20s", "noise 20s"}
    assert r["worst"] == {"top1_agreement": 1.0, "logit_max_abs_diff": 0.0, "free_running_equal": 1.0}
    assert r["median"]["aligner_equal_times"] == 1.0 and r["median"]["embedding_rel_error"] == 0.0
