"""A tiny HTTP server on 127.0.0.1 that replays recorded provider payloads.

The backend tests point the real ``openai`` and ``anthropic`` SDKs at it (``base_url``),
so everything from request serialization to SSE parsing and error mapping runs for real;
only the network peer is canned. Each queued reply is served once, in order; every
request is recorded with its path, headers and JSON body.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PAYLOADS = Path(__file__).parent / "data" / "provider_payloads"


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    disconnect: bool = False  # close the socket without answering
    delay: float = 0.0  # seconds to wait before answering (timeouts)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class ReplayServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:  # the model list (``GET /v1/models``)
                self.do_POST(method="GET")

            def do_POST(self, method: str = "POST") -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                server.requests.append(
                    Recorded(
                        method, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                    )
                )
                reply = (
                    server.replies.popleft()
                    if server.replies
                    else Reply(500, b'{"error": {"message": "replay server: no reply queued"}}')
                )
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.disconnect:
                    self.close_connection = True
                    self.connection.close()
                    return
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(reply.body)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                # The client may have given up first (timeout tests).
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(reply.body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ReplayServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # Queueing helpers -------------------------------------------------------------
    def json(self, payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.replies.append(Reply(status, json.dumps(payload).encode(), dict(headers or {})))

    def text(self, text: str, status: int, content_type: str = "text/html") -> None:
        self.replies.append(Reply(status, text.encode(), content_type=content_type))

    def file(self, relpath: str, status: int = 200, headers: dict[str, str] | None = None) -> None:
        """Queue a recorded payload: ``.json`` as JSON, ``.sse`` as an event stream."""
        path = PAYLOADS / relpath
        if path.suffix == ".sse":
            self.replies.append(
                Reply(status, path.read_bytes(), dict(headers or {}), "text/event-stream")
            )
        else:
            self.replies.append(Reply(status, path.read_bytes(), dict(headers or {})))

    def disconnect(self) -> None:
        self.replies.append(Reply(disconnect=True))

    def slow(self, seconds: float) -> None:
        self.replies.append(Reply(body=b"{}", delay=seconds))

    @property
    def last(self) -> Recorded:
        return self.requests[-1]


def load_payload(relpath: str) -> Any:
    return json.loads((PAYLOADS / relpath).read_text(encoding="utf-8"))


def running_server() -> Iterator[ReplayServer]:
    """Body of the ``replay`` fixture each test module declares (``yield from`` this)."""
    server = ReplayServer().start()
    try:
        yield server
    finally:
        server.close()
