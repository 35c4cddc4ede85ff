"""A small OTLP/HTTP trace receiver for tests: real protobuf over real HTTP on 127.0.0.1.

:class:`OTLPReceiver` listens on a free port, accepts ``POST /v1/traces`` with an
``ExportTraceServiceRequest`` (binary protobuf, gzip or not, or OTLP JSON), decodes
it with ``opentelemetry-proto`` and keeps every span as a :class:`ReceivedSpan`::

    with OTLPReceiver() as receiver:
        export_otlp(records, resource, receiver.endpoint)
        receiver.wait_for(lambda spans: len(spans) >= 3)
        assert receiver.spans[0].name == "invoke_workflow my-team"

``status`` makes it answer every export with that HTTP status (a failing collector);
``delay`` makes it wait that many seconds before answering (a slow one).
Only the standard library and ``opentelemetry-proto`` are used.
"""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["OTLPReceiver", "ReceivedSpan", "decode_request"]

#: OTLP span kinds by their protobuf number.
_KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_STATUS = {0: "unset", 1: "ok", 2: "error"}


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as the receiver decoded it: ids in hex, attributes as Python values."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status: str
    status_message: str
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(item) for item in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in any_value.kvlist_value.values}
    return getattr(any_value, kind)


def _attributes(key_values: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in key_values}


def decode_request(body: bytes, content_type: str = "application/x-protobuf") -> list[ReceivedSpan]:
    """The spans of one ``ExportTraceServiceRequest`` body (protobuf, or OTLP JSON)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    if "json" in content_type:
        from google.protobuf.json_format import ParseDict

        data = json.loads(body)
        _ids_to_base64(data)
        ParseDict(data, request)
    else:
        request.ParseFromString(body)
    spans: list[ReceivedSpan] = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    ReceivedSpan(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        name=span.name,
                        kind=_KINDS.get(span.kind, str(span.kind)),
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        attributes=_attributes(span.attributes),
                        status=_STATUS.get(span.status.code, str(span.status.code)),
                        status_message=span.status.message,
                        events=[
                            (event.name, event.time_unix_nano, _attributes(event.attributes))
                            for event in span.events
                        ],
                        resource=resource,
                        scope=scope_spans.scope.name,
                    )
                )
    return spans


def _ids_to_base64(value: Any) -> None:
    """OTLP JSON carries ids in hex; protobuf's JSON parser wants base64."""
    import base64

    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str):
                value[key] = base64.b64encode(bytes.fromhex(item)).decode()
            else:
                _ids_to_base64(item)
    elif isinstance(value, list):
        for item in value:
            _ids_to_base64(item)


class OTLPReceiver:
    """An OTLP/HTTP traces endpoint on 127.0.0.1 that keeps what it is sent."""

    def __init__(self, *, status: int = 200, delay: float = 0.0) -> None:
        self.status = status
        self.delay = delay
        #: Every span received, in arrival order.
        self.spans: list[ReceivedSpan] = []
        #: How many export requests arrived (answered or not).
        self.requests = 0
        self._changed = threading.Condition()
        self._release = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL (what ``OTEL_EXPORTER_OTLP_ENDPOINT`` takes)."""
        if self._server is None:
            raise RuntimeError("the receiver is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def endpoint(self) -> str:
        """The traces URL (``.../v1/traces``)."""
        return f"{self.url}/v1/traces"

    def start(self) -> OTLPReceiver:
        """Listen on a free port of 127.0.0.1, answering from a daemon thread."""
        receiver = self

        class Handler(_Handler):
            owner = receiver

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="otlp-receiver", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening (a delayed answer in progress is released first)."""
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> OTLPReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_for(
        self, predicate: Callable[[list[ReceivedSpan]], object], timeout: float = 10.0
    ) -> list[ReceivedSpan]:
        """The spans once ``predicate(spans)`` holds; AssertionError after ``timeout`` s."""
        with self._changed:
            if not self._changed.wait_for(lambda: predicate(list(self.spans)), timeout):
                raise AssertionError(
                    f"the receiver did not get the expected spans within {timeout} s "
                    f"({len(self.spans)} received)"
                )
            return list(self.spans)

    def clear(self) -> None:
        """Forget what was received."""
        with self._changed:
            self.spans.clear()
            self.requests = 0

    def _received(self, spans: list[ReceivedSpan]) -> None:
        with self._changed:
            self.spans.extend(spans)
            self._changed.notify_all()

    def _counted(self) -> None:
        with self._changed:
            self.requests += 1
            self._changed.notify_all()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a client that gave up on a delayed answer is what the delay is for."""


class _Handler(BaseHTTPRequestHandler):
    owner: OTLPReceiver

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read what was received, not an access log."""

    def do_POST(self) -> None:
        owner = self.owner
        owner._counted()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if owner.delay:
            owner._release.wait(owner.delay)
        if self.path.rstrip("/") != "/v1/traces":
            self._answer(404, b"not an OTLP traces path")
            return
        if owner.status != 200:
            self._answer(owner.status, b"refused by the test receiver")
            return
        encoding = (self.headers.get("Content-Encoding") or "").lower()
        try:
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            spans = decode_request(body, self.headers.get("Content-Type") or "")
        except Exception as exc:  # a malformed payload: the client is told, as a collector does
            self._answer(400, f"cannot decode the request: {exc}".encode())
            return
        owner._received(spans)
        self._answer(200, b"", "application/x-protobuf")

    def _answer(self, status: int, body: bytes, content_type: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
