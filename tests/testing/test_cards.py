"""The kit's team-card YAML builders load, through the card file loader, as the cards meant."""

from __future__ import annotations

from pathlib import Path

import yaml

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent, HumanProxy
from akgentic.core.messages.message import UserMessage
from akgentic.team.card_yaml import load_team_card
from akgentic.testing import entry_echo_team_yaml, human_worker_team_yaml
from akgentic.testing.cluster_team import QuietAgent, QuietMetadata


def test_the_entry_echo_card_has_an_entry_and_one_member_of_the_class(tmp_path: Path) -> None:
    text = entry_echo_team_yaml(
        "fleet",
        "akgentic.testing.cluster_team.QuietAgent",
        member_name="@Quiet",
        metadata_type="akgentic.testing.cluster_team.QuietMetadata",
    )
    card = load_team_card(_write(tmp_path, text))
    assert card.name == "fleet" and card.description is None
    entry = card.entry_point.card
    assert entry.agent_class is QuietAgent and entry.description == "entry"
    assert (entry.config.name, entry.config.role) == ("@Entry", "Entry")
    [member] = card.members
    assert member.card.agent_class is QuietAgent and member.card.description == "quiet"
    assert (member.card.config.name, member.card.config.role) == ("@Quiet", "Quiet")
    assert member.members == []
    assert card.message_types == [UserMessage]
    assert card.metadata_type is QuietMetadata


def test_the_entry_echo_card_defaults_to_an_echo_member_and_no_metadata_type(
    tmp_path: Path,
) -> None:
    text = entry_echo_team_yaml("plain", "akgentic.testing.cluster_team.QuietAgent")
    card = load_team_card(_write(tmp_path, text))
    [member] = card.members
    assert (member.card.config.name, member.card.config.role) == ("@Echo", "Echo")
    assert member.card.description == "echo"
    assert "metadata_type" not in yaml.safe_load(text)
    # One field to a line: the entry point's class is on line 4, where a loader error points.
    assert text.splitlines()[3] == "    agent_class: akgentic.testing.cluster_team.QuietAgent"


def test_the_human_worker_card_puts_every_given_section_on_the_worker(tmp_path: Path) -> None:
    model_cfg = {"provider": "openai-chat", "model": "m", "base_url": "http://x/v1", "api_key": "k"}
    text = human_worker_team_yaml(
        "solo",
        description="One worker",
        human_description="The person at the console",
        worker="@Manager",
        role="Manager",
        worker_description="Answers",
        prompt="You answer.",
        model_cfg=model_cfg,
        runtime_cfg={"http_client_config": {"max_retries": 0}},
    )
    card = load_team_card(_write(tmp_path, text))
    assert (card.name, card.description) == ("solo", "One worker")
    human = card.entry_point.card
    assert human.agent_class is HumanProxy and human.description == "The person at the console"
    assert (human.config.name, human.config.role) == ("@Human", "Human")
    [worker] = card.members
    assert worker.card.agent_class is BaseAgent and worker.card.description == "Answers"
    config = worker.card.config
    assert isinstance(config, AgentConfig)
    assert (config.name, config.role, config.prompt.template) == (
        "@Manager",
        "Manager",
        "You answer.",
    )
    model = config.model_cfg
    assert (model.provider, model.model, model.base_url) == ("openai-chat", "m", "http://x/v1")
    assert model.api_key is not None and model.api_key.get_secret_value() == "k"
    assert config.runtime_cfg.http_client_config.max_retries == 0
    assert config.tools == []
    assert card.message_types == [AgentMessage]


def test_the_human_worker_card_leaves_out_what_is_not_given_and_writes_tools_as_given() -> None:
    tools: list[dict[str, object]] = [
        {"card": "planning", "vector_store": False},
        {"card": "notification"},
    ]
    model_cfg = {"provider": "openai", "model": "gpt-4.1-mini"}
    data = yaml.safe_load(human_worker_team_yaml("t", model_cfg=model_cfg, tools=tools))
    assert "description" not in data
    human = data["entry_point"]["card"]
    assert human["description"] == "The person"
    [worker] = data["members"]
    assert worker["card"]["description"] == "Works"
    assert worker["card"]["config"] == {
        "name": "@Worker",
        "role": "Worker",
        "model_cfg": model_cfg,
        "tools": tools,
    }


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "card.yaml"
    path.write_text(text, encoding="utf-8")
    return path
