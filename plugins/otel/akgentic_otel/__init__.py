"""OpenTelemetry GenAI traces of akgentic teams: ``akgentic team trace ID``, and live export.

See ``docs/observability.md``. :mod:`akgentic_otel.mapping` turns a team's stored log
into span records (a pure function, no OpenTelemetry import); :mod:`akgentic_otel.export`
sends them over OTLP/HTTP or prints them as OTLP JSON; :mod:`akgentic_otel.testing` is
a small OTLP/HTTP receiver for tests.
"""
