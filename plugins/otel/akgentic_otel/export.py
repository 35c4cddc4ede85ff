"""Span records to OpenTelemetry: SDK spans, OTLP JSON, and an export over OTLP/HTTP.

:func:`readable_spans` turns :class:`~akgentic_otel.mapping.SpanRecord` s into the
SDK's ``ReadableSpan`` with the records' own ids and times (no tracer is involved,
so nothing random or clock-based enters); the OTLP/HTTP exporter and the SDK's
OTLP encoder take them from there.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from akgentic_otel.mapping import SpanRecord

__all__ = [
    "DEFAULT_TIMEOUT",
    "ExportError",
    "export_otlp",
    "otlp_json",
    "readable_spans",
    "team_resource",
    "traces_endpoint",
]

#: Seconds one export may take before it is reported as failed (the exporter's own bound).
DEFAULT_TIMEOUT = 10.0
#: Spans per OTLP request: far below the exporter's 64 MiB request limit.
_BATCH = 2000
_SCOPE_NAME = "akgentic_otel"
_EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_KINDS = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}


class ExportError(RuntimeError):
    """An export that did not reach the OTLP endpoint; the message says why, in one line."""


@functools.cache
def _scope() -> InstrumentationScope:
    # Cached: reading the package's version parses its metadata file, ~0.5 ms, and a
    # live subscriber asks on every hand-over.
    try:
        release = version("akgentic-otel")
    except PackageNotFoundError:  # run from a source tree without an install
        release = "0"
    return InstrumentationScope(_SCOPE_NAME, release)


def team_resource(team_id: UUID, team_name: str = "") -> Resource:
    """The resource of a team's spans: ``service.name`` (``OTEL_SERVICE_NAME`` or akgentic)."""
    attributes: dict[str, str] = {
        "service.name": os.environ.get("OTEL_SERVICE_NAME") or "akgentic",
        "akgentic.team.id": str(team_id),
    }
    if team_name:
        attributes["akgentic.team.name"] = team_name
    created = Resource.create(attributes)  # adds OTEL_RESOURCE_ATTRIBUTES and the SDK's own
    # The SDK draws a random service.instance.id; a trace exported twice must be identical.
    kept = {k: v for k, v in created.attributes.items() if k != "service.instance.id"}
    return Resource(kept, created.schema_url)


def readable_spans(records: Sequence[SpanRecord], resource: Resource) -> list[ReadableSpan]:
    """The SDK spans of ``records``, ids and times as recorded."""
    scope = _scope()
    spans: list[ReadableSpan] = []
    for record in records:
        context = SpanContext(record.trace_id, record.span_id, False, _SAMPLED)
        parent = (
            None
            if record.parent_id is None
            else SpanContext(record.trace_id, record.parent_id, False, _SAMPLED)
        )
        attributes: dict[str, Any] = dict(record.attributes)
        if not record.complete:
            attributes["akgentic.span.complete"] = False
        status = Status(StatusCode.UNSET)
        if record.error is not None:
            attributes["error.type"] = record.error
            status = Status(StatusCode.ERROR, record.error_message or record.error)
        events = [Event(e.name, dict(e.attributes), e.time_ns) for e in record.events]
        spans.append(
            ReadableSpan(
                record.name,
                context=context,
                parent=parent,
                resource=resource,
                attributes=attributes,
                events=events,
                kind=_KINDS.get(record.kind, SpanKind.INTERNAL),
                status=status,
                start_time=record.start_ns,
                end_time=max(record.end_ns, record.start_ns),
                instrumentation_scope=scope,
            )
        )
    return spans


def _hex_ids(value: Any) -> Any:
    """OTLP JSON writes trace and span ids as hex, where protobuf's JSON writes base64."""
    import base64

    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str):
                out[key] = base64.b64decode(item).hex()
            else:
                out[key] = _hex_ids(item)
        return out
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    return value


def otlp_json(records: Sequence[SpanRecord], resource: Resource) -> dict[str, Any]:
    """The records as one OTLP/JSON ``ExportTraceServiceRequest`` (what a collector reads)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = encode_spans(readable_spans(records, resource))
    data = MessageToDict(request, use_integers_for_enums=True)
    result: dict[str, Any] = _hex_ids(data)
    return result


def traces_endpoint(url: str) -> str:
    """The traces URL of an OTLP/HTTP endpoint: a base URL gets ``/v1/traces`` appended."""
    url = url.strip()
    if not url.startswith(("http://", "https://")):
        raise ExportError(f"not an OTLP/HTTP endpoint (http:// or https://): {url!r}")
    if url.rstrip("/").endswith("/v1/traces"):
        return url
    return url.rstrip("/") + "/v1/traces"


class _LastProblem(logging.Handler):
    """Keeps the last warning the exporter logged: the cause an error line reports."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _quiet_exporter() -> Iterator[_LastProblem]:
    """Collect the exporter's warnings instead of printing them (the caller reports one)."""
    logger = logging.getLogger(_EXPORTER_LOGGER)
    handler = _LastProblem()
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


_CAUSES = (
    "Connection refused",
    "Name or service not known",
    "Temporary failure in name resolution",
    "timed out",
)


def _cause(messages: list[str], url: str, timeout: float) -> str:
    """Why an export failed, in words a reader can act on.

    The exporter's warnings say it when it had time to retry; otherwise a single
    connection attempt tells a refused port and an unknown host from a slow server.
    """
    for text in messages:
        for marker in _CAUSES:
            if marker in text:
                return marker.lower()
    for text in messages:
        if "code" in text.lower() and "Failed to export" in text:
            return text.splitlines()[0][:200]
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=min(timeout, 2.0)):
            pass
    except ConnectionRefusedError:
        return "connection refused"
    except socket.gaierror:
        return "name or service not known"
    except OSError as exc:
        return str(exc) or type(exc).__name__
    return f"timed out: no answer within {timeout:g} s"


def export_otlp(
    records: Sequence[SpanRecord],
    resource: Resource,
    endpoint: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> int:
    """Send the records to an OTLP/HTTP endpoint; the number of spans sent.

    Each request is bounded by ``timeout`` seconds, retries included (the exporter's
    own bound), so an unreachable endpoint fails in bounded time with
    :class:`ExportError` naming the endpoint and the cause.
    """
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    url = traces_endpoint(endpoint)
    spans = readable_spans(records, resource)
    exporter = OTLPSpanExporter(endpoint=url, timeout=timeout)
    try:
        with _quiet_exporter() as problem:
            for start in range(0, len(spans), _BATCH):
                result = exporter.export(spans[start : start + _BATCH])
                if result is not SpanExportResult.SUCCESS:
                    raise ExportError(
                        f"could not export spans to {url}: {_cause(problem.messages, url, timeout)}"
                    )
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]  # unannotated in the SDK
    return len(spans)
