"""What `hearth serve`'s routes share, in one object: the resident engine and scheduler, the API key,
the metrics, and the errors in OpenAI's envelope. Every route is a module-level function that finds
this state on its app (`state_of`)."""

from __future__ import annotations

import asyncio
import hmac
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request, WebSocket
from fastapi.responses import JSONResponse

from hearth.engine import Engine
from hearth.runtime.scheduler import Scheduler
from hearth.serve.metrics import Metrics
from hearth.serve.shared_engine import SharedEngine

__all__ = ["ApiError", "ServerState", "bad_request", "error", "state_of"]


class ApiError(Exception):
    """An answer other than success: OpenAI's `{"error": {"message", "type", "param", "code"}}`."""

    def __init__(self, status: int, message: str, kind: str, param: str | None = None, code: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.param, self.code = status, message, kind, param, code
        self.headers = headers or {}

    def response(self) -> JSONResponse:
        body = {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}
        return JSONResponse(body, status_code=self.status, headers=self.headers)


def bad_request(message: str, param: str | None = None) -> ApiError:
    return ApiError(400, message, "invalid_request_error", param)


def error(status: int, message: str, param: str | None = None) -> ApiError:
    """An error of `status` with OpenAI's type for it."""
    kind = "not_found_error" if status == 404 else "invalid_request_error"
    return ApiError(status, message, kind if status < 500 else "server_error", param)


@dataclass(kw_only=True)
class ServerState(SharedEngine):
    """The routes' shared state: the engine and scheduler (loaded in the background), the model's
    name, the API key (None: no key asked for) and the metrics."""

    model_name: str = "hearth"
    api_key: str | None = None
    idle_s: float = 600.0  # a realtime transcription session with no client event this long is closed
    metrics: Metrics = field(init=False)
    uploading: asyncio.Lock = field(default_factory=asyncio.Lock)  # voice uploads run one at a time
    priming: set[asyncio.Task[Any]] = field(default_factory=set)  # uploaded voices' vocoder states being made
    methods: dict[str, list[str]] = field(default_factory=dict)  # path -> methods in the OpenAPI document

    def __post_init__(self) -> None:
        self.metrics = Metrics(lambda: self.scheduler.counts() if self.scheduler is not None else {},
                               lambda: self.scheduler.health_report() if self.scheduler is not None else {})

    @property
    def model_names(self) -> list[str]:
        """The names clients may send as `model`: each speaks with this model."""
        return ["tts-1", "tts-1-hd", "gpt-4o-mini-tts", self.model_name]

    def key_ok(self, http: Request | WebSocket, query_ok: bool = False) -> bool:
        """Whether the request carries the API key (always, when none is set). `query_ok`: also as
        `?api_key=` (a browser's WebSocket cannot send headers)."""
        if self.api_key is None:
            return True
        given = http.headers.get("authorization", "")
        token = given[7:] if given.lower().startswith("bearer ") else ""
        if not token and query_ok:
            token = http.query_params.get("api_key", "")
        return hmac.compare_digest(token.encode(), self.api_key.encode())

    def authorize(self, http: Request) -> None:
        if not self.key_ok(http):
            raise ApiError(401, "a valid API key is required: send 'Authorization: Bearer <key>'",
                           "authentication_error", code="invalid_api_key")

    def loaded(self) -> tuple[Engine, Scheduler]:
        """The engine and scheduler, or the error that says why there are none yet (503 while loading)."""
        if self.error is not None:
            raise ApiError(500, f"the model could not be loaded: {self.error}", "server_error")
        if self.engine is None or self.scheduler is None:
            raise ApiError(503, "the model is still loading; try again in a few seconds", "server_error",
                           code="loading", headers={"Retry-After": "5"})
        return self.engine, self.scheduler

    async def run(self, fn: Any, *args: Any) -> Any:  # noqa: ANN401 - whatever fn returns
        """`fn(*args)` on the thread pool, awaited (blocking work never runs on the event loop)."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)


def state_of(http: Request | WebSocket) -> ServerState:
    """The state of the app `http` came to (`hearth.serve.http.create_app` puts it there)."""
    state = http.app.state.hearth
    assert isinstance(state, ServerState)
    return state
