"""A team killed with SIGKILL mid-conversation resumes elsewhere with every acknowledged event."""

from __future__ import annotations

from pathlib import Path

import pytest

from akgentic.core import ActorSystem
from akgentic.team import TeamManager, open_event_store
from akgentic.testing.durability import check_surviving_log, kill_mid_conversation


@pytest.mark.parametrize("scheme", ["sqlite", "yaml"])
def test_a_killed_team_resumes_in_a_new_process_with_every_acknowledged_event(
    scheme: str, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    url = f"sqlite:///{tmp_path}/a.db" if scheme == "sqlite" else f"yaml:///{tmp_path}/teams"
    killed = kill_mid_conversation(url, "team_test_agents.Echo", cli_env)
    team_id = killed.team_id

    system = ActorSystem()
    store = open_event_store(url)
    try:
        events = store.load_events(team_id)
        check_surviving_log(events, killed)

        manager = TeamManager(system, store)
        manager.stop_team(team_id)  # its process is gone: recorded as stopped
        runtime = manager.resume_team(team_id)
        history = runtime.orchestrator_proxy.get_messages()
        assert len(history) >= len(events) - 1  # every stored event replayed (bar none skipped)
        runtime.send("after the crash")
        assert runtime.wait_idle(30)
        manager.stop_team(team_id)
        after = store.load_events(team_id)
        assert [e.sequence for e in after] == list(range(1, len(after) + 1))
        assert after[: len(events)] == events
    finally:
        system.shutdown(timeout=10)
        store.close()
