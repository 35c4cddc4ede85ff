"""Whole teams on PostgreSQL: the CLI across processes, and a SIGKILL mid-conversation."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

from akgentic_postgres.store import PostgresEventStore

from akgentic.core import ActorSystem
from akgentic.team import TeamManager, TeamStatus
from akgentic.testing.durability import check_surviving_log, kill_mid_conversation

Run = Callable[..., subprocess.CompletedProcess[str]]

CARD = """\
name: pg-cli-team
entry_point:
  card:
    agent_class: pg_test_agents.Echo
    description: entry
    config: {name: "@Entry", role: Entry}
members:
  - card:
      agent_class: pg_test_agents.Echo
      description: echo
      config: {name: "@Echo", role: Echo}
message_types: [akgentic.core.messages.message.UserMessage]
metadata_type: pg_test_agents.CaseMetadata
"""


def test_a_team_created_from_the_cli_is_listed_inspected_resumed_and_deleted_elsewhere(
    run_cli: Run, initialised_url: str, tmp_path: Path
) -> None:
    card = tmp_path / "card.yaml"
    card.write_text(CARD)
    store = ("--store", initialised_url)
    created = run_cli(
        "team", "create", str(card), *store, "--metadata", "tenant=acme", "--send", "hi",
        "--no-interactive",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    team_id = created.stdout.strip().splitlines()[-1]

    listed = run_cli("team", "list", *store, "--metadata", "tenant=acme", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [row["team_id"] for row in json.loads(listed.stdout)] == [team_id]
    other = run_cli("team", "list", *store, "--metadata", "tenant=other", "--json")
    assert json.loads(other.stdout) == []

    resumed = run_cli("team", "resume", team_id, *store, "--send", "again", "--no-interactive")
    assert resumed.returncode == 0, resumed.stderr

    inspected = run_cli("team", "inspect", team_id, *store, "--events", "--json")
    assert inspected.returncode == 0, inspected.stderr
    report = json.loads(inspected.stdout)
    assert report["status"] == "stopped"
    assert sorted(m["name"] for m in report["roster"]) == ["@Echo", "@Entry", "@Orchestrator"]
    sent = [e["summary"] for e in report["events"] if e["type"] == "SentMessage"]
    assert sent == ["UserMessage -> @Echo: hi", "UserMessage -> @Echo: again"]
    assert [e["sequence"] for e in report["events"]] == list(range(1, report["event_count"] + 1))

    deleted = run_cli("team", "delete", team_id, *store)
    assert deleted.returncode == 0, deleted.stderr
    with PostgresEventStore.from_url(initialised_url) as pg:
        assert pg.load_team(UUID(team_id)) is None
        assert pg.load_events(UUID(team_id)) == []
        assert pg.load_agent_states(UUID(team_id)) == []


def test_a_team_killed_mid_conversation_resumes_elsewhere_with_every_acknowledged_event(
    initialised_url: str, child_env: dict[str, str]
) -> None:
    killed = kill_mid_conversation(initialised_url, "pg_test_agents.Echo", child_env)
    team_id = killed.team_id
    assert killed.returncode == -signal.SIGKILL

    system = ActorSystem()
    store = PostgresEventStore.from_url(initialised_url)
    try:
        events = store.load_events(team_id)
        check_surviving_log(events, killed)

        manager = TeamManager(system, store)
        process = manager.get_team(team_id)
        assert process is not None and process.status == TeamStatus.RUNNING
        manager.stop_team(team_id)  # its process is gone: recorded as stopped
        runtime = manager.resume_team(team_id)
        runtime.send("after the crash")
        assert runtime.wait_idle(30)
        manager.stop_team(team_id)
        after = store.load_events(team_id)
        assert [e.sequence for e in after] == list(range(1, len(after) + 1))
        assert after[: len(events)] == events
        assert len(after) > len(events)
    finally:
        system.shutdown(timeout=10)
        store.close()
