"""A fake OpenAI-compatible LLM server for tests: streams scripted answers at a set token rate.

`POST /v1/chat/completions` with `stream: true` answers with server-sent events, one token every
1/rate seconds (tokens are pieces of up to four characters, as an LLM's are roughly), then
`data: [DONE]`. Each request is recorded: its body, how many tokens were sent, and whether the
client closed the connection before the end. `GET /v1/models` lists one model.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def tokens_of(text: str) -> list[str]:
    return re.findall(r"\s?\S{1,4}|\s+", text)


@dataclass
class Call:
    body: dict
    sent: int = 0
    total: int = 0
    closed_early_at: float | None = None  # monotonic time the client was found gone
    done: threading.Event = field(default_factory=threading.Event)


class FakeLLM:
    def __init__(self, answers: list[str], rate: float):
        self.answers = list(answers)
        self.rate = rate
        self.calls: list[Call] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                if self.path.rstrip("/") != "/v1/models":
                    self.send_error(404)
                    return
                body = json.dumps({"object": "list", "data": [{"id": "fake-llm", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                call = Call(body)
                owner.calls.append(call)
                answer = owner.answers[min(len(owner.calls), len(owner.answers)) - 1]
                pieces = tokens_of(answer)
                call.total = len(pieces)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for piece in pieces:
                        time.sleep(1.0 / owner.rate)
                        event = {"choices": [{"index": 0, "delta": {"content": piece}}]}
                        self._chunk(f"data: {json.dumps(event)}\n\n".encode())
                        call.sent += 1
                    self._chunk(b"data: [DONE]\n\n")
                    self._chunk(b"")
                except (BrokenPipeError, ConnectionResetError, OSError):
                    call.closed_early_at = time.monotonic()
                finally:
                    call.done.set()

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeLLM:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
