"""Live export: a running team's spans reach the collector as the log later gives them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

from akgentic_otel.live import OtelSubscriber
from akgentic_otel.testing import OTLPReceiver, ReceivedSpan

from akgentic.llm.scripted_server import ScriptedLLMServer

from .conftest import cli, team_card


@contextmanager
def _team(store: str, card: str, subscriber: OtelSubscriber) -> Iterator[Any]:
    """A running team whose manager has ``subscriber`` attached; stopped at the end."""
    from akgentic.plugin_api import ActorSystem, TeamCard, TeamManager, open_event_store

    system = ActorSystem()
    event_store = open_event_store(store)
    try:
        manager = TeamManager(system, event_store, subscribers=[subscriber])
        runtime = manager.create_team(TeamCard.from_yaml(card))
        yield runtime
        manager.stop_team(runtime.id)
    finally:
        system.shutdown(timeout=10)
        event_store.close()


def _ids(spans: list[ReceivedSpan]) -> set[tuple[str, str, str, str, int]]:
    return {(s.trace_id, s.span_id, s.parent_span_id, s.name, s.start_ns) for s in spans}


def test_spans_exported_live_are_those_the_stored_log_gives_later(
    llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path}/akgentic.db"
    with OTLPReceiver() as live, OTLPReceiver() as later:
        # The log does not carry the card's name: the live exporter is told it.
        subscriber = OtelSubscriber(
            live.url, schedule_delay_millis=50, team_name=lambda _team_id: "trace-team"
        )
        with _team(store, team_card(llm), subscriber) as runtime:
            runtime.send_to("@Manager", "please find facts")
            assert runtime.wait_idle(60)
            team_id: UUID = runtime.id
            # Exported while the team still runs: the turn's spans, root included.
            live.wait_for(lambda spans: any(not s.parent_span_id for s in spans), timeout=30)
        subscriber.shutdown()
        assert subscriber.dropped == 0 and subscriber.failed == 0
        assert subscriber.exported == subscriber.queued == len(live.spans)
        result = cli("team", "trace", str(team_id), "--store", store, "--otlp", later.url)
        assert result.returncode == 0, result.stderr
        after = later.wait_for(lambda spans: len(spans) >= int(result.stdout.split()[1]))
    assert _ids(after) == _ids(live.spans)
    names = {s.name for s in live.spans}
    assert {"invoke_agent @Manager", "execute_tool update_planning", "chat manager-model"} <= names


def test_an_unreachable_collector_neither_slows_nor_stops_the_team(
    llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path}/akgentic.db"
    with OTLPReceiver(delay=60) as stalled:
        # A collector that never answers, and room for two spans: the rest are dropped.
        subscriber = OtelSubscriber(
            stalled.url, max_queue_size=2, schedule_delay_millis=10, export_timeout=1
        )
        with _team(store, team_card(llm), subscriber) as runtime:
            runtime.send_to("@Manager", "please find facts")
            assert runtime.wait_idle(60), "the team waited on its telemetry"
            runtime.send_to("@Manager", "thanks")
            assert runtime.wait_idle(60), "the team waited on its telemetry"
        subscriber.shutdown()
        assert stalled.requests >= 1
    assert subscriber.dropped > 0
    assert subscriber.exported == 0
    assert subscriber.queued + subscriber.dropped >= 8
    assert "dropped" in subscriber.report()


def test_a_stalled_mapping_thread_neither_holds_the_team_nor_grows_without_bound(
    llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    # The team's thread only queues; the mapping thread is held here by the team-name
    # callback it calls on the team's first message, so the queue fills and overflows.
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    release = threading.Event()
    stalled = threading.Event()

    def team_name(_team_id: UUID) -> str:
        stalled.set()
        release.wait(60)
        return "stalled-team"

    exporter = InMemorySpanExporter()
    subscriber = OtelSubscriber(
        exporter=exporter, max_pending_messages=8, schedule_delay_millis=10, team_name=team_name
    )
    try:
        with _team(f"sqlite:///{tmp_path}/akgentic.db", team_card(llm), subscriber) as runtime:
            runtime.send_to("@Manager", "please find facts")
            assert runtime.wait_idle(60), "the team waited on its telemetry"
            assert stalled.wait(30)
            assert subscriber.dropped_messages > 0
    finally:
        release.set()
    subscriber.shutdown()
    assert "messages dropped before mapping (queue of 8 full)" in subscriber.report()
    # What was queued was still mapped, holes and all, under the name the stalled call gave.
    assert subscriber.unmapped == 0
    roots = [s for s in exporter.get_finished_spans() if s.parent is None]
    assert all(s.name == "invoke_workflow stalled-team" for s in roots)


def test_the_standard_variable_switches_live_export_on(monkeypatch: Any) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    assert OtelSubscriber.from_env() is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    subscriber = OtelSubscriber.from_env()
    assert subscriber is not None and subscriber.capture_content is False
    subscriber.shutdown()
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    subscriber = OtelSubscriber.from_env()
    assert subscriber is not None and subscriber.capture_content is True
    subscriber.shutdown()


def test_a_team_s_resource_is_built_once_not_per_hand_over(
    llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    # Resource.create runs the SDK's detectors on a thread pool and reads package
    # metadata: built per hand-over, it doubled an agent round trip (bench/otel_overhead.py).
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    subscriber = OtelSubscriber(exporter=exporter, schedule_delay_millis=50)
    with _team(f"sqlite:///{tmp_path}/akgentic.db", team_card(llm), subscriber) as runtime:
        for text in ("please find facts", "and more facts"):
            runtime.send_to("@Manager", text)
            assert runtime.wait_idle(60)
        team_id = runtime.id
    subscriber.shutdown()
    spans = exporter.get_finished_spans()
    assert len({s.name for s in spans if s.parent is None}) >= 1
    assert len(spans) > 4
    resources = {id(span.resource) for span in spans}
    assert len(resources) == 1
    assert spans[0].resource.attributes["akgentic.team.id"] == str(team_id)
