"""Live export: an event subscriber that sends a running team's spans over OTLP/HTTP.

:class:`OtelSubscriber` feeds each message the team records to the same
:class:`~akgentic_otel.mapping.TraceBuilder` the after-the-fact export uses, so a
span exported live has the id, parent and times ``akgentic team trace`` gives it
later. Finished spans go to the SDK's ``BatchSpanProcessor``, which exports them
from its own thread; the team's thread only maps and enqueues.

An unreachable or slow collector never slows the team: at most ``max_queue_size``
spans wait for export, and a span that finds the queue full is dropped and counted
(:attr:`OtelSubscriber.dropped`) instead of waiting.

The plugin attaches one to every team a manager runs when
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set or the team card has a ``telemetry:`` block
(see :mod:`akgentic_otel.switch`). Code may also attach one itself::

    subscriber = OtelSubscriber.from_env()  # None unless OTEL_EXPORTER_OTLP_ENDPOINT is set
    manager = TeamManager(system, store, subscribers=[subscriber] if subscriber else [])
    ...
    subscriber.shutdown()  # export what is queued, bounded by the exporter's timeout
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from akgentic_otel.export import DEFAULT_TIMEOUT, readable_spans, team_resource, traces_endpoint
from akgentic_otel.mapping import TraceBuilder
from akgentic_otel.switch import CONTENT_ENV_VAR, env_capture_content, env_endpoint

if TYPE_CHECKING:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["CONTENT_ENV_VAR", "OtelSubscriber"]

logger = logging.getLogger(__name__)


class _Counting:
    """Wraps the exporter to settle the subscriber's count of spans in flight."""

    def __init__(self, inner: SpanExporter, settled: Callable[[int, bool], None]) -> None:
        self._inner = inner
        self._settled = settled

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self._inner.export(spans)
        except Exception:  # an exporter bug must not kill the processor's thread
            logger.exception("the OTLP exporter failed")
            result = SpanExportResult.FAILURE
        self._settled(len(spans), result is SpanExportResult.SUCCESS)
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


class OtelSubscriber:
    """Exports the spans of every team it is attached to, live (see the module docstring).

    ``endpoint`` is an OTLP/HTTP base or traces URL; ``exporter`` replaces the
    OTLP/HTTP exporter altogether (any SDK ``SpanExporter``). ``team_name`` names a
    team by id for its root spans (the log does not carry the card's name).
    """

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        exporter: SpanExporter | None = None,
        capture_content: bool = False,
        max_queue_size: int = 2048,
        schedule_delay_millis: int = 500,
        export_timeout: float = DEFAULT_TIMEOUT,
        team_name: Callable[[UUID], str] | None = None,
    ) -> None:
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        if exporter is None:
            if endpoint is None:
                raise ValueError("an OTLP endpoint or an exporter is needed")
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter(endpoint=traces_endpoint(endpoint), timeout=export_timeout)
        self.capture_content = capture_content
        self.max_queue_size = max_queue_size
        self._team_name = team_name
        self._lock = threading.Lock()
        self._builders: dict[UUID, TraceBuilder] = {}
        self._names: dict[UUID, str] = {}
        self._restoring: set[UUID] = set()
        # One resource per team: Resource.create runs the SDK's detectors on a thread
        # pool and reads package metadata, ~0.7 ms each time (it was per hand-over,
        # and doubled an agent round trip of bench/otel_overhead.py).
        self._resources: dict[UUID, Resource] = {}
        self._in_flight = 0
        #: Spans handed to the processor, exported, refused by the collector, and dropped.
        self.queued = 0
        self.exported = 0
        self.failed = 0
        self.dropped = 0
        # The processor never holds more than max_queue_size spans: this subscriber
        # drops (and counts) before handing it one more, so the SDK's silent
        # drop-oldest never happens.
        self._processor = BatchSpanProcessor(
            _Counting(exporter, self._settled),  # type: ignore[arg-type]  # duck-typed exporter
            max_queue_size=max_queue_size,
            max_export_batch_size=min(512, max_queue_size),
            schedule_delay_millis=schedule_delay_millis,
            export_timeout_millis=int(export_timeout * 1000),
        )

    @classmethod
    def from_env(cls, **options: Any) -> OtelSubscriber | None:
        """A subscriber when ``OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT`` is set, else None.

        ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` records content.
        """
        endpoint = env_endpoint()
        if endpoint is None:
            return None
        options.setdefault("capture_content", env_capture_content())
        return cls(endpoint, **options)

    def name_team(self, team_id: UUID, name: str) -> None:
        """Name a team's root spans (``invoke_workflow {name}``) until it stops.

        Call it before the team's first message (the plugin does, when the team
        starts): a team already mapped keeps the name it started with.
        """
        with self._lock:
            self._names[team_id] = name

    # -- EventSubscriber ---------------------------------------------------------
    def on_message(self, msg: Any) -> None:
        """Map one recorded message; hand the spans it finished to the exporter."""
        self.on_messages((msg,))

    def on_messages(self, msgs: Sequence[Any]) -> None:
        """Map a batch of recorded messages (one lock for all of them)."""
        with self._lock:
            done: dict[UUID, list[Any]] = {}
            for msg in msgs:
                team_id = msg.team_id
                if team_id is None:
                    continue
                builder = self._builder(team_id)
                builder.feed(msg)
                finished = builder.take_finished()
                if finished and team_id not in self._restoring:
                    done.setdefault(team_id, []).extend(finished)
            for team_id, records in done.items():
                self._hand_over(self._builders[team_id], records)

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        """Replayed history is mapped (the turns go on) but not exported again."""
        with self._lock:
            if restoring:
                self._restoring.add(team_id)
                self._builders.pop(team_id, None)
            else:
                self._restoring.discard(team_id)

    def on_stop_request(self, team_id: UUID) -> None:
        """Nothing to do before the team stops."""

    def on_stop(self, team_id: UUID) -> None:
        """Hand over what the team left open (ended at its last event); forget the team."""
        with self._lock:
            builder = self._builders.pop(team_id, None)
            if builder is not None and team_id not in self._restoring:
                open_spans = [s for s in builder.spans() if not s.complete]
                self._hand_over(builder, builder.take_finished() + open_spans)
            self._names.pop(team_id, None)
            self._resources.pop(team_id, None)

    # -- export ---------------------------------------------------------------------
    def _builder(self, team_id: UUID) -> TraceBuilder:
        builder = self._builders.get(team_id)
        if builder is None:
            name = self._names.get(team_id)
            if name is None:
                name = self._team_name(team_id) if self._team_name is not None else ""
                self._names[team_id] = name
            builder = TraceBuilder(team_id, team_name=name, capture_content=self.capture_content)
            self._builders[team_id] = builder
        return builder

    def _hand_over(self, builder: TraceBuilder, records: list[Any]) -> None:
        room = self.max_queue_size - self._in_flight
        if room < len(records):
            self.dropped += len(records) - max(room, 0)
            records = records[: max(room, 0)]
        if not records:
            return
        resource = self._resources.get(builder.team_id)
        if resource is None:
            resource = team_resource(builder.team_id, self._names.get(builder.team_id, ""))
            self._resources[builder.team_id] = resource
        self._in_flight += len(records)
        self.queued += len(records)
        for span in readable_spans(records, resource):
            self._processor.on_end(span)

    def _settled(self, count: int, success: bool) -> None:
        with self._lock:
            self._in_flight -= count
            if success:
                self.exported += count
            else:
                self.failed += count

    # -- lifetime -----------------------------------------------------------------------
    def force_flush(self, timeout: float = DEFAULT_TIMEOUT) -> bool:
        """Export what is queued now; False when it did not finish within ``timeout`` s."""
        return self._processor.force_flush(int(timeout * 1000))

    def shutdown(self) -> None:
        """Export what is queued (bounded by the export timeout) and stop the exporter."""
        self._processor.shutdown()  # type: ignore[no-untyped-call]  # unannotated in the SDK
        if self.dropped or self.failed:
            logger.warning("telemetry: %s", self.report())

    def report(self) -> str:
        """One line: spans exported, refused and dropped."""
        return (
            f"{self.exported} spans exported, {self.failed} not delivered, "
            f"{self.dropped} dropped (queue of {self.max_queue_size} full)"
        )
