"""Export the trace of a stored team over OTLP/HTTP and show what the collector got.

    python examples/otel_trace.py TEAM_ID [STORE]

With ``OTEL_EXPORTER_OTLP_ENDPOINT`` set, the spans go to that collector (the
OpenTelemetry Collector, Jaeger, Tempo, Phoenix...). Without it, the example starts
the small OTLP/HTTP receiver of ``akgentic_otel.testing`` on 127.0.0.1 as a stand-in
collector, sends it the spans over real HTTP and prints every span it decoded,
indented under its parent, with its GenAI attributes. Needs ``akgentic-otel``; see
docs/observability.md. The store defaults to ``$AKGENTIC_STORE``, else
``sqlite:///.akgentic/akgentic.db``.
"""

from __future__ import annotations

import os
import sys

from akgentic_otel.cli import TraceError, load_trace
from akgentic_otel.export import ExportError, export_otlp, team_resource
from akgentic_otel.testing import OTLPReceiver, ReceivedSpan

#: The attributes printed after a span's name, when it has them.
SHOWN = (
    "gen_ai.request.model",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.tool.name",
    "akgentic.message.from",
)


def print_tree(spans: list[ReceivedSpan]) -> None:
    """Each trace, then each span under its parent (as the collector received them)."""
    children: dict[str, list[ReceivedSpan]] = {}
    for span in sorted(spans, key=lambda s: s.start_ns):
        children.setdefault(span.parent_span_id, []).append(span)

    def show(span: ReceivedSpan, depth: int) -> None:
        shown = ", ".join(f"{k}={span.attributes[k]}" for k in SHOWN if k in span.attributes)
        print(f"{'  ' * depth}{span.name}" + (f"  [{shown}]" if shown else ""))
        for child in children.get(span.span_id, []):
            show(child, depth + 1)

    for root in children.get("", []):
        print(f"trace {root.trace_id}")
        show(root, 1)


def main(team_id: str, store: str | None) -> int:
    """Export the team's trace; print what the stand-in collector received."""
    try:
        uid, name, records = load_trace(team_id, store)
    except TraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    resource = team_resource(uid, name)
    collector = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    try:
        if collector:
            sent = export_otlp(records, resource, collector)
            print(f"exported {sent} spans of team {uid} to {collector}")
            return 0
        with OTLPReceiver() as receiver:
            sent = export_otlp(records, resource, receiver.url)
            print_tree(receiver.wait_for(lambda spans: len(spans) >= sent))
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None))
