"""Each request option declared once: a row of hearth.options.FIELDS is all a surface needs.

A throwaway option, `warmth`, is added to the table here (in this module's fixture, nowhere else)
and followed to every surface: the command lines of `hearth say` and `codes`, of the resident
commands `speak` and `chat` (through the service and the agent) and of `hearth wyoming` (its flag,
and the value given in what the command hands on), and `hearth serve`'s speech body, OpenAPI
document and WebSocket `session.config`. Each surface runs in this process on the tiny torch engine,
up to the scheduler (or, for `codes`, the engine), which records what it is handed and stops there:
the engine would refuse an option it has no check for.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import sys
from types import SimpleNamespace

import pytest

import hearth.cli
import hearth.serve.http
import hearth.serve.openapi
import hearth.serve.websocket
import hearth.serve.wyoming
from hearth import options
from hearth.cli import chat, speak, speech, wyoming_server
from hearth.engine import Engine
from hearth.options import Field, Flag
from hearth.runtime.scheduler import Scheduler
from hearth.serve.speech_body import SpeechBody

WARMTH = Field("warmth", "warmth", {"type": "number", "minimum": 0, "maximum": 1},
               "how warm the voice sounds (a throwaway of tests/test_options_once.py)",
               (Flag("--warmth", {"default": None, "type": float, "help": "how warm the voice sounds"}),),
               resident=True)


class Handed(Exception):  # noqa: N818 - not an error: where the request stopped
    """A request stopped where a surface handed it on: the keywords it was given."""


@pytest.fixture
def handed(monkeypatch, engine):
    """FIELDS with WARMTH as its last row, in every module of hearth that holds the table (none holds
    anything derived from it), and a scheduler and engine that record what each request is handed
    instead of speaking it. The commands load the shared tiny engine (not theirs to close)."""
    table = (*options.FIELDS, WARMTH)
    holders = [name for name, module in sorted(sys.modules.items())
               if name.startswith("hearth") and module is not None and vars(module).get("FIELDS") is options.FIELDS]
    assert {"hearth.options", "hearth.cli.arguments", "hearth.serve.openapi", "hearth.serve.websocket"} <= set(
        holders), holders
    for name in holders:
        monkeypatch.setattr(sys.modules[name], "FIELDS", table)
    given: list[dict[str, object]] = []

    def stop(*args: object, **keywords: object) -> None:
        given.append(keywords)
        raise Handed(keywords)

    monkeypatch.setattr(Scheduler, "submit", stop)
    monkeypatch.setattr(Scheduler, "open", stop)
    monkeypatch.setattr(Engine, "generate_codes", stop)
    for module in (speech, speak, chat):
        monkeypatch.setattr(module, "load", lambda *args, **kw: contextlib.nullcontext(engine))
    return given


def run(tiny_dir, *argv: str) -> int:
    """`hearth ARGV --model TINY --backend torch`, in this process."""
    args = hearth.cli.parser().parse_args([*argv, "--model", str(tiny_dir), "--backend", "torch"])
    return args.run(args)


def test_hearth_say_and_codes_hand_it_on(handed, tiny_dir, tmp_path):
    out = str(tmp_path / "say.wav")
    with pytest.raises(Handed):
        run(tiny_dir, "say", "Hello there.", "--voice", "ryan", "--out", out, "--warmth", "0.25", "--seed", "3")
    with pytest.raises(Handed):
        run(tiny_dir, "say", "Hello there.", "--voice", "ryan", "--out", out)
    with pytest.raises(Handed):
        run(tiny_dir, "codes", "Hello there.", "--voice", "ryan", "--warmth", "0.5")
    given, left_out, codes = handed
    assert given["warmth"] == 0.25 and given["seed"] == 3
    assert "warmth" not in left_out  # not given: the engine's default
    assert codes["warmth"] == 0.5


def test_hearth_speak_hands_it_to_the_service_for_every_line(handed, tiny_dir, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"Hello there.\n"), encoding="utf-8"))
    with pytest.raises(Handed):
        run(tiny_dir, "speak", "--voice", "ryan", "--sink", "null", "--warmth", "0.75", "--seed", "5",
            "--speed", "1.5")
    (given,) = handed
    assert given["warmth"] == 0.75 and given["seed"] == 5 and given["speed"] == 1.5


def test_hearth_chat_hands_it_to_the_agent_for_every_turn(handed, tiny_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("Hello there.\n"))
    # The turn stops where the agent opens its request, before the LLM is asked anything.
    assert run(tiny_dir, "chat", "--llm", "http://127.0.0.1:9/v1", "--llm-model", "m", "--voice", "ryan",
               "--out", str(tmp_path / "chat.wav"), "--warmth", "0.5", "--max-new-tokens", "7") == 0
    (given,) = handed
    assert given["warmth"] == 0.5 and given["max_new_tokens"] == 7 and given["text_mode"] == "interleaved"


def test_hearth_wyoming_takes_it_for_every_synthesis(handed, engine, tiny_dir, monkeypatch):
    async def one_client(args, service, *where):
        """In place of the server: one client's synthesis, whole and streamed."""
        service.engine, service.scheduler = engine, Scheduler(engine)
        service.ready.set()
        try:
            for exchange in ({"text": "Hello there."}, None):
                session = hearth.serve.wyoming.Session(None, None, service)  # type: ignore[arg-type]
                with pytest.raises(Handed):
                    await (session._submit(exchange) if exchange else session._open({}))
        finally:
            service.scheduler.close()
            service.engine = service.scheduler = None  # (the shared engine is not the server's to close)
        return 0

    monkeypatch.setattr(wyoming_server, "_run", one_client)
    assert run(tiny_dir, "wyoming", "--uri", "tcp://127.0.0.1:0", "--warmth", "0.25") == 0
    assert [given["warmth"] for given in handed] == [0.25, 0.25]


def test_hearth_serve_takes_it_in_the_body_the_document_and_the_websocket(handed, engine):
    body = SpeechBody.parse(json.dumps({"model": "tts-1", "input": "Hello there.", "voice": "ryan",
                                        "warmth": 0.25}).encode())
    assert body.options["warmth"] == 0.25
    refused: list[str] = []

    async def error(message: str, code: str = "invalid_request_error") -> None:
        refused.append(message)

    with Scheduler(engine) as scheduler:
        with pytest.raises(Handed):
            asyncio.run(hearth.serve.http._submit(None, engine, scheduler, body))  # type: ignore[arg-type]
        state = SimpleNamespace(error=None, engine=engine, scheduler=scheduler)
        config = {"type": "session.config", "voice": "ryan", "warmth": 0.5}
        with pytest.raises(Handed):
            asyncio.run(hearth.serve.websocket._configure(None, state, config, error))  # type: ignore[arg-type]
    assert not refused
    assert [given["warmth"] for given in handed] == [0.25, 0.5]
    schemas = hearth.serve.openapi.document(engine, ["tts-1"], 4096, 10)["components"]["schemas"]
    described = {**WARMTH.schema, "description": WARMTH.help}
    assert schemas["Speech"]["properties"]["warmth"] == {"anyOf": [described, {"type": "null"}]}
    assert schemas["WsSessionConfig"]["properties"]["warmth"] == described
