"""Live export: an event subscriber that sends a running team's spans over OTLP/HTTP.

:class:`OtelSubscriber` feeds each message the team records to the same
:class:`~akgentic_otel.mapping.TraceBuilder` the after-the-fact export uses, so a
span exported live has the id, parent and times ``akgentic team trace`` gives it
later (the mapping reads the messages' own timestamps, never the clock, so it gives
the same spans whenever it runs).

The team's thread does one thing per batch of recorded messages: it appends them to a
queue. A mapping thread of the subscriber's wakes every ``schedule_delay_millis`` (sooner
when the queue grows), maps everything that queued meanwhile in one go, and hands the
finished spans to the SDK's ``BatchSpanProcessor``, which exports them from a thread of
its own. Telemetry is thus done in batches, off the team's path, and neither a slow
collector nor the mapping holds a team up.

Two bounds, each counting what it refused instead of waiting:

- at most ``max_pending_messages`` messages wait to be mapped; a batch that finds no
  room is dropped and counted (:attr:`OtelSubscriber.dropped_messages`; the spans
  it would have made are missing or end early). Only a mapping thread starved of CPU
  falls that far behind: a slow collector never holds it up;
- at most ``max_queue_size`` spans wait for export; one that finds the queue full is
  dropped and counted (:attr:`OtelSubscriber.dropped`).

The plugin attaches one to every team a manager runs when
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set or the team card has a ``telemetry:`` block
(see :mod:`akgentic_otel.switch`). Code may also attach one itself::

    subscriber = OtelSubscriber.from_env()  # None unless OTEL_EXPORTER_OTLP_ENDPOINT is set
    manager = TeamManager(system, store, subscribers=[subscriber] if subscriber else [])
    ...
    subscriber.shutdown()  # map and export what is queued, bounded by the exporter's timeout
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from akgentic_otel.export import DEFAULT_TIMEOUT, readable_spans, team_resource, traces_endpoint
from akgentic_otel.mapping import TraceBuilder
from akgentic_otel.records import SpanRecord
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


class _Control:
    """A team's lifecycle call, queued among its messages so the mapping sees it in order."""

    __slots__ = ("kind", "team_id", "value")

    def __init__(self, kind: str, team_id: UUID, value: Any = None) -> None:
        self.kind = kind
        self.team_id = team_id
        self.value = value


class OtelSubscriber:
    """Exports the spans of every team it is attached to, live (see the module docstring).

    ``endpoint`` is an OTLP/HTTP base or traces URL; ``exporter`` replaces the
    OTLP/HTTP exporter altogether (any SDK ``SpanExporter``). ``team_name`` names a
    team by id for its root spans (the log does not carry the card's name); it is
    called on the mapping thread. ``schedule_delay_millis`` is how long a message
    waits to be mapped, and a finished span to be exported, at most (unless the
    queues fill up sooner).
    """

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        exporter: SpanExporter | None = None,
        capture_content: bool = False,
        max_queue_size: int = 2048,
        max_pending_messages: int = 16384,
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
        if max_pending_messages < 1 or max_queue_size < 1:
            raise ValueError("max_pending_messages and max_queue_size must be at least 1")
        self.capture_content = capture_content
        self.max_queue_size = max_queue_size
        self.max_pending_messages = max_pending_messages
        self._team_name = team_name
        # The team's side: messages and lifecycle calls waiting to be mapped, in order.
        self._pending: deque[Any] = deque()
        self._pending_lock = threading.Lock()
        self._wake_at = max(1, min(512, max_pending_messages // 2))
        self._wake = threading.Event()
        self._closing = False
        # The mapping thread's side (force_flush and shutdown map on the caller's thread,
        # under the same lock, so the queue is always mapped in order).
        self._map_lock = threading.Lock()
        self._builders: dict[UUID, TraceBuilder] = {}
        self._names: dict[UUID, str] = {}
        self._restoring: set[UUID] = set()
        # One resource per team: Resource.create runs the SDK's detectors on a thread
        # pool and reads package metadata, ~0.7 ms each time.
        self._resources: dict[UUID, Resource] = {}
        # Counts, shared with the processor's thread.
        self._lock = threading.Lock()
        self._in_flight = 0
        #: Spans handed to the processor, exported, refused by the collector, and dropped.
        self.queued = 0
        self.exported = 0
        self.failed = 0
        self.dropped = 0
        #: Messages dropped before mapping (the queue of ``max_pending_messages`` full),
        #: and messages the mapping failed on (logged).
        self.dropped_messages = 0
        self.unmapped = 0
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
        self._delay = schedule_delay_millis / 1000
        self._thread = threading.Thread(target=self._run, name="akgentic-otel-map", daemon=True)
        self._thread.start()

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
        self._control(_Control("name", team_id, name))

    # -- EventSubscriber: the team's thread only queues -------------------------------
    def on_message(self, msg: Any) -> None:
        """Queue one recorded message for mapping (dropped and counted if no room)."""
        self.on_messages((msg,))

    def on_messages(self, msgs: Sequence[Any]) -> None:
        """Queue a batch of recorded messages for mapping (dropped and counted if no room)."""
        with self._pending_lock:
            pending = self._pending
            if self._closing or len(pending) + len(msgs) > self.max_pending_messages:
                self.dropped_messages += len(msgs)
                return
            pending.extend(msgs)
            if len(pending) >= self._wake_at and not self._wake.is_set():
                self._wake.set()

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        """Replayed history is mapped (the turns go on) but not exported again."""
        self._control(_Control("restoring", team_id, restoring))

    def on_stop_request(self, team_id: UUID) -> None:
        """Nothing to do before the team stops."""

    def on_stop(self, team_id: UUID) -> None:
        """Hand over what the team left open (ended at its last event); forget the team."""
        self._control(_Control("stop", team_id))
        self._wake.set()  # a stopped team's last spans need not wait for the next round

    def _control(self, item: _Control) -> None:
        # Never dropped: a lifecycle call is rare and tiny, and losing one would leave
        # a team's state behind for good.
        with self._pending_lock:
            self._pending.append(item)

    # -- the mapping thread ------------------------------------------------------------
    def _run(self) -> None:
        while not self._closing:
            self._wake.wait(self._delay)
            self._wake.clear()  # before mapping: a wake-up meanwhile is kept for the next round
            self._map_pending()

    def _map_pending(self) -> None:
        """Map everything queued so far, in order; hand the finished spans over."""
        with self._map_lock:
            pending = self._pending
            done: dict[UUID, list[SpanRecord]] = {}
            while pending:
                item = pending.popleft()  # the only consumer holds _map_lock
                try:
                    if type(item) is _Control:
                        self._apply(item, done)
                    else:
                        self._feed(item, done)
                except Exception:  # one bad message must not stop the team's telemetry
                    self.unmapped += 1
                    if self.unmapped == 1:
                        logger.exception("telemetry: a message could not be mapped")
            for team_id, records in done.items():
                self._hand_over(team_id, records)

    def _feed(self, msg: Any, done: dict[UUID, list[SpanRecord]]) -> None:
        team_id = msg.team_id
        if team_id is None:
            return
        builder = self._builders.get(team_id)
        if builder is None:
            builder = self._new_builder(team_id)
        builder.feed(msg)
        finished = builder.take_finished()
        if finished and team_id not in self._restoring:
            done.setdefault(team_id, []).extend(finished)

    def _apply(self, item: _Control, done: dict[UUID, list[SpanRecord]]) -> None:
        team_id = item.team_id
        if item.kind == "name":
            self._names[team_id] = item.value
        elif item.kind == "restoring":
            if item.value:
                self._restoring.add(team_id)
                self._builders.pop(team_id, None)
            else:
                self._restoring.discard(team_id)
        elif item.kind == "stop":
            builder = self._builders.pop(team_id, None)
            records = done.pop(team_id, [])
            if builder is not None and team_id not in self._restoring:
                open_spans = [s for s in builder.spans() if not s.complete]
                records += builder.take_finished() + open_spans
            self._hand_over(team_id, records)
            self._names.pop(team_id, None)
            self._resources.pop(team_id, None)

    def _new_builder(self, team_id: UUID) -> TraceBuilder:
        name = self._names.get(team_id)
        if name is None:
            name = self._team_name(team_id) if self._team_name is not None else ""
            self._names[team_id] = name
        builder = TraceBuilder(team_id, team_name=name, capture_content=self.capture_content)
        self._builders[team_id] = builder
        return builder

    # -- export ---------------------------------------------------------------------
    def _hand_over(self, team_id: UUID, records: list[SpanRecord]) -> None:
        if not records:
            return
        resource = self._resources.get(team_id)
        if resource is None:
            resource = team_resource(team_id, self._names.get(team_id, ""))
            self._resources[team_id] = resource
        with self._lock:
            room = max(self.max_queue_size - self._in_flight, 0)
            if room < len(records):
                self.dropped += len(records) - room
                records = records[:room]
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
        """Map and export what is queued now; False when it did not finish within ``timeout`` s."""
        self._map_pending()
        return self._processor.force_flush(int(timeout * 1000))

    def shutdown(self) -> None:
        """Map and export what is queued (bounded by the export timeout); stop the threads.

        Messages recorded after this are dropped and counted.
        """
        with self._pending_lock:
            self._closing = True
        self._wake.set()
        self._thread.join()
        self._map_pending()
        self._processor.shutdown()  # type: ignore[no-untyped-call]  # unannotated in the SDK
        if self.dropped or self.failed or self.dropped_messages or self.unmapped:
            logger.warning("telemetry: %s", self.report())

    def report(self) -> str:
        """One line: spans exported, refused and dropped, and messages not mapped."""
        line = (
            f"{self.exported} spans exported, {self.failed} not delivered, "
            f"{self.dropped} dropped (queue of {self.max_queue_size} full)"
        )
        if self.dropped_messages:
            line += (
                f", {self.dropped_messages} messages dropped before mapping "
                f"(queue of {self.max_pending_messages} full)"
            )
        if self.unmapped:
            line += f", {self.unmapped} messages the mapping failed on"
        return line
