"""`hearth speak` and `hearth soak` as a user runs them."""

from __future__ import annotations

import json

from cli import hearth


def test_speak_lines_from_a_pipe(tiny_dir, engine):
    lines = b"Hello there. How are you?\n/voice ryan\n/voice bob\nSecond line.\n"
    lines += b"\xff\xfe broken utf-8\n" + "😀😀\n/language klingon\n/frobnicate\n".encode()
    r = hearth("speak", "--model", str(tiny_dir), "--sink", "raw", "--max-new-tokens", "8", "--seed", "5", "--backend",
               "torch", stdin=lines, timeout=600)
    err = r.stderr.decode()
    assert r.returncode == 0, err
    assert "Traceback" not in err
    for fragment in ("voice ryan", "unknown voice 'bob'", "not valid UTF-8", "nothing to speak",
                     "unknown language 'klingon'", "unknown command /frobnicate", "[1] done", "[2] done"):
        assert fragment in err, fragment
    # Three sentences of 7 frames each, 16-bit: stdout is nothing but the audio.
    assert len(r.stdout) == 3 * 7 * 1920 * 2
    expected = engine.synthesize("Second line.", "ryan", seed=5, max_new_tokens=8).samples
    import numpy as np

    got = np.frombuffer(r.stdout[-7 * 1920 * 2 :], dtype="<i2").astype(np.float32) / 32767
    assert np.abs(got - expected).max() <= 1.0 / 32767 + 1e-6


def test_soak_small(tiny_dir):
    r = hearth("soak", "--model", str(tiny_dir), "--sentences", "12", "--max-new-tokens", "6", "--json", timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    data = json.loads(r.stdout)
    for key in ("sentences", "errors", "underruns", "ttfa_p50_s", "ttfa_p95_s", "rss_start_mb", "rss_end_mb",
                "rss_growth_kb", "codes_match_baseline"):
        assert key in data, key
    assert data["sentences"] == 12 and data["errors"] == 0
    assert data["cancelled"] == 1 and data["faults_injected"] == 1
    assert data["codes_match_baseline"] is True and data["completed"] == 10
