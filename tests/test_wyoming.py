"""`hearth wyoming` as Home Assistant meets it: a live server process, the `wyoming` package's client.

Audio is checked against the engine in this process (same checkpoint, same default backend): with
`--seed`, sentence i is sampled with seed + i, so a one-shot synthesis equals those sentences'
`synthesize` output joined, and a streamed exchange of the same text equals the one-shot one.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time

import pytest
from servers import WyomingServer
from wyoming.client import AsyncTcpClient, AsyncUnixClient  # noqa: E402
from wyoming.event import Event, read_event, write_event  # noqa: E402
from wyoming.info import Describe, Info  # noqa: E402
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice  # noqa: E402

from hearth.streaming.sinks import to_pcm  # noqa: E402

TEXT = "Good evening, the lights are off. The door is locked!"
SENTENCES = ["Good evening, the lights are off.", "The door is locked!"]
PIECES = ["Good eve", "ning, the li", "ghts are off", ". The do", "or is lock", "ed!"]
SEED, FRAMES = 9, 7  # max_new_tokens 7: 6 frames per sentence


@pytest.fixture(scope="module")
def server(tiny_dir):
    with WyomingServer(tiny_dir, "--seed", str(SEED), "--max-new-tokens", str(FRAMES)) as s:
        yield s


@pytest.fixture(scope="module")
def expected(fast_engine):
    return [to_pcm(fast_engine.synthesize(t, "ryan", seed=SEED + i, max_new_tokens=FRAMES).samples, "s16")
            for i, t in enumerate(SENTENCES)]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=120))


async def events_until(client, last: str) -> list[Event]:
    events = []
    while True:
        event = await client.read_event()
        assert event is not None, f"the connection closed before {last}"
        events.append(event)
        if event.type in (last, "error"):
            return events


def audio_blocks(events: list[Event]) -> list[bytes]:
    """The payloads between each audio-start and audio-stop, checking the format."""
    blocks, current = [], None
    for e in events:
        if e.type == "audio-start":
            assert current is None and (e.data["rate"], e.data["width"], e.data["channels"]) == (24000, 2, 1)
            current = b""
        elif e.type == "audio-chunk":
            assert current is not None and e.data["rate"] == 24000
            current += e.payload
        elif e.type == "audio-stop":
            blocks.append(current)
            current = None
    assert current is None
    return blocks


def test_describe(server, tiny_dir):
    async def go():
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            await client.write_event(Describe().event())
            return Info.from_event(await client.read_event())

    info = run(go())
    (program,) = info.tts
    assert program.name == "hearth" and program.installed and program.supports_synthesize_streaming
    assert program.version and program.attribution.name
    names = [v.name for v in program.voices]
    assert sorted(names) == sorted(["vivian", "serena", "uncle_fu", "dylan", "eric", "ryan", "aiden", "ono_anna",
                                    "sohee"])
    for voice in program.voices:
        assert sorted(voice.languages) == ["de", "en", "es", "fr", "it", "ja", "ko", "pt", "ru", "zh"]
        assert voice.description and voice.installed


@pytest.mark.parametrize("voice", ["Ryan", "echo"])  # echo: OpenAI's name, an alias of Ryan by default
def test_one_shot_synthesis(server, expected, voice):
    async def go():
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            await client.write_event(Synthesize(text=TEXT, voice=SynthesizeVoice(name=voice)).event())
            return await events_until(client, "audio-stop")

    events = run(go())
    assert [e.type for e in events][0] == "audio-start" and events[-1].type == "audio-stop"
    assert sum(e.type == "audio-chunk" for e in events) >= 2  # sent as chunks leave the vocoder
    assert audio_blocks(events) == [b"".join(expected)]  # 2 sentences x 6 frames x 1920 samples, bit for bit


def test_streamed_text_speaks_before_it_ends(server, expected):
    """Text in pieces with pauses: audio of the first sentence arrives before synthesize-stop is sent,
    each sentence in its own block, equal to the one-shot synthesis; the compatibility synthesize
    inside the exchange is ignored."""

    async def go():
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            events: list[Event] = []

            async def receive():
                while not events or events[-1].type not in ("synthesize-stopped", "error"):
                    event = await client.read_event()
                    assert event is not None, "the connection closed"
                    events.append(event)

            receiver = asyncio.create_task(receive())
            await client.write_event(SynthesizeStart(voice=SynthesizeVoice(name="ryan")).event())
            for piece in PIECES:
                await client.write_event(SynthesizeChunk(text=piece).event())
                await asyncio.sleep(0.5)
            deadline = time.monotonic() + 60  # audio comes without synthesize-stop (however loaded the machine)
            while not any(e.type == "audio-chunk" for e in events) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            early = list(events)  # what arrived before the text was complete
            await client.write_event(Synthesize(text=TEXT, voice=SynthesizeVoice(name="ryan")).event())
            await client.write_event(SynthesizeStop().event())
            await receiver
            return early, events

    early, events = run(go())
    assert any(e.type == "audio-chunk" for e in early), "no audio before synthesize-stop"
    assert events[-1].type == "synthesize-stopped" and not any(e.type == "error" for e in events)
    assert audio_blocks(events) == expected


def test_languages_and_stdio(tiny_dir, fast_engine):
    """stdio://, as wyoming-piper's tests run it; a language code picks the model's language; the
    server's --speed (Wyoming carries no rate) stretches every synthesis."""
    from hearth.streaming.stretch import stretch

    proc = subprocess.Popen([sys.executable, "-m", "hearth.cli", "wyoming", "--model", str(tiny_dir), "--uri",
                             "stdio://", "--seed", "3", "--max-new-tokens", "4", "--speed", "1.25"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        write_event(Describe().event(), proc.stdin)
        write_event(Event("synthesize", {"text": "Guten Abend.", "voice": {"name": "aiden", "language": "de-DE"}}),
                    proc.stdin)
        write_event(Event("synthesize", {"text": "Hi.", "voice": {"name": "aiden", "language": "nl"}}), proc.stdin)
        proc.stdin.flush()
        events = []
        while len(events) < 40 and (not events or events[-1].type != "error"):
            event = read_event(proc.stdout)
            assert event is not None, proc.stderr.read().decode() if proc.poll() is not None else "closed"
            events.append(event)
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
    assert events[0].type == "info"
    samples = fast_engine.synthesize("Guten Abend.", "aiden", "german", seed=3, max_new_tokens=4).samples
    expected = to_pcm(stretch(samples, 1.25, 24000), "s16")
    assert audio_blocks(events[1:-1]) == [expected]
    assert events[-1].type == "error" and "unknown language 'nl'" in events[-1].data["text"]
    assert "de" in events[-1].data["text"]


def test_unix_socket(tiny_dir, tmp_path):
    path = tmp_path / "hearth.sock"
    with WyomingServer(tiny_dir, "--max-new-tokens", "3", uri=f"unix://{path}"):
        async def go():
            async with AsyncUnixClient(str(path)) as client:
                await client.write_event(Synthesize(text="Over a socket.").event())
                return await events_until(client, "audio-stop")

        blocks = audio_blocks(run(go()))
        assert len(blocks) == 1 and len(blocks[0]) == 2 * 2 * 1920
    assert not path.exists()


BAD = [
    (Event("synthesize", {"text": "Hi.", "voice": {"name": "bob"}}), "unknown voice 'bob'", "vivian"),
    (Event("synthesize", {"text": "  "}), "text is empty", ""),
    (Event("synthesize", {"text": "... !!"}), "nothing to speak", ""),
    (Event("synthesize", {"voice": {"name": "ryan"}}), 'needs "text"', ""),
    (Event("synthesize", {"text": 5}), 'needs "text"', ""),
    (Event("synthesize", {"text": "Hi.", "voice": "ryan"}), '"voice" must be an object', ""),
    (Event("transcribe", {}), "transcribes nothing", "--listen"),
    (Event("frobnicate", {}), "unknown event 'frobnicate'", "synthesize"),
    (Event("synthesize-chunk", {"text": "x"}), "between synthesize-start and synthesize-stop", ""),
    (Event("synthesize-stop", {}), "without synthesize-start", ""),
]


def test_bad_input_gets_an_error_and_others_are_served(server, expected):
    """Every bad input on one connection (which stays usable), a client that leaves mid-synthesis,
    and meanwhile a second client served normally."""

    async def bad_client():
        errors = []
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            for event, fragment, listed in BAD:
                await client.write_event(event)
                answer = await client.read_event()
                assert answer.type == "error", (event, answer)
                assert fragment in answer.data["text"] and listed in answer.data["text"], answer.data
                errors.append(answer.data.get("code"))
            client._writer.write(b"{this is not json\n")  # malformed: an error, and the connection remains
            await client._writer.drain()
            answer = await client.read_event()
            assert answer.type == "error" and "malformed JSON" in answer.data["text"]
            await client.write_event(SynthesizeStart().event())  # streamed, but no words
            await client.write_event(SynthesizeChunk(text=" ... ").event())
            await client.write_event(SynthesizeStop().event())
            events = await events_until(client, "synthesize-stopped")
            if events[-1].type == "error":
                events += await events_until(client, "synthesize-stopped")
            assert [e.type for e in events] == ["error", "synthesize-stopped"]
            assert "nothing to speak" in events[0].data["text"]
            await client.write_event(Describe().event())
            assert (await client.read_event()).type == "info"
        return errors

    async def leaving_client():
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            long = " ".join(f"Sentence number {i} is here." for i in range(40))
            await client.write_event(Synthesize(text=long, voice=SynthesizeVoice(name="ryan")).event())
            assert (await client.read_event()).type == "audio-start"
        # gone, mid-synthesis

    async def good_client():
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            await client.write_event(Synthesize(text=TEXT, voice=SynthesizeVoice(name="ryan")).event())
            return audio_blocks(await events_until(client, "audio-stop"))

    async def go():
        return await asyncio.gather(bad_client(), leaving_client(), good_client())

    errors, _, blocks = run(go())
    assert blocks == [b"".join(expected)]
    assert set(errors) == {"bad-request"}
    deadline = time.monotonic() + 30
    while "cancelled, the client went away" not in server.logged() and time.monotonic() < deadline:
        time.sleep(0.2)
    log = server.logged()
    assert "cancelled, the client went away" in log
    started, total = map(int, re.search(r"\((\d+) sentence\(s\) started of (\d+)\)", log).groups())
    assert total == 40 and started < 10  # generation stopped, not finished in the background


def test_oversized_header_is_skipped_with_an_error(server):
    async def go():
        async with AsyncTcpClient("127.0.0.1", server.port) as client:
            line = json.dumps({"type": "synthesize", "data": {"text": "x" * 150_000}}).encode() + b"\n"
            client._writer.write(line)
            await client._writer.drain()
            answer = await client.read_event()
            await client.write_event(Describe().event())
            return answer, await client.read_event()

    answer, info = run(go())
    assert answer.type == "error" and "longer than" in answer.data["text"]
    assert info.type == "info"


def test_sigterm_stops_within_seconds_mid_synthesis(tiny_dir):
    s = WyomingServer(tiny_dir)

    async def go():
        async with AsyncTcpClient("127.0.0.1", s.port) as client:
            await client.write_event(Synthesize(text="A long story begins here. " * 30).event())
            assert (await client.read_event()).type == "audio-start"
            t0 = time.monotonic()
            code, err = await asyncio.get_running_loop().run_in_executor(None, s.stop)
            return code, err, time.monotonic() - t0

    code, err, took = run(go())
    assert code == 0, err
    assert took < 10 and "stopped" in err


def test_zeroconf_announces_the_server(tiny_dir, monkeypatch):
    """Discovery as Home Assistant does it (`_wyoming._tcp.local.`), kept on the loopback interface.
    Multicast DNS is what --zeroconf asks for, so the suite's audit lets it pass (conftest.py)."""
    import zeroconf

    monkeypatch.setenv("HEARTH_AUDIT_ALLOW_MDNS", "1")  # here and in the server it starts
    name = f"hearth-test-{time.monotonic_ns() % 100000}"
    with WyomingServer(tiny_dir, "--zeroconf", name) as s:
        zc = zeroconf.Zeroconf(interfaces=["127.0.0.1"])
        try:
            info = zc.get_service_info("_wyoming._tcp.local.", f"{name}._wyoming._tcp.local.", timeout=10_000)
        finally:
            zc.close()
        assert info is not None, s.logged()
        assert info.parsed_addresses() == ["127.0.0.1"] and info.port == s.port

        async def go():
            async with AsyncTcpClient(info.parsed_addresses()[0], info.port) as client:
                await client.write_event(Describe().event())
                return await client.read_event()

        assert run(go()).type == "info"
    assert "loopback address" in s.stopped_log  # the warning: other machines cannot reach a loopback announcement


def test_loadtest_streams_to_a_wyoming_server(server):
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "loadtest", f"tcp://127.0.0.1:{server.port}", "--clients",
                        "2", "--requests", "2", "--words-per-second", "40", "--json"],
                       capture_output=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr.decode()
    result = json.loads(r.stdout)
    assert result["served"] == 4 and result["errors"] == 0 and result["busy_503"] == 0
    assert result["first_byte_from"] == "the end of the first sentence"
    assert 0 < result["first_byte_p50_s"] < 60 and result["audio_s"] > 0
