"""Whole teams on PostgreSQL: the CLI across processes, and a SIGKILL mid-conversation."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from uuid import UUID

from akgentic_postgres.store import PostgresEventStore

from akgentic.core import ActorSystem
from akgentic.team import TeamManager, TeamStatus
from akgentic.testing.cards import entry_echo_team_yaml
from akgentic.testing.durability import check_surviving_log, kill_mid_conversation
from akgentic.testing.waiting import poll_until

Run = Callable[..., subprocess.CompletedProcess[str]]

CARD = entry_echo_team_yaml(
    "pg-cli-team", "pg_test_agents.Echo", metadata_type="pg_test_agents.CaseMetadata"
)


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
        runtime = manager.resume_team(team_id)  # its owner is gone: resumable at once
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


def _spawn(env: dict[str, str], cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "akgentic.cli", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )


def _first_exit(children: list[subprocess.Popen[str]], timeout: float = 90.0) -> int:
    if not poll_until(lambda: any(child.poll() is not None for child in children), timeout):
        raise AssertionError(f"no child exited within {timeout} s")
    return next(index for index, child in enumerate(children) if child.poll() is not None)


def test_two_resumes_at_once_on_postgresql_run_one_copy_and_a_killed_owner_frees_it_at_once(
    run_cli: Run, initialised_url: str, child_env: dict[str, str], tmp_path: Path
) -> None:
    card = tmp_path / "card.yaml"
    card.write_text(CARD)
    store = ("--store", initialised_url)
    created = run_cli("team", "create", str(card), *store, "--send", "hi", "--no-interactive")
    assert created.returncode == 0, created.stderr
    team_id = created.stdout.split()[-1]

    def spawn(*args: str) -> subprocess.Popen[str]:
        # A Popen's exit closes its pipes, after the kill and wait in the finally below.
        return pipes.enter_context(_spawn(child_env, tmp_path, *args))

    with ExitStack() as pipes:
        children: list[subprocess.Popen[str]] = []
        try:
            for _trial in range(3):
                pair = [spawn("team", "resume", team_id, *store, "--interactive") for _ in range(2)]
                children.extend(pair)
                loser_index = _first_exit(pair)
                loser, winner = pair[loser_index], pair[1 - loser_index]
                _, loser_err = loser.communicate(timeout=90)
                assert loser.returncode == 1, loser_err
                assert f"team {team_id} is running in process" in loser_err
                assert "Traceback" not in loser_err
                assert winner.poll() is None
                _, winner_err = winner.communicate("", timeout=90)
                assert winner.returncode == 0, winner_err
            owner = spawn("team", "resume", team_id, *store, "--interactive")
            children.append(owner)
            assert owner.stderr is not None
            for line in owner.stderr:
                if "running; type messages" in line:
                    break
            os.kill(owner.pid, signal.SIGKILL)
            owner.wait(timeout=90)
            resumed = run_cli(
                "team", "resume", team_id, *store, "--send", "again", "--no-interactive"
            )
            assert resumed.returncode == 0, resumed.stderr
        finally:
            for child in children:
                if child.poll() is None:
                    child.kill()
                child.wait(timeout=30)
    with PostgresEventStore.from_url(initialised_url) as pg:
        process = pg.load_team(UUID(team_id))
        assert process is not None and process.status == TeamStatus.STOPPED
        sequences = [e.sequence for e in pg.load_events(UUID(team_id))]
        assert sequences == list(range(1, len(sequences) + 1))
