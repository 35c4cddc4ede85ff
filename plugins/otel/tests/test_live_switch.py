"""Live export switched on with no wiring: the standard variable, or the card's block.

The teams are built by a plain ``TeamManager`` (no subscribers given), as the CLI,
the console and a worker build them: the plugin attaches its subscriber through the
``akgentic_team_subscribers`` hook. Spans reach a real OTLP/HTTP receiver.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from uuid import uuid4

import pytest
from akgentic_otel.switch import live_subscriber, shutdown_live_exports, telemetry_settings
from akgentic_otel.testing import OTLPReceiver, ReceivedSpan

from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.plugin_api import (
    ActorSystem,
    TeamCard,
    TeamCardError,
    TeamManager,
    open_event_store,
)

from .conftest import cli, run_turns, team_card

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No telemetry variable from outside; the shared exporters stopped after each test."""
    for name in _VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield
    shutdown_live_exports()


def _turn_exported(spans: list[ReceivedSpan]) -> bool:
    names = {s.name for s in spans}
    return "invoke_workflow trace-team" in names and "invoke_agent @Researcher" in names


def test_the_standard_variable_alone_exports_every_team_live(
    llm: ScriptedLLMServer,
    receiver: OTLPReceiver,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    team_id = run_turns(f"sqlite:///{tmp_path}/akgentic.db", team_card(llm), ["find facts"])
    spans = receiver.wait_for(_turn_exported, timeout=30)
    assert {s.resource.get("akgentic.team.id") for s in spans} == {str(team_id)}
    names = {s.name for s in spans}
    assert {"chat manager-model", "execute_tool update_planning"} <= names
    # Content stays off unless asked for.
    assert not any("gen_ai.input.messages" in s.attributes for s in spans)


def test_a_telemetry_block_exports_its_team_live_with_content(
    llm: ScriptedLLMServer, receiver: OTLPReceiver, tmp_path: Path
) -> None:
    card = team_card(llm) + f"telemetry:\n  endpoint: {receiver.url}\n  capture_content: true\n"
    run_turns(f"sqlite:///{tmp_path}/akgentic.db", card, ["find facts"])
    spans = receiver.wait_for(_turn_exported, timeout=30)
    chats = [s for s in spans if s.name == "chat manager-model"]
    assert chats and all("gen_ai.input.messages" in s.attributes for s in chats)


def test_the_block_wins_over_the_variable_and_can_turn_export_off(
    llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    base = team_card(llm)
    from_env = live_subscriber(TeamCard.from_yaml(base), uuid4())
    assert from_env is not None and from_env.capture_content is False
    block = "telemetry:\n  endpoint: http://127.0.0.1:10\n  capture_content: true\n"
    from_block = live_subscriber(TeamCard.from_yaml(base + block), uuid4())
    assert from_block is not None and from_block is not from_env
    assert from_block.capture_content is True
    off = TeamCard.from_yaml(base + "telemetry: {enabled: false}\n")
    assert live_subscriber(off, uuid4()) is None
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
    assert live_subscriber(TeamCard.from_yaml(base), uuid4()) is None


def test_a_malformed_telemetry_block_is_refused_with_its_location(
    llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    card = TeamCard.from_yaml(
        team_card(llm) + "telemetry:\n  endpoint: collector:4318\n  colour: red\n"
    )
    system = ActorSystem()
    store = open_event_store(f"sqlite:///{tmp_path}/akgentic.db")
    try:
        manager = TeamManager(system, store)
        with pytest.raises(TeamCardError) as refused:
            manager.create_team(card)
        assert manager.list_teams() == []
    finally:
        system.shutdown(timeout=10)
        store.close()
    message = str(refused.value)
    assert "telemetry.endpoint: an OTLP/HTTP URL such as http://collector:4318" in message
    assert "telemetry.colour: Extra inputs are not permitted" in message


def test_a_cli_run_with_the_variable_delivers_its_spans_before_it_exits(
    receiver: OTLPReceiver, tmp_path: Path
) -> None:
    created = cli(
        "team",
        "create",
        str(EXAMPLES / "observability-team.yaml"),
        "--scripted",
        str(EXAMPLES / "observability-script.yaml"),
        "--send",
        "@Manager find facts",
        "--store",
        f"sqlite:///{tmp_path}/akgentic.db",
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url},
    )
    assert created.returncode == 0, created.stderr
    team_id = created.stdout.strip().splitlines()[-1]
    # The process is gone: what it queued was sent at exit, not lost with its threads.
    names = {s.name for s in receiver.spans}
    assert "invoke_workflow observability-team" in names, names
    assert {s.resource.get("akgentic.team.id") for s in receiver.spans} == {team_id}


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ({"endpoint": "ftp://collector"}, "telemetry.endpoint: an OTLP/HTTP URL"),
        ({"endpoint": "http://user:secret@collector:4318"}, "telemetry.endpoint: credentials"),
        ({"capture_content": "maybe"}, "telemetry.capture_content: Input should be"),
        ({"enabled": True, "headers": {}}, "telemetry.headers: Extra inputs"),
    ],
)
def test_each_malformed_key_is_named(block: dict[str, object], problem: str) -> None:
    with pytest.raises(TeamCardError, match=r"^invalid telemetry block: ") as refused:
        telemetry_settings(block)
    assert problem in str(refused.value)
    assert "secret" not in str(refused.value)
