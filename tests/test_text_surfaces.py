"""The text front end and the request options on every surface, with the clients people use: the
command line (`hearth say`, `hearth normalize`), `hearth serve` (the OpenAI SDK's raw body, the
WebSocket), `hearth wyoming` (Home Assistant's client); each option declared once
(hearth.options.FIELDS) shows on each surface that takes it."""

from __future__ import annotations

import io
import json
import wave

import pytest
import requests
import websockets.sync.client as ws_client
from cli import hearth
from servers import WyomingServer

from hearth.errors import InputError
from hearth.options import FIELDS
from hearth.text.normalize import normalize

SPOKEN = "It is twenty-one point five degrees Celsius at seven thirty P M."
WRITTEN = "It is 21.5 °C at 7:30 pm."
SSML = ('<speak>Hello <break time="700ms"/><voice name="aiden">there, <say-as interpret-as="characters">USB'
        '</say-as></voice><mark name="end"/></speak>')


def pcm(wav_bytes: bytes) -> bytes:
    with wave.open(io.BytesIO(wav_bytes)) as w:
        return w.readframes(w.getnframes())


def speech(server, **body) -> requests.Response:
    return requests.post(f"http://127.0.0.1:{server.port}/v1/audio/speech", timeout=300,
                         json={"model": "tts-1", "voice": "ryan", "response_format": "wav", "seed": 4,
                               "max_new_tokens": 6, **body})


def test_hearth_say_speaks_a_text_as_its_spoken_form(tiny_dir, tmp_path):
    """`hearth say "21.5 °C" --seed 1` writes the same audio as `hearth say "<its spoken form>"`."""
    assert normalize(WRITTEN, "english").text == SPOKEN
    outs = []
    for i, text in enumerate((WRITTEN, SPOKEN)):
        out = tmp_path / f"{i}.wav"
        r = hearth("say", text, "--model", str(tiny_dir), "--voice", "ryan", "--language", "english", "--seed", "1",
                   "--max-new-tokens", "8", "--out", str(out))
        assert r.returncode == 0, r.stderr.decode()
        outs.append(pcm(out.read_bytes()))
    assert outs[0] == outs[1] and len(outs[0]) > 0
    r = hearth("say", WRITTEN, "--model", str(tiny_dir), "--voice", "ryan", "--language", "english", "--seed", "1",
               "--max-new-tokens", "8", "--no-normalize", "--out", str(tmp_path / "raw.wav"))
    assert r.returncode == 0, r.stderr.decode()
    assert pcm((tmp_path / "raw.wav").read_bytes()) != outs[0]  # as written, the model reads other tokens


def test_malformed_ssml_is_refused_with_its_place(tiny_dir):
    r = hearth("say", "<speak>Hi <break time=\"soon\"/></speak>", "--ssml", "--model", str(tiny_dir), "--out", "-")
    assert r.returncode == 2 and b"line 1, column 11" in r.stderr and r.stdout == b"", r.stderr
    r = hearth("normalize", "<speak><b>bold</b></speak>", "--ssml")
    assert r.returncode == 2 and b"<b> at line 1, column 8" in r.stderr, r.stderr


def test_hearth_normalize_prints_the_spoken_text_and_its_span_map():
    r = hearth("normalize", WRITTEN, "--language", "english")
    assert r.returncode == 0 and r.stdout.decode() == SPOKEN + "\n" and r.stderr == b"", r
    data = json.loads(hearth("normalize", "Pay $5 now.", "--json").stdout)
    assert data["text"] == "Pay five dollars now."
    five = next(w for w in data["words"] if w["word"] == "five")
    assert data["source"][five["source_start"]:five["source_end"]] == "$5"
    parts = json.loads(hearth("normalize", SSML, "--ssml", "--json").stdout)
    assert [p["voice"] for p in parts] == [None, "aiden"] and parts[1]["pause_before_s"] == 0.7
    assert parts[1]["text"].startswith("there, U S B") and parts[1]["marks"] == [{"name": "end",
                                                                                   "offset": len(parts[1]["text"])}]
    assert hearth("normalize", "x", "--normalize-skip", "nothing").returncode == 2
    for code in ("en", "EN-us", "en_GB"):  # a language's code stands for its name
        assert hearth("normalize", WRITTEN, "--language", code).stdout.decode() == SPOKEN + "\n"
    assert hearth("normalize", "12", "--language", "de").stdout.decode() == "zwölf\n"
    wrong = hearth("normalize", "x", "--language", "xx")
    assert wrong.returncode == 2 and "or its code" in wrong.stderr.decode()


def test_the_engine_takes_a_language_s_code_for_its_name(engine):
    assert engine.check_language("en") == engine.check_language("English") == "english"
    assert engine.check_language("pt-BR") == "portuguese"
    with pytest.raises(InputError, match="unknown language 'xx'"):
        engine.check_language("xx")


def test_the_http_body_takes_normalize_and_text_format(server):
    written, spoken = speech(server, input=WRITTEN, language="english"), speech(server, input=SPOKEN,
                                                                                language="english")
    assert written.status_code == spoken.status_code == 200
    assert pcm(written.content) == pcm(spoken.content)
    raw = speech(server, input=WRITTEN, language="english", normalize=False)
    assert raw.status_code == 200 and pcm(raw.content) != pcm(written.content)
    kept = speech(server, input=WRITTEN, language="english", normalize=["times"])  # the time as written
    assert kept.status_code == 200 and pcm(kept.content) not in (pcm(written.content), pcm(raw.content))
    bad = speech(server, input=WRITTEN, normalize=["colours"])
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "normalize", bad.text
    broken = speech(server, input="<speak>oops", text_format="ssml")
    assert broken.status_code == 400 and "line 1" in broken.json()["error"]["message"], broken.text
    document = speech(server, input=SSML, text_format="ssml")
    assert document.status_code == 200
    plain = speech(server, input="Hello there, U S B", text_format="text")
    assert len(pcm(document.content)) != len(pcm(plain.content))  # (the break's 0.7 s, and two voices' parts)


def test_every_request_option_is_in_the_openapi_document_and_the_websocket_config(server):
    doc = requests.get(f"http://127.0.0.1:{server.port}/openapi.json", timeout=30).json()
    body = doc["components"]["schemas"]["Speech"]
    config = doc["components"]["schemas"]["WsSessionConfig"]["properties"]
    for f in FIELDS:
        assert f.json in body["properties"] and f.json in config, f.json


def test_the_websocket_takes_an_ssml_document_whole(server):
    with ws_client.connect(f"ws://127.0.0.1:{server.port}/v1/audio/speech/stream", open_timeout=10) as ws:
        ws.send(json.dumps({"type": "session.config", "voice": "ryan", "seed": 2, "max_new_tokens": 5,
                            "text_format": "ssml"}))
        for piece in (SSML[:30], SSML[30:]):
            ws.send(json.dumps({"type": "input.text", "text": piece}))
        ws.send(json.dumps({"type": "input.done"}))
        sentences, audio = [], 0
        while True:
            m = ws.recv(timeout=120)
            if isinstance(m, bytes):
                audio += len(m)
                continue
            m = json.loads(m)
            assert m["type"] != "error", m
            if m["type"] == "audio.start":
                sentences.append(m["sentence_text"])
            if m["type"] == "session.done":
                break
    assert sentences == ["Hello", "there, U S B"] and audio > 0.7 * 24000 * 2


def test_the_command_lines_take_every_option_the_table_declares(tiny_dir):
    say = hearth("say", "--help").stdout.decode()
    wyoming = hearth("wyoming", "--help").stdout.decode()
    for f in FIELDS:
        for flag in f.flags:
            assert flag.name in say, flag.name
            if f.resident:  # (Wyoming's events carry none of these: the server's is every synthesis's)
                assert flag.name in wyoming, flag.name


def test_wyoming_normalizes_and_takes_ssml_where_the_client_says_so(tiny_dir):
    import asyncio

    from wyoming.client import AsyncTcpClient
    from wyoming.tts import Synthesize, SynthesizeVoice

    async def synthesize(port: int, text: str, text_format: str | None) -> tuple[bytes, str | None]:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Synthesize(text=text, voice=SynthesizeVoice(name="ryan"),
                                                text_format=text_format).event())
            audio = b""
            while True:
                event = await client.read_event()
                if event.type == "error":
                    return audio, event.data.get("text")
                if event.type == "audio-chunk":
                    audio += event.payload
                if event.type == "audio-stop":
                    return audio, None

    with WyomingServer(tiny_dir, "--seed", "5", "--max-new-tokens", "6") as wyoming:
        written = wyoming.speak(WRITTEN)
        assert written == wyoming.speak(SPOKEN)
        document, error = asyncio.run(synthesize(wyoming.port, SSML, "ssml"))
        assert error is None and len(document) > 0.7 * 24000 * 2
        _, error = asyncio.run(synthesize(wyoming.port, "<speak><blink/></speak>", "ssml"))
        assert error is not None and "<blink> at line 1, column 8" in error
    with WyomingServer(tiny_dir, "--seed", "5", "--max-new-tokens", "6", "--no-normalize") as raw:
        assert raw.speak(WRITTEN) != written


@pytest.mark.parametrize("lexicon", ['[words]\nQwen = "chwen"\n[klingon]\nx = "y"\n', "not = [toml"])
def test_a_bad_lexicon_is_refused_before_anything_loads(tiny_dir, tmp_path, lexicon):
    path = tmp_path / "lexicon.toml"
    path.write_text(lexicon, encoding="utf-8")
    r = hearth("say", "Hello.", "--model", str(tiny_dir), "--lexicon", str(path), "--out", "-")
    assert r.returncode == 2 and b"--lexicon" in r.stderr and b"Traceback" not in r.stderr, r.stderr


def test_a_lexicon_respells_for_every_request(tiny_dir, tmp_path):
    path = tmp_path / "lexicon.toml"
    path.write_text('[words]\nQwen = "chwen"\n', encoding="utf-8")
    outs = []
    for text, extra in (("Qwen speaks.", ["--lexicon", str(path)]), ("chwen speaks.", [])):
        r = hearth("say", text, "--model", str(tiny_dir), "--voice", "ryan", "--seed", "3", "--max-new-tokens", "6",
                   "--out", "-", *extra)
        assert r.returncode == 0, r.stderr.decode()
        outs.append(pcm(r.stdout))
    assert outs[0] == outs[1]


def test_one_utterance_refuses_ssml_and_says_where_it_goes(engine):
    """stream() and open() speak one utterance of plain text: an SSML document goes to synthesize()."""
    for call in (lambda: engine.stream("<speak>Hi.</speak>", "ryan", text_format="ssml"),
                 lambda: engine.open("ryan", text_format="ssml")):
        with pytest.raises(InputError, match=r"synthesize\(\) and the scheduler") as e:
            call()
        assert e.value.param == "text_format"
