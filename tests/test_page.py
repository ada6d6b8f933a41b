"""The page at `GET /`, in a real headless Chromium (Debian's `chromium` and `chromium-driver`; nothing
is downloaded): it loads offline, Speak plays samples through Web Audio while the request is still
streaming, and Stop cancels the request on the server.

Without Chromium these tests skip, except under CI (`CI=true`), where `.ci/run` installs it.
"""

from __future__ import annotations

import os
import time

import pytest
from conftest import DEFAULT_BACKEND
from needs import need_programs
from servers import Server
from webdriver import Chromium

LONG = " ".join(["word"] * 50)  # one sentence of several hundred frames


def _microphone(path) -> str:
    """What the fake microphone says, over and over: a speech-like stretch between pauses (16-bit WAV)."""
    import wave

    import numpy as np
    from sounds import silence, voiced

    audio = np.concatenate([silence(0.6), voiced(1.2, 3), silence(1.2)])
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(np.round(audio * 32767).astype("<i2").tobytes())
    return str(path)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium, driver = need_programs("chromium", "chromedriver", package="chromium chromium-driver")
    microphone = _microphone(tmp_path_factory.mktemp("microphone") / "speech.wav")
    flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
             "--autoplay-policy=no-user-gesture-required", "--window-size=900,800",
             "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
             f"--use-file-for-fake-audio-capture={microphone}"]
    browser = Chromium(chromium, driver, str(tmp_path_factory.mktemp("chromium-profile")), flags)
    yield browser
    browser.quit()


def test_page_speaks_while_streaming_and_stop_cancels(browser, server):
    browser.get(server.url + "/")
    assert browser.title == "Hearth"
    browser.wait("return document.querySelectorAll('#voice option').length === 9")
    assert DEFAULT_BACKEND in browser.text("#status")

    browser.type("#text", LONG)
    browser.click("#speak")
    # Samples are scheduled on the Web Audio graph while the response is still arriving.
    browser.wait("return window.hearth.scheduledSamples > 0 && window.hearth.receiving")
    assert browser.run("return window.hearth.firstAudioMs") > 0
    browser.wait("return window.hearth.state === 'done'")
    samples = browser.run("return window.hearth.scheduledSamples")
    assert samples >= 200 * 1920 and samples % 1920 == 0
    assert browser.text("#rtf") not in ("", "–")

    earlier = len(server.logged())  # (the module's server: its other tests' requests come before, in any order)
    browser.click("#speak")
    browser.wait("return window.hearth.scheduledSamples > 0 && window.hearth.receiving")
    browser.click("#stop")
    browser.wait("return window.hearth.state === 'stopped'")
    deadline = time.monotonic() + 10
    while ": cancelled after" not in server.logged()[earlier:] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ": cancelled after" in server.logged()[earlier:], server.logged()


def test_page_speed(browser, server):
    """The Speed field: the page plays exactly what the server sends at that speed (twice the
    samples at 0.5: each sentence stretched to round(n / speed))."""
    import requests

    browser.get(server.url + "/")
    browser.wait("return document.querySelectorAll('#voice option').length === 9")
    browser.run("document.getElementById('text').value = 'Hello there. And again.'")
    browser.run("document.getElementById('seed').value = '5'")
    browser.run("document.getElementById('speed').value = '0.5'")
    browser.click("#speak")
    browser.wait("return window.hearth.state === 'done'")
    samples = browser.run("return window.hearth.scheduledSamples")
    body = {"model": "tts-1", "input": "Hello there. And again.", "voice": browser.run(
        "return document.getElementById('voice').value"), "language": "auto", "response_format": "pcm", "seed": 5}
    plain = requests.post(server.url + "/v1/audio/speech", json=body, timeout=120).content
    slow = requests.post(server.url + "/v1/audio/speech", json={**body, "speed": 0.5}, timeout=120).content
    assert samples == len(slow) // 2 == 2 * (len(plain) // 2)


def test_page_reports_errors(browser, server):
    browser.get(server.url + "/")
    browser.wait("return document.querySelectorAll('#voice option').length === 9")
    browser.run("document.getElementById('text').value = '   '")
    browser.click("#speak")
    assert "Type something" in browser.text("#message")
    browser.run("document.getElementById('voice').innerHTML = '<option value=\"nobody\">x</option>'")
    browser.run("document.getElementById('text').value = 'Hello.'")
    browser.click("#speak")
    browser.wait("return window.hearth.state === 'error'")
    assert "unknown voice" in browser.text("#message")


def test_page_adds_speaks_and_removes_a_cloned_voice(browser, base_dir, tmp_path):
    """With a Base checkpoint the page offers its voice panel: a recording chosen in the file input
    becomes a voice (the multipart upload), speaks, and is removed."""
    import soundfile
    from test_clone import REF_TEXT, reference_audio

    ref = tmp_path / "me.wav"
    soundfile.write(ref, reference_audio(2.0, 12), 24000, subtype="PCM_16")
    with Server(base_dir, "--backend", "torch", env={**os.environ, "HEARTH_CACHE": str(tmp_path / "cache")}) as s:
        browser.get(s.url + "/")
        browser.wait("return getComputedStyle(document.getElementById('voicepanel')).display === 'block'")
        # (the panel shows once /health answers; the message once the voice list has come too)
        browser.wait("return document.getElementById('message').textContent.includes('No voices yet')")
        browser.type("#voiceName", "Me")
        browser.type("#voiceFile", str(ref))
        browser.type("#voiceText", REF_TEXT)
        browser.click("#addVoice")
        browser.wait("return document.querySelectorAll('#voice option').length === 1")
        assert "Added me (in-context" in browser.text("#message")
        assert (tmp_path / "cache" / "voices" / "me.safetensors").is_file()

        browser.run("document.getElementById('text').value = 'Hello.'")
        browser.click("#speak")
        browser.wait("return window.hearth.state === 'done'")
        assert browser.run("return window.hearth.scheduledSamples") > 0

        browser.click("#removeVoice")
        browser.wait("return document.querySelectorAll('#voice option').length === 0")
        assert not (tmp_path / "cache" / "voices" / "me.safetensors").exists()
        browser.type("#voiceName", "plain")
        browser.type("#voiceFile", str(ref))
        browser.run("document.getElementById('voiceText').value = ''")
        browser.click("#addVoice")  # no transcript: the speaker embedding alone
        browser.wait("return document.querySelectorAll('#voice option').length === 1")
        assert "x-vector" in browser.text("#message")


def test_page_dictates_into_the_text_box(browser, tiny_dir, asr_dir):
    """Dictate (shown where the server listens): Chromium's fake microphone through the realtime
    WebSocket with server_vad; each utterance's transcript is written into the box after the text
    there, and Stop ends it cleanly on the server."""
    with Server(tiny_dir, "--backend", "torch", "--listen", str(asr_dir), "--listen-backend", "torch") as server:
        browser.get(server.url + "/")
        browser.wait("return !document.getElementById('dictate').hidden")
        browser.run("document.getElementById('text').value = 'Notes:'")
        browser.click("#dictate")
        browser.wait("return window.hearth.dictation.transcripts.length >= 2", timeout=120)
        browser.click("#dictate")
        browser.wait("return window.hearth.dictation.state === 'off'", timeout=60)
        transcripts = browser.run("return window.hearth.dictation.transcripts")
        text = browser.run("return document.getElementById('text').value")
        written = "".join(t + " " for t in transcripts if t)
        assert text == "Notes: " + written
        assert "Traceback" not in server.logged()
    # A server that does not listen shows no Dictate button.
    with Server(tiny_dir, "--backend", "torch") as plain:
        browser.get(plain.url + "/")
        browser.wait("return document.querySelectorAll('#voice option').length === 9")
        assert browser.run("return document.getElementById('dictate').hidden") is True
