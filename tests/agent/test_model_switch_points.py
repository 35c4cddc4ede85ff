"""BaseAgent as the model-switching observer: what it lists and how it confirms."""

from __future__ import annotations

import pytest

from akgentic.agent import BaseAgent
from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.testing.teams import ScriptedTeam
from akgentic.tool import RetriableError


def test_an_agent_with_a_single_declared_model_lists_no_roster(
    llm_server: ScriptedLLMServer,
) -> None:
    with ScriptedTeam(llm_server) as team:
        agent = team.system.proxy_ask(team.spawn("@Solo", []), BaseAgent, timeout=10)
        assert agent.list_model_rows() == []


def test_a_switch_is_confirmed_for_the_next_turn_and_kept_in_the_tool_state(
    llm_server: ScriptedLLMServer,
) -> None:
    roster = [llm_server.model_config(model="fast"), llm_server.model_config(model="deep")]
    with ScriptedTeam(llm_server) as team:
        member = team.spawn("@Duo", [], model_cfg=roster)
        agent = team.system.proxy_ask(member, BaseAgent, timeout=10)
        assert [row.key for row in agent.list_model_rows()] == [
            "openai-chat:fast",
            "openai-chat:deep",
        ]
        assert agent.switch_model("openai-chat:deep") == (
            "Switched to openai-chat:deep from the next turn."
        )
        assert agent.state.tool_state.active_model == "openai-chat:deep"
        with pytest.raises(RetriableError, match="unknown model"):
            agent.switch_model("openai-chat:nope")
