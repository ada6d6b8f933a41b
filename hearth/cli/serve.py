"""`hearth serve`: the OpenAI-compatible speech server (needs the `serve` extra).

The server answers at once (`/health` says 503 "loading") while the model loads and warms up in the
background; a checkpoint that fails to load ends the command with exit code 2. SIGTERM or Ctrl-C
stops it within seconds: requests in flight are cancelled and their responses end.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hearth.checkpoint.loading import DEFAULT_MODEL, Checkpoint, open_checkpoint
from hearth.cli import arguments, listen
from hearth.errors import InputError
from hearth.voices.openai_names import voice_aliases

__all__ = ["add_parsers"]

log = logging.getLogger("hearth")


def add_parsers(sub: Any) -> None:
    serve = sub.add_parser("serve", help="an OpenAI-compatible speech server (POST /v1/audio/speech)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    serve.add_argument("--port", type=arguments.count(0), default=8000, help="port (default 8000; 0 picks a free one)")
    serve.add_argument("--api-key", default=None, help="require 'Authorization: Bearer KEY' on /v1 requests")
    serve.add_argument("--max-queue", type=arguments.count(0), default=16,
                       help="requests that may wait beyond the ones being spoken (default 16); more get 503")
    serve.add_argument("--max-active", type=arguments.count(1), default=4,
                       help="requests spoken in turn, sentence by sentence (default 4)")
    serve.add_argument("--max-batch", type=arguments.count(1), default=None,
                       help="sentences of different requests generated together as one batch (default: "
                            "the one `hearth tune` chose, else 4; 1 generates one at a time)")
    serve.add_argument("--cors", action="append", default=[], metavar="ORIGIN",
                       help="allow browser pages from ORIGIN (repeatable; '*' for any)")
    serve.add_argument("--idle-timeout", type=arguments.seconds(False), default=600.0, metavar="SECONDS",
                       help="a realtime transcription session (/v1/realtime) that sends nothing this long is closed, "
                            "its speech under way transcribed first (default 600)")
    arguments.add_voice_alias(serve)
    arguments.add_lexicon(serve)
    arguments.add_model_group(serve)
    listen.add_hearing_flags(serve)
    serve.set_defaults(run=_serve)

    cluster = sub.add_parser("cluster", help="hearth serve on a Ray cluster: replicas behind Ray Serve's HTTP proxy "
                                             "(needs the 'cluster' extra)")
    cluster.add_argument("--address", default=None,
                         help="the Ray cluster to join (e.g. auto, or ray://HEAD:10001; default: start a local Ray "
                              "on loopback)")
    cluster.add_argument("--host", default="127.0.0.1", help="where Ray's HTTP proxy listens (default: loopback)")
    cluster.add_argument("--port", type=arguments.count(1), default=8000, help="its port (default 8000)")
    cluster.add_argument("--replicas", type=arguments.count(1), default=None,
                         help="a fixed number of replicas (default: autoscale on their queues, 1 to --max-replicas)")
    cluster.add_argument("--max-replicas", type=arguments.count(1), default=4,
                         help="the most replicas when autoscaling")
    cluster.add_argument("--cpus-per-replica", type=arguments.seconds(False), default=1.0,
                         help="CPUs Ray reserves for each replica (default 1)")
    cluster.add_argument("--api-key", default=None, help="require 'Authorization: Bearer KEY' on /v1 requests")
    cluster.add_argument("--max-queue", type=arguments.count(0), default=16, help="per replica, as for hearth serve")
    cluster.add_argument("--max-active", type=arguments.count(1), default=4, help="per replica, as for hearth serve")
    cluster.add_argument("--max-batch", type=arguments.count(1), default=None, help="per replica, as for hearth serve")
    cluster.add_argument("--cors", action="append", default=[], metavar="ORIGIN")
    arguments.add_voice_alias(cluster)
    listen.add_hearing_flags(cluster)
    arguments.add_model_group(cluster)
    cluster.set_defaults(run=_cluster)

    load = sub.add_parser("loadtest", help="many clients against a running `hearth serve` or `hearth wyoming`: "
                                           "latency, RTF, 503s")
    load.add_argument("url", help="the server: http://127.0.0.1:8000 (hearth serve) or tcp://127.0.0.1:10200 "
                                  "(hearth wyoming: streamed exchanges, first audio from the first sentence's end)")
    load.add_argument("--clients", type=arguments.count(1), default=1, help="clients at once (default 1)")
    load.add_argument("--requests", type=arguments.count(1), default=5, help="requests per client, one after another")
    load.add_argument("--voice", default="ryan")
    load.add_argument("--api-key", default=None)
    load.add_argument("--max-new-tokens", type=arguments.count(1), default=None,
                      help="per sentence (default: the model's)")
    load.add_argument("--words-per-second", type=arguments.seconds(False), default=15.0,
                      help="Wyoming: the pace of the streamed text, word by word (default 15, an LLM writing)")
    load.add_argument("--duration", type=arguments.seconds(False), default=None,
                      help="go on for this many seconds (then --requests is not a limit)")
    load.add_argument("--formats", default="pcm",
                      help="response formats, rotated: e.g. pcm,mp3,opus,wav,flac,aac (default pcm)")
    load.add_argument("--cancel", type=float, default=0.0,
                      help="the share of requests (0-1) that leave after their first audio")
    load.add_argument("--hostile", type=arguments.count(0), default=0,
                      help="extra clients sending malformed, oversized, stalled and dropped requests")
    load.add_argument("--json", action="store_true", help="print one JSON object")
    load.set_defaults(run=_loadtest)


def _loadtest(args: argparse.Namespace) -> int:
    from hearth.tools.loadtest import LoadSettings, main_loadtest

    if args.max_new_tokens is not None and args.url.startswith("tcp://"):
        raise InputError("--max-new-tokens is for http:// servers; start `hearth wyoming` with it instead")
    from hearth.serve.encoders import FORMATS

    formats = tuple(f.strip() for f in args.formats.split(",") if f.strip())
    if not formats or set(formats) - set(FORMATS):
        raise InputError(f"--formats takes a comma-separated list of {', '.join(FORMATS)}; got {args.formats!r}")
    if not 0 <= args.cancel <= 1:
        raise InputError(f"--cancel is a share from 0 to 1, got {args.cancel}")
    settings = LoadSettings(args.url, args.clients, args.requests, args.voice, args.api_key, args.max_new_tokens,
                            words_per_second=args.words_per_second, duration_s=args.duration, formats=formats,
                            cancel=args.cancel, hostile=args.hostile)
    try:
        return main_loadtest(settings, args.json)
    except ValueError as e:
        raise InputError(str(e)) from None


def _replicas_read(hearing: dict[str, Any]) -> dict[str, Any]:
    """The listening models as every replica reads them: a local directory by its absolute path."""
    out = dict(hearing)
    for key in ("listen", "aligner"):
        if out.get(key) is not None and Path(out[key]).is_dir():
            out[key] = str(Path(out[key]).resolve())
    return {} if out.get("listen") is None and out.get("aligner") is None else out


def _cluster(args: argparse.Namespace) -> int:
    if args.address is None:
        # A local Ray on loopback only. Ray picks the machine's outward address for its own
        # services unless told it is not to form a cluster (read once, when ray is imported).
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray  # noqa: F401
        from ray import serve  # noqa: F401

        from hearth.serve.cluster import ClusterSettings, run
    except ImportError as e:
        raise InputError(f"hearth cluster needs the 'cluster' extra ({e.name} is missing): "
                         "pip install 'hearth-tts[cluster]'") from None
    checkpoint = _checked(args, "cluster")  # here too: a wrong path fails before Ray starts
    name = args.model if args.model != DEFAULT_MODEL else "qwen3-tts-0.6b-customvoice"
    settings = ClusterSettings(
        model=str(checkpoint.path) if args.address is None else str(args.model),
        model_name=str(name).rstrip("/").rsplit("/", 1)[-1], flags=arguments.load_flags(args), replicas=args.replicas,
        max_replicas=args.max_replicas, cpus_per_replica=args.cpus_per_replica, max_active=args.max_active,
        max_queue=args.max_queue, max_batch=args.max_batch, api_key=args.api_key, cors=tuple(args.cors),
        hearing=_replicas_read(listen.hearing_models(args)),
    )
    with contextlib.redirect_stdout(sys.stderr):  # Ray reports on stdout; this command prints no data
        run(settings, args.address, args.host, args.port, threading.Event())
    log.info("stopped")
    return 0


def _checked(args: argparse.Namespace, what: str) -> Checkpoint:
    """A server's arguments checked before anything loads (the checkpoint's JSON only): backend
    options, the model's path, voice aliases, the API key; a warning where anyone may reach it."""
    arguments.check_backend(args)
    checkpoint = open_checkpoint(args.model)
    voice_aliases(checkpoint.config, args.voice_alias)
    if args.api_key is not None and not args.api_key.strip():
        raise InputError("--api-key is empty; give a key, or leave the option out")
    if not _is_loopback(args.host) and args.api_key is None:
        log.warning("listening on %s without --api-key: anyone who can reach this address can use the %s",
                    args.host, what)
    return checkpoint


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from hearth.serve.http import ServerState, create_app
    except ImportError as e:
        raise InputError(f"hearth serve needs the 'serve' extra ({e.name} is missing): "
                         "pip install 'hearth-tts[serve]'") from None
    checkpoint = _checked(args, "server")
    from hearth.serve.hearing import HearingModels

    hearing = HearingModels(**listen.hearing_models(args))
    sock = _bind(args.host, args.port)
    port = sock.getsockname()[1]
    name = args.model if args.model != DEFAULT_MODEL else "qwen3-tts-0.6b-customvoice"
    state = ServerState(model_name=str(name).rstrip("/").rsplit("/", 1)[-1], idle_s=args.idle_timeout)
    app = create_app(state, api_key=args.api_key, cors_origins=args.cors)
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=3)

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn's own re-raises the signal after shutting down, which kills the process
            # before it has closed the engine; here the command ends normally, with code 0.
            signals = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in signals}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

        def handle_exit(self, sig: int, frame: Any) -> None:
            # Streams in flight end now (their requests are cancelled), not after the grace period.
            if state.scheduler is not None:
                threading.Thread(target=state.scheduler.close, name="hearth-stop", daemon=True).start()
            super().handle_exit(sig, frame)

    server = Server(config)
    failed: list[BaseException] = []

    def on_failure(e: BaseException) -> None:
        failed.append(e)
        server.should_exit = True

    state.load_in_background(checkpoint.path, arguments.load_flags(args), args.max_active, args.max_queue, on_failure,
                             max_batch=args.max_batch, hearing=hearing)
    host = f"[{args.host}]" if ":" in args.host else args.host
    log.info("listening on http://%s:%d (the model is loading; GET /health says when it is ready)", host, port)
    try:
        server.run(sockets=[sock])
    finally:
        state.close()
    if failed:
        raise failed[0]
    log.info("stopped")
    return 0


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything loads (a busy port is reported at once)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port} ({e.strerror}); choose another --port or --host") from None
    sock.listen(128)
    return sock
