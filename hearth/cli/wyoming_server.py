"""`hearth wyoming`: a streaming Wyoming server for Home Assistant (needs the `wyoming` extra).

The server listens at once and answers `describe` from the checkpoint's config while the model
loads; a synthesis sent meanwhile starts when the model is ready. A checkpoint that fails to load
ends the command with exit code 2. SIGTERM or Ctrl-C stops it within seconds: syntheses in flight
are cancelled and their connections closed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from hearth.checkpoint.loading import DEFAULT_MODEL, open_checkpoint
from hearth.cli import arguments, listen
from hearth.errors import InputError
from hearth.voices.openai_names import voice_aliases
from hearth.voices.rules import VoiceRules

__all__ = ["add_parsers"]

log = logging.getLogger("hearth")


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("wyoming", help="a streaming Wyoming server for Home Assistant (tcp, unix or stdio)")
    p.add_argument("--uri", default="tcp://127.0.0.1:10200",
                   help="where to listen: tcp://HOST:PORT (default tcp://127.0.0.1:10200; use 0.0.0.0 for other "
                        "machines), unix://PATH or stdio://")
    p.add_argument("--zeroconf", nargs="?", const="", default=None, metavar="NAME",
                   help="announce the server for Home Assistant's discovery (tcp only; NAME defaults to the MAC)")
    # Every synthesis's options (Wyoming's events carry none of them): hearth.options.FIELDS' resident
    # rows (seed, max-new-tokens, instruct, which a VoiceDesign checkpoint requires, speed, normalize).
    arguments.add_option_flags(p.add_argument_group("every synthesis"), resident=True)
    arguments.add_lexicon(p)
    arguments.add_playback(p)
    p.add_argument("--max-active", type=arguments.count(1), default=4, help="syntheses spoken in turn (default 4)")
    p.add_argument("--max-batch", type=arguments.count(1), default=None,
                   help="sentences of different syntheses generated together as one batch (default: the one "
                        "`hearth tune` chose, else 4; 1 generates one at a time)")
    p.add_argument("--max-queue", type=arguments.count(0), default=16,
                   help="syntheses that may wait beyond those (default 16); more get a 'busy' error")
    p.add_argument("--voice", default=None,
                   help="the voice of a synthesis that names none (default: the model's first; see hearth voices)")
    p.add_argument("--language", default=None,
                   help="the language of a synthesis that names none: a Home Assistant code (en, de-DE) or the "
                        "model's name (english) (default: auto)")
    arguments.add_voice_alias(p)
    arguments.add_model_group(p)
    listen.add_hearing_flags(p)
    p.set_defaults(run=_wyoming)


def _parse_uri(uri: str) -> tuple[str, str, int | str | None]:
    """("tcp", host, port), ("unix", path, None) or ("stdio", "", None)."""
    u = urlparse(uri)
    if u.scheme == "stdio":
        return "stdio", "", None
    if u.scheme == "unix":
        path = (u.netloc + u.path) if u.netloc else u.path
        if not path:
            raise InputError(f"--uri {uri!r}: give a socket path, e.g. unix:///run/hearth.sock")
        if not Path(path).parent.is_dir():
            raise InputError(f"--uri {uri!r}: the folder {Path(path).parent} does not exist")
        return "unix", path, None
    if u.scheme == "tcp":
        try:
            port = u.port
        except ValueError:
            port = None
        if not u.hostname or port is None:
            raise InputError(f"--uri {uri!r}: give a host and a port, e.g. tcp://0.0.0.0:10200")
        return "tcp", u.hostname, port
    raise InputError(f"--uri {uri!r}: use tcp://HOST:PORT, unix://PATH or stdio://")


def _wyoming(args: argparse.Namespace) -> int:
    try:
        import wyoming  # noqa: F401

        from hearth.serve.wyoming import WyomingState
    except ImportError as e:
        raise InputError(f"hearth wyoming needs the 'wyoming' extra ({e.name} is missing): "
                         "pip install 'hearth-tts[wyoming]'") from None
    arguments.check_backend(args)
    kind, where, port = _parse_uri(args.uri)
    if args.zeroconf is not None and kind != "tcp":
        raise InputError("--zeroconf announces a tcp:// server; it does not apply to " + args.uri)
    checkpoint = open_checkpoint(args.model)  # JSON only: a wrong path fails now
    aliases = voice_aliases(checkpoint.config, args.voice_alias)  # a bad alias fails now too
    try:  # (Wyoming carries no instruction: the server's is every synthesis's)
        VoiceRules(checkpoint.config).check_instruct(args.instruct)
    except InputError as e:
        raise InputError(f"--instruct: {e}") from None
    name = args.model if args.model != DEFAULT_MODEL else "0.6B CustomVoice"
    service = WyomingState(config=checkpoint.config, model_name=str(name).rstrip("/").rsplit("/", 1)[-1],
                           options=arguments.option_values(args), voice_aliases=aliases, playback=args.playback)
    try:  # a wrong default voice or language fails now, not at the first synthesis
        service.default_voice, service.default_language = service.defaults(args.voice, args.language)
    except InputError as e:
        raise InputError(f"--{e.param or 'voice'}: {e}") from None
    service.hearing_models = listen.hearing_models(args)  # (checked now: JSON only)
    if args.listen is not None:  # `describe` lists an asr program beside tts, also while loading
        from hearth.checkpoint.asr_loading import open_asr_checkpoint
        from hearth.listen.languages import LANGUAGES

        config = open_asr_checkpoint(args.listen, expect="asr").config
        service.listening = (str(args.listen).rstrip("/").rsplit("/", 1)[-1], config.support_languages or LANGUAGES)
    try:
        return asyncio.run(_run(args, service, checkpoint.path, kind, where, port))
    finally:
        service.close()


async def _run(args: argparse.Namespace, service: Any, path: Path, kind: str, where: str, port: Any) -> int:
    from wyoming.event import async_get_stdin, async_get_stdout
    from wyoming.server import AsyncServer, AsyncTcpServer, AsyncUnixServer

    from hearth.serve.wyoming import Session

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    def session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Session:
        return Session(reader, writer, service)

    server: AsyncServer | None = None
    stdio: asyncio.Task[None] | None = None
    if kind == "stdio":
        stdio = asyncio.create_task(session(await async_get_stdin(), await async_get_stdout()).run())
        stdio.add_done_callback(lambda _: stop.set())  # the client closed stdin
        shown = "stdio://"
    else:
        server = AsyncTcpServer(where, port) if kind == "tcp" else AsyncUnixServer(where)
        try:
            await server.start(session)
        except OSError as e:
            raise InputError(f"cannot listen on {args.uri}: {e.strerror or e}") from None
        if kind == "tcp":
            listening: Any = getattr(server, "_server", None)  # port 0: the one the system picked
            if port == 0 and listening is not None:
                port = listening.sockets[0].getsockname()[1]
            host = f"[{where}]" if ":" in where else where
            shown = f"tcp://{host}:{port}"
        else:
            shown = f"unix://{where}"

    failed: list[BaseException] = []

    def on_failure(e: BaseException) -> None:
        failed.append(e)
        loop.call_soon_threadsafe(stop.set)

    from hearth.serve.hearing import HearingModels

    service.load_in_background(path, arguments.load_flags(args), args.max_active, args.max_queue, on_failure,
                               max_batch=args.max_batch, hearing=HearingModels(**service.hearing_models))
    log.info("listening on %s (the model is loading; describe is answered already)", shown)
    announcer = await _announce(args.zeroconf, where, port) if args.zeroconf is not None else None
    try:
        await stop.wait()
    finally:
        log.info("stopping")
        if service.scheduler is not None:  # streams in flight end now
            await loop.run_in_executor(None, service.scheduler.close)
        for s in list(service.sessions):
            await s.stop()
        if server is not None:
            await server.stop()
        if stdio is not None:
            stdio.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await stdio
        if announcer is not None:
            with contextlib.suppress(Exception):
                await announcer.async_close()
    if failed:
        raise failed[0]
    log.info("stopped")
    return 0


async def _announce(name: str, host: str, port: int) -> Any:
    """Register `_wyoming._tcp.local.` as Home Assistant's discovery expects; the zeroconf handle."""
    import socket
    import uuid

    try:
        from zeroconf import InterfaceChoice, IPVersion
        from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf
    except ImportError:
        raise InputError("--zeroconf needs the zeroconf package: pip install 'hearth-tts[wyoming]'") from None
    announced_on_all = host in ("0.0.0.0", "::", "")  # else only on the interface the server listens on
    if announced_on_all:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.connect(("224.0.0.251", 5353))  # the mDNS group: the address on the LAN side
                host = probe.getsockname()[0]
            except OSError:
                raise InputError("--zeroconf: this machine has no network address to announce") from None
    try:
        address = socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
    except OSError:
        raise InputError(f"--zeroconf needs an IP address to announce, got {host!r}") from None
    if host.startswith("127.") or host == "::1":
        log.warning("--zeroconf announces %s, a loopback address: Home Assistant on another machine cannot reach "
                    "it; listen on tcp://0.0.0.0:%d", host, port)
    name = name or "hearth-" + f"{uuid.getnode():012x}"
    try:
        zc = AsyncZeroconf(ip_version=IPVersion.V6Only if ":" in host else IPVersion.V4Only,
                           interfaces=InterfaceChoice.All if announced_on_all else [host])
        info = AsyncServiceInfo("_wyoming._tcp.local.", f"{name}._wyoming._tcp.local.", addresses=[address],
                                port=port, server=f"{name}.local.")
        await zc.async_register_service(info)
    except OSError as e:  # no multicast here (a container's network, an emulator): serve unannounced
        log.warning("--zeroconf could not announce the server (%s); it serves all the same: add the Wyoming "
                    "integration by hand, host %s, port %d", e, host, port)
        return None
    log.info("announced as %s._wyoming._tcp.local. at %s:%d", name, host, port)
    return zc
