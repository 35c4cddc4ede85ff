"""Firing a member whose model request hangs stops it at once (the request is cancelled)."""

from __future__ import annotations

from akgentic.core.proxy import actor_ref_of
from akgentic.testing.llm_server import ScriptedLLMServer, hang
from akgentic.testing.teams import ScriptedTeam
from akgentic.testing.waiting import poll_until


def test_firing_a_member_during_a_hung_model_request_stops_it() -> None:
    with ScriptedLLMServer([hang()]) as server, ScriptedTeam(server) as team:
        worker = team.spawn("@Worker", [])
        boss = team.spawn("@Boss", [])
        team.say(worker, "Work on it.")
        assert poll_until(lambda: len(server.requests) == 1, timeout=30)
        team.say(boss, "/fire_member @Worker")
        assert poll_until(lambda: not actor_ref_of(worker).is_alive(), timeout=30), (
            "the fired member is still waiting on its model request"
        )
        assert len(server.requests) == 1
