"""A hung model request is cancelled at once: firing the member, or the human's ``/stop``."""

from __future__ import annotations

import pytest

from akgentic.agent import HumanProxy
from akgentic.agent.output_models import Request, StructuredOutput
from akgentic.core.messages.message import CancelMessage
from akgentic.core.proxy import actor_ref_of
from akgentic.llm.scripted_server import ScriptedLLMServer, hang, structured
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


def _to_human(team: ScriptedTeam) -> list[str]:
    return [m.content for m in team.sent_to("@Human")]


@pytest.mark.parametrize("cancel", ["/stop", "cancel-message"])
def test_a_human_stop_cancels_a_hung_model_request_and_the_agent_goes_on(cancel: str) -> None:
    back = Request(recipient="@Human", message_type="response", message="Back at work.")
    answer = structured(StructuredOutput(messages=[back]))
    with ScriptedLLMServer([hang(), answer]) as server, ScriptedTeam(server) as team:
        worker = team.spawn("@Worker", [])
        team.say(worker, "Work on it.")
        assert poll_until(lambda: len(server.requests) == 1, timeout=30)
        if cancel == "/stop":
            team.say(worker, "/stop")
        else:
            human = team.system.proxy_ask(team.human, HumanProxy)
            human.send(worker, CancelMessage(reason="enough"))
        assert poll_until(lambda: _to_human(team), timeout=30), "the hung request still runs"
        assert _to_human(team) == ["@Worker stopped its run as asked."]
        assert actor_ref_of(worker).is_alive()
        team.say(worker, "Resume.")
        assert poll_until(lambda: len(_to_human(team)) == 2, timeout=30)
        assert _to_human(team)[1] == "Back at work."
        assert len(server.requests) == 2
