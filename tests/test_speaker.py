"""The speaker sink through PortAudio, on ALSA's null device (no sound card on CI machines).

The null device consumes audio instantly, so this shows the real playback path runs end to end
(device found, stream opened, every chunk written, drained and closed), not real-time pacing.
Without the PortAudio library these tests skip, except under CI (`CI=true`, set by `.ci/run`), where
the library is part of the set-up and its absence is a failure.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from needs import need

ASOUNDRC = "pcm.!default {\n    type null\n}\n"


@pytest.fixture()
def null_device_home(tmp_path):
    (tmp_path / ".asoundrc").write_text(ASOUNDRC, encoding="utf-8")
    env = dict(os.environ, HOME=str(tmp_path))
    probe = subprocess.run([sys.executable, "-c", "from hearth.streaming.sinks import default_output_available as f; "
                            "print(f())"], env=env, capture_output=True, text=True, check=False)
    need(probe.stdout.strip() == "True",
         "no PortAudio output device: install the library (apt-get install libportaudio2)")
    return env


def test_say_plays_on_the_default_device(tiny_dir, tmp_path, null_device_home):
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "say", "Out loud.", "--model", str(tiny_dir), "--seed",
                        "1", "--max-new-tokens", "9"], env=null_device_home, cwd=tmp_path, capture_output=True,
                       text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    assert "0.64 s of audio to the default output device" in r.stderr
    assert not (tmp_path / "hearth.wav").exists()


def test_speak_on_the_default_device(tiny_dir, tmp_path, null_device_home):
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "speak", "--model", str(tiny_dir), "--max-new-tokens",
                        "6"], input="One. Two.\nThree.\n", env=null_device_home, cwd=tmp_path, capture_output=True,
                       text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    assert "[1] done: 2 sentence(s)" in r.stderr and "[2] done: 1 sentence(s)" in r.stderr
