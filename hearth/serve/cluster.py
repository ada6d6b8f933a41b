"""`hearth cluster`: `hearth serve` scaled out on Ray Serve (the `cluster` extra).

Each replica is a Ray actor holding one engine and its scheduler, behind the very app `hearth
serve` runs (same endpoints, same error envelope, the page and the WebSockets too; with `--listen`
each replica also transcribes, whole recordings and live); Ray's HTTP proxy
in front spreads requests over the replicas and streams the responses through. Replicas are a
fixed number, or autoscaled on their queues: Ray counts each replica's requests in flight (being
spoken plus waiting in its scheduler) and adds a replica when they pass `--max-active` on average.

Every response carries `X-Hearth-Replica`, the replica that served it. Ray Serve's health check
asks each replica what its `/health` says: a replica whose worker is down or restarting fails it
(Ray stops sending it requests and replaces it if it stays so), as does one whose worker died too
often to be started again.
"""

from __future__ import annotations

import logging
import signal
import threading
from dataclasses import dataclass, field
from typing import Any

from hearth.platform.privacy import quiet_local_ray
from hearth.platform.process import cache_dir

__all__ = ["ClusterSettings", "application"]

log = logging.getLogger("hearth")


@dataclass(frozen=True)
class ClusterSettings:
    model: str  # a directory every node can read, or a hub id each node downloads
    model_name: str = "hearth"
    flags: dict[str, Any] = field(default_factory=dict)  # backend options, as for `hearth serve`
    replicas: int | None = 2  # None: autoscale from 1 to max_replicas
    max_replicas: int = 4
    cpus_per_replica: float = 1.0
    max_active: int = 4
    max_queue: int = 16
    max_batch: int | None = None
    api_key: str | None = None
    cors: tuple[str, ...] = ()
    hearing: dict[str, Any] = field(default_factory=dict)  # listening models (HearingModels' fields), as serve's


_replica_state: list[Any] = []  # in a replica's process: its ServerState, for the health check


def _check_health(_: Any) -> None:  # noqa: ANN401 - Ray Serve's health check, a method of the deployment
    if _replica_state:
        status, body = _replica_state[0].health()
        if status != 200:
            raise RuntimeError(f"the replica is {body.get('status')}: {body.get('reason') or body.get('error')}")


def _build_app(s: ClusterSettings) -> Any:  # noqa: ANN401 - a FastAPI app
    """Runs in each replica as it starts: load the engine (the replica is ready when it is), then
    the app of `hearth serve`."""
    from ray import serve

    from hearth.serve.hearing import HearingModels
    from hearth.serve.http import ServerState, create_app

    state = ServerState(model_name=s.model_name)
    _replica_state[:] = [state]
    failed: list[BaseException] = []
    state.load_in_background(s.model, s.flags, s.max_active, s.max_queue, failed.append, max_batch=s.max_batch,
                             hearing=HearingModels(**s.hearing) if s.hearing else None)
    state.ready.wait()
    if failed:
        raise RuntimeError(f"the replica could not load {s.model}: {failed[0]}")
    app = create_app(state, api_key=s.api_key, cors_origins=list(s.cors))
    replica = serve.get_replica_context().replica_id.unique_id

    @app.middleware("http")
    async def name_the_replica(request: Any, call_next: Any) -> Any:  # noqa: ANN401
        response = await call_next(request)
        response.headers["X-Hearth-Replica"] = replica
        return response

    log.info("replica %s ready", replica)
    return app


def application(s: ClusterSettings) -> Any:  # noqa: ANN401 - a Ray Serve application
    """The Ray Serve application: `serve.run(application(settings))`."""
    from ray import serve

    options: dict[str, Any] = {
        "name": "hearth",
        # A replica takes what its scheduler admits; beyond that Ray holds requests at the proxy.
        "max_ongoing_requests": s.max_active + s.max_queue,
        "ray_actor_options": {"num_cpus": s.cpus_per_replica},
        "health_check_period_s": 10,
    }
    if s.replicas is None:
        options["autoscaling_config"] = {"min_replicas": 1, "max_replicas": s.max_replicas,
                                         "target_ongoing_requests": s.max_active}
    else:
        options["num_replicas"] = s.replicas

    def build() -> Any:  # noqa: ANN401
        return _build_app(s)

    ingress = serve.ingress(build)(type("Hearth", (), {"check_health": _check_health}))
    return serve.deployment(**options)(ingress).bind()


def run(s: ClusterSettings, address: str | None, host: str, port: int, stop: threading.Event) -> None:
    """Connect to the Ray cluster at `address` (None: start a local one on loopback), deploy, and
    serve until `stop` is set (SIGINT and SIGTERM set it); then take the deployment down (and a
    local Ray with it)."""
    import ray
    from ray import serve

    if address is None:  # (the caller has set RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0: loopback only)
        with quiet_local_ray(cache_dir()):  # a local Ray that reports to nobody
            ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    else:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    for sig in (signal.SIGINT, signal.SIGTERM):  # after ray.init, which installs its own
        signal.signal(sig, lambda *_: stop.set())
    try:
        serve.start(http_options={"host": host, "port": port})
        serve.run(application(s), name="hearth", route_prefix="/", blocking=False)
        shown = f"[{host}]" if ":" in host else host
        log.info("listening on http://%s:%d (%s)", shown, port,
                 f"{s.replicas} replicas" if s.replicas else f"autoscaled, 1 to {s.max_replicas} replicas")
        stop.wait()
        log.info("stopping")
        serve.shutdown()
    finally:
        ray.shutdown()
