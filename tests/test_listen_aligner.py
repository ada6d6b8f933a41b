"""Hearth's Qwen3-ForcedAligner equals qwen-asr 0.0.6's: the units a text is cut into (English,
German, French, Chinese, Japanese, Korean, mixed), the repair of times that go back, and the
timestamps themselves, alone and inside a transcription."""

from __future__ import annotations

import subprocess
import sys
from importlib.resources import files

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from official_asr import load_official_asr
from sounds import SIGNALS, noise

from hearth.errors import InputError
from hearth.listen import Listener, ListenOptions
from hearth.listen.timestamps import repair_monotonic
from hearth.listen.units import korean_words, split_units

TEXTS = {
    "English": "Hello, world! It's a test: don't stop -- 3.14 and co-operate.",
    "German": "Grüß Gott, schöne Straße! Das Mädchen heißt „Jürgen“ – 42 Äpfel.",
    "French": "L'été dernier, j'ai vu « Notre-Dame » : c'était magnifique !",
    "Chinese": "今天天气很好，我们去公园散步吧。OpenAI和Qwen3模型！",
    "Japanese": "東京は晴れです。カタカナとひらがな、漢字を使います。",
    "Korean": "안녕하세요! 오늘 날씨가 정말 좋네요. 학교에 갑니다.",
    "Spanish": "¿Dónde está la biblioteca? ¡Aquí!",
}


@pytest.fixture(scope="module")
def official_units():
    from qwen_asr.inference.qwen3_forced_aligner import Qwen3ForceAlignProcessor

    processor = Qwen3ForceAlignProcessor()
    return lambda text, language: processor.encode_timestamp(text, language)[0]


def test_the_korean_word_list_is_qwen_asr_s():
    asset = files("qwen_asr.inference").joinpath("assets/korean_dict_jieba.dict").read_text(encoding="utf-8")
    theirs = {line.split()[0] for line in asset.splitlines() if line.strip()}
    assert korean_words() == {w for w in theirs if len(w) >= 2}


@pytest.mark.parametrize("language", list(TEXTS))
def test_the_units_are_the_official_ones(official_units, language):
    text = TEXTS[language]
    assert split_units(text, language) == official_units(text, language)
    assert split_units(text, language)  # not empty: the comparison means something


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet="ab Cd'.,!?-\t\n你好世界한국어입니다날씨학교東京カタナはれ。ÄéßΩ１２3😀", max_size=40),
       language=st.sampled_from(["English", "Chinese", "Korean", "Japanese", "French", None]))
@example("학교에서 공부합니다 한국", "Korean")
@example("a", "Korean")
def test_any_text_is_cut_as_the_official(official_units, text, language):
    assert split_units(text, language) == official_units(text, language or "")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=30))
@example([5, 1, 2, 3, 0, 0, 0, 9, 10, 11, 12])
@example([10, 0, 0, 0, 0, 1])
@example([3, 2, 1])
def test_times_that_go_back_are_repaired_as_the_official(values):
    from qwen_asr.inference.qwen3_forced_aligner import Qwen3ForceAlignProcessor

    ms = np.asarray(values, np.float32) * np.float32(80.0)
    assert repair_monotonic(ms.tolist()) == Qwen3ForceAlignProcessor().fix_timestamp(ms)


def _official_items(official_aligner, samples, text, language):
    result = official_aligner.align((samples, 16000), text, language)[0]
    return [(i.text, i.start_time, i.end_time) for i in result]


@pytest.mark.parametrize("language", list(TEXTS))
@pytest.mark.parametrize("signal, seconds", [("bursts", 3.1), ("sweep", 1.4), ("noise", 5.3)])
def test_the_timestamps_equal_the_official(aligner, official_aligner, language, signal, seconds):
    samples, text = SIGNALS[signal](seconds), TEXTS[language]
    ours = [(u.text, u.start, u.end) for u in aligner.align(samples, text, language)]
    assert ours == _official_items(official_aligner, samples, text, language)


def test_the_timestamps_are_not_trivial(aligner):
    """Times differ between units and between audios, and some needed repair."""
    spans = [tuple((u.start, u.end) for u in aligner.align(SIGNALS[s](sec), TEXTS["English"], "English"))
             for s, sec in [("bursts", 3.1), ("sweep", 1.4), ("noise", 5.3)]]
    assert len(set(spans)) == 3
    assert all(len({t for pair in span for t in pair}) > 2 for span in spans)


def test_our_writer_s_aligner_equals_the_official(own_aligner_dir):
    from official_asr import load_official_aligner

    from hearth.listen import Aligner

    ours, theirs = Aligner.load(own_aligner_dir, backend="torch"), load_official_aligner(own_aligner_dir)
    for language in ("English", "Chinese", "Korean"):
        samples = noise(2.7, 8)
        got = [(u.text, u.start, u.end) for u in ours.align(samples, TEXTS[language], language)]
        assert got == _official_items(theirs, samples, TEXTS[language], language)


def test_transcripts_with_timestamps_equal_the_official(asr_dir, aligner, official_aligner, monkeypatch):
    """Transcribe, then align each piece's text in the language the model named, offset by the piece:
    the 3-minute piece limit scaled down to 6 s on both sides so that pieces are offset."""
    import qwen_asr.inference.qwen3_asr as official_module

    from hearth.listen import listener as listener_module

    monkeypatch.setattr(official_module, "MAX_FORCE_ALIGN_INPUT_SECONDS", 6.0)
    monkeypatch.setattr(listener_module, "MAX_ALIGN_SECONDS", 6.0)
    official = load_official_asr(asr_dir, max_new_tokens=10)
    official.forced_aligner = official_aligner
    listener = Listener.load(asr_dir, backend="torch", aligner=aligner)
    samples = np.concatenate([SIGNALS["bursts"](5.5), SIGNALS["silence"](0.6), SIGNALS["noise"](2.2)])
    for language in (None, "Chinese"):
        ours = listener.transcribe(samples, ListenOptions(language=language, max_new_tokens=10, timestamps=True))
        theirs = official.transcribe((samples, 16000), language=language, return_time_stamps=True)[0]
        assert len(ours.pieces) == 2 and ours.pieces[1].offset > 0 and ours.units
        assert (ours.language, ours.text) == (theirs.language, theirs.text)
        assert [(u.text, u.start, u.end) for u in ours.units] == \
            [(i.text, i.start_time, i.end_time) for i in theirs.time_stamps]


def test_bad_requests_say_what_to_do(aligner, listener, monkeypatch):
    with pytest.raises(InputError, match="unknown language 'Klingon'"):
        aligner.align(noise(1.0), "hello", "Klingon")
    with pytest.raises(InputError, match="at most 180 s"):
        aligner.align(np.zeros(181 * 16000, np.float32), "hello", "English")
    with pytest.raises(InputError, match="aligner"):
        listener.transcribe(noise(1.0), ListenOptions(timestamps=True))
    monkeypatch.setitem(sys.modules, "nagisa", None)  # as if it were not installed
    with pytest.raises(InputError, match="pip install nagisa"):
        aligner.align(noise(1.0), "東京は晴れです", "Japanese")
    assert aligner.align(noise(1.0), "...", "English") == ()


def test_japanese_units_leave_the_callers_arithmetic_as_it_was():
    """nagisa's library sets flush-to-zero when it loads: Hearth loads it on a thread of its own, so
    the thread that aligns Japanese keeps subnormal numbers (a fresh process: this one has it loaded)."""
    script = ("from hearth.listen.units import split_units\n"
              "tiny = 5e-324\n"
              "assert tiny * 1.0 != 0.0\n"
              "print(split_units('東京は晴れです', 'Japanese'))\n"
              "assert tiny * 1.0 != 0.0, 'subnormals flushed to zero in the aligning thread'\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr.decode()
    assert "東京" in r.stdout.decode()
