"""``EmbeddingsServer``: an OpenAI-compatible ``/v1/embeddings`` endpoint on 127.0.0.1.

For offline tests of real embedding clients (the ``openai`` SDK, or anything that
speaks its wire format). Each input text gets a deterministic unit vector derived
from its SHA-256, at the width the server was started with (or the request's
``dimensions``); every request body is recorded in :attr:`EmbeddingsServer.requests`.
A request whose ``Authorization`` is not ``Bearer <api_key>`` gets a 401.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["EmbeddingsServer", "text_vector"]


def text_vector(text: str, dimension: int) -> list[float]:
    """The server's vector for ``text``: deterministic, unit length."""
    values: list[float] = []
    counter = 0
    while len(values) < dimension:
        block = hashlib.sha256(f"{counter}:{text}".encode("utf-8", "replace")).digest()
        values.extend(v / 2**31 for v in struct.unpack("<8i", block))
        counter += 1
    values = values[:dimension]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


class EmbeddingsServer:
    """Start with ``with EmbeddingsServer(dimension=...) as server:``; use ``server.base_url``."""

    def __init__(self, dimension: int = 1536, api_key: str = "test-key") -> None:
        self.dimension = dimension
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI ``base_url`` of this server (``http://127.0.0.1:<port>/v1``)."""
        if self._server is None:
            raise RuntimeError("the server is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> EmbeddingsServer:
        """Listen on a free loopback port in a daemon thread."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/embeddings":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if self.headers.get("Authorization") != f"Bearer {owner.api_key}":
                    self._send(401, {"error": {"message": "bad key", "type": "auth"}})
                    return
                with owner._lock:
                    owner.requests.append(body)
                inputs = body.get("input")
                texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
                width = int(body.get("dimensions") or owner.dimension)
                data = [
                    {"object": "embedding", "index": i, "embedding": text_vector(str(t), width)}
                    for i, t in enumerate(texts)
                ]
                data.reverse()  # clients must order by index, not by position
                tokens = sum(len(str(t).split()) for t in texts)
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model", ""),
                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                    },
                )

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and join the thread."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def __enter__(self) -> EmbeddingsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
