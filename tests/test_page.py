"""The page at `GET /`, in a real headless Chromium (Debian's `chromium` and `chromium-driver`; nothing
is downloaded): it loads offline, Speak plays samples through Web Audio while the request is still
streaming, and Stop cancels the request on the server.

Without Chromium these tests skip, except under CI (`CI=true`), where `.ci/run` installs it.
"""

from __future__ import annotations

import os
import shutil
import time

import pytest
from servers import Server
from webdriver import Chromium

LONG = " ".join(["word"] * 50)  # one sentence of several hundred frames


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        reason = "no Chromium: apt-get install chromium chromium-driver"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{reason}; it is part of the CI set-up")
        pytest.skip(reason)
    flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
             "--autoplay-policy=no-user-gesture-required", "--window-size=900,800"]
    browser = Chromium(chromium, driver, str(tmp_path_factory.mktemp("chromium-profile")), flags)
    yield browser
    browser.quit()


@pytest.fixture(scope="module")
def server(tiny_dir):
    s = Server(tiny_dir)
    yield s
    s.stop()


def test_page_speaks_while_streaming_and_stop_cancels(browser, server):
    browser.get(server.url + "/")
    assert browser.title == "Hearth"
    browser.wait("return document.querySelectorAll('#voice option').length === 9")
    assert "openvino" in browser.text("#status")

    browser.type("#text", LONG)
    browser.click("#speak")
    # Samples are scheduled on the Web Audio graph while the response is still arriving.
    browser.wait("return window.hearth.scheduledSamples > 0 && window.hearth.receiving")
    assert browser.run("return window.hearth.firstAudioMs") > 0
    browser.wait("return window.hearth.state === 'done'")
    samples = browser.run("return window.hearth.scheduledSamples")
    assert samples >= 200 * 1920 and samples % 1920 == 0
    assert browser.text("#rtf") not in ("", "–")

    browser.click("#speak")
    browser.wait("return window.hearth.scheduledSamples > 0 && window.hearth.receiving")
    browser.click("#stop")
    browser.wait("return window.hearth.state === 'stopped'")
    deadline = time.monotonic() + 10
    while "request 2: cancelled after" not in server.logged() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "request 2: cancelled after" in server.logged(), server.logged()


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
