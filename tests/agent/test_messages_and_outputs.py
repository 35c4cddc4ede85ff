"""AgentMessage rendering, the reply protocols, the output schema and AgentConfig."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import yaml

from akgentic.agent import (
    REPLY_PROTOCOLS,
    AgentConfig,
    AgentMessage,
    AgentState,
    Request,
    StructuredOutput,
)
from akgentic.core import BaseConfig
from akgentic.core.actor_address import ActorAddressProxy
from akgentic.llm import ModelConfig, PromptTemplate, ReactAgentConfig, RunUsageLimits
from akgentic.llm.config import LlmSettings
from akgentic.tool.mailbox import MailboxMessage, MailboxTool
from akgentic.tool.team import TeamTool


def _from(name: str) -> ActorAddressProxy:
    return ActorAddressProxy(
        {"agent_id": "7f1d1c1e-0c1a-4b7e-9a53-1f5d3c0b9e11", "name": name, "role": "Human"}
    )


def test_the_receiver_reads_who_sent_what_intent_and_how_to_reply() -> None:
    message = AgentMessage(content="Plan the sprint.", sender=_from("@Human"))
    text = message.rendering()
    assert text.startswith("You received a request from @Human. ")
    assert REPLY_PROTOCOLS["request"].format(sender="@Human") in text
    assert text.endswith("\n\nPlan the sprint.")


def test_intents_starting_with_a_vowel_take_an() -> None:
    message = AgentMessage(content="ok", type="instruction", sender=_from("@Lead"))
    assert message.rendering().startswith("You received an instruction from @Lead.")
    ack = AgentMessage(content="ok", type="acknowledgment")
    assert ack.rendering().startswith("You received an acknowledgment from unknown.")


def test_the_preview_is_one_line_cut_at_120_characters() -> None:
    message = AgentMessage(content="word\n" * 100, type="notification", sender=_from("@Ann"))
    preview = message.rendering_preview()
    assert "\n" not in preview
    assert preview.startswith("@Ann (notification): word word")
    assert preview.endswith("…") and len(preview) < 160


def test_agent_messages_can_be_absorbed_mid_run() -> None:
    assert issubclass(AgentMessage, MailboxMessage)


def test_every_intent_has_a_protocol_about_mechanics_not_team_policy() -> None:
    assert set(REPLY_PROTOCOLS) == {
        "request",
        "response",
        "instruction",
        "notification",
        "acknowledgment",
    }
    for text in REPLY_PROTOCOLS.values():
        assert "delegat" not in text.lower()


def test_the_recipient_is_a_free_string_in_the_schema() -> None:
    schema = Request.model_json_schema()
    assert schema["properties"]["recipient"]["type"] == "string"
    assert "enum" not in schema["properties"]["recipient"]
    assert set(schema["required"]) == {"message_type", "message", "recipient"}


def test_an_empty_output_sends_nothing_and_merge_keeps_first_occurrences() -> None:
    assert StructuredOutput().messages == []
    a = Request(recipient="@A", message_type="request", message="x")
    b = Request(recipient="@B", message_type="notification", message="y")
    outputs = [StructuredOutput(messages=[a, b]), StructuredOutput(messages=[a])]
    merged = StructuredOutput.merge(outputs)
    assert merged.messages == [a, b]


def test_an_agent_config_round_trips_through_yaml() -> None:
    config = AgentConfig(
        name="@Manager",
        role="Manager",
        prompt=PromptTemplate(template="You manage {team}.", params={"team": "QA"}),
        model_cfg=ModelConfig(provider="openai-chat", model="m", base_url="http://x/v1"),
        run_usage_limits=RunUsageLimits(run_request_limit=5),
        tools=[TeamTool(get_team_activity=False)],
    )
    text = yaml.safe_dump(config.model_dump(mode="json"))
    again = AgentConfig.model_validate(yaml.safe_load(text))
    assert again.prompt.render() == "You manage QA."
    assert again.model_cfg.base_url == "http://x/v1"
    assert again.run_usage_limits.run_request_limit == 5
    assert isinstance(again.tools[0], TeamTool) and again.tools[0].get_team_activity is False


def test_a_model_list_becomes_the_roster_with_the_first_entry_active() -> None:
    config = AgentConfig.model_validate(
        {"model_cfg": [{"provider": "openai", "model": "a"}, {"provider": "openai", "model": "b"}]}
    )
    assert config.model_cfg.model == "a"
    assert [m.model for m in config.model_roster] == ["a", "b"]
    assert config.react_agent_config().model_roster == config.model_roster


def test_the_agent_config_takes_its_llm_fields_from_the_one_llm_settings_definition() -> None:
    shared = set(LlmSettings.model_fields)
    assert shared == {
        "model_cfg",
        "model_roster",
        "runtime_cfg",
        "run_usage_limits",
        "agent_usage_limits",
        "compaction_cfg",
    }
    assert issubclass(AgentConfig, LlmSettings) and issubclass(ReactAgentConfig, LlmSettings)
    assert set(ReactAgentConfig.model_fields) - shared == {"max_messages"}
    assert set(AgentConfig.model_fields) - shared == {
        "name",
        "role",
        "squad_id",
        "prompt",
        "tools",
        "command_senders",
    }
    config = AgentConfig(name="@A", run_usage_limits=RunUsageLimits(run_request_limit=3))
    assert config.react_agent_config().run_usage_limits.run_request_limit == 3


def test_the_core_agent_config_is_the_base_config_under_an_old_name_and_warns() -> None:
    import akgentic.core
    import akgentic.core.agent_config

    for module in (akgentic.core, akgentic.core.agent_config):
        with pytest.warns(DeprecationWarning, match="akgentic.agent.AgentConfig for an LLM"):
            alias = module.AgentConfig
        assert alias is BaseConfig
        assert alias is not AgentConfig
    with pytest.raises(AttributeError):
        _ = akgentic.core.NoSuchConfig


def test_the_agent_state_carries_the_tool_layer_slot() -> None:
    state = AgentState(backstory="b")
    assert state.tool_state.context_update_seq == 0
    assert AgentState.model_validate(state.model_dump()).backstory == "b"


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return set(result.stdout.split())


def test_importing_the_agent_package_does_not_import_pydantic_ai() -> None:
    modules = _modules_after("import akgentic.agent")
    assert not any(m == "pydantic_ai" or m.startswith("pydantic_ai.") for m in modules)


def test_importing_the_team_package_does_not_import_pydantic_ai() -> None:
    modules = _modules_after("import akgentic.team")
    assert not any(m == "pydantic_ai" or m.startswith("pydantic_ai.") for m in modules)


def test_builtin_agents_carry_the_mailbox_and_team_cards_without_changing_config(
    team: Any,
) -> None:
    from akgentic.agent import BaseAgent

    card = team.card("Solo", tools=[MailboxTool(read_mailbox=False)])
    config = card.get_config_copy()
    agent = BaseAgent.__new__(BaseAgent)
    agent.config = config  # tool_cards() only reads the configuration
    cards = BaseAgent.tool_cards(agent)
    assert [type(c).__name__ for c in cards] == ["TeamTool", "MailboxTool"]
    assert len(config.tools) == 1
