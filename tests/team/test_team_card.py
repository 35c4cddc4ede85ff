"""TeamCard and TeamCardMember: tree views, validation, class references and YAML."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from akgentic.core import AgentCard, Akgent, BaseConfig, UserProxy
from akgentic.core.messages import ResultMessage, UserMessage
from akgentic.plugins import AgentClassSpec, MessageTypeSpec, PluginInfo, hookimpl
from akgentic.team import (
    TeamCard,
    TeamCardError,
    TeamCardMember,
    TeamCardValidationError,
    load_team_card,
)
from akgentic.testing.event_store_contract import ContractMetadata

MakeAgentCard = Callable[..., AgentCard]
Register = Callable[..., PluginInfo]


@pytest.fixture
def research_card(agent_card: MakeAgentCard) -> TeamCard:
    return TeamCard(
        name="research-team",
        description="A lead and workers",
        entry_point=TeamCardMember(card=agent_card("@Entry")),
        members=[
            TeamCardMember(
                card=agent_card("@Lead"),
                members=[
                    TeamCardMember(card=agent_card("@Researcher"), headcount=3),
                    TeamCardMember(card=agent_card("@Reviewer")),
                ],
            ),
            TeamCardMember(card=agent_card("@Scribe")),
        ],
        message_types=[UserMessage, ResultMessage],
        agent_profiles=[agent_card("@Translator")],
        welcome_message="Research team ready.",
    )


def test_agent_cards_index_the_whole_tree_entry_point_included(research_card: TeamCard) -> None:
    assert list(research_card.agent_cards) == [
        "@Entry",
        "@Lead",
        "@Researcher",
        "@Reviewer",
        "@Scribe",
    ]


def test_supervisors_are_the_first_layer_of_members_only(research_card: TeamCard) -> None:
    assert [card.config.name for card in research_card.supervisors] == ["@Lead", "@Scribe"]
    assert research_card.supervisor_names == ["@Lead", "@Scribe"]


def test_headcount_renames_instances_with_an_index(research_card: TeamCard) -> None:
    assert research_card.spawned_names == [
        "@Entry",
        "@Lead",
        "@Researcher_0",
        "@Researcher_1",
        "@Researcher_2",
        "@Reviewer",
        "@Scribe",
    ]


def test_the_first_message_type_is_the_team_default(research_card: TeamCard) -> None:
    assert research_card.default_message_type is UserMessage
    bare = research_card.model_copy(update={"message_types": []})
    assert bare.default_message_type is None


def test_a_duplicate_name_in_the_tree_is_refused(agent_card: MakeAgentCard) -> None:
    reused = agent_card("@Worker")
    with pytest.raises(ValidationError, match="duplicate agent name '@Worker'"):
        TeamCard(
            entry_point=TeamCardMember(card=agent_card("@Entry")),
            members=[
                TeamCardMember(card=reused),
                TeamCardMember(card=agent_card("@Boss"), members=[TeamCardMember(card=reused)]),
            ],
        )


def test_agent_cards_raise_on_a_duplicate_even_on_an_unvalidated_card(
    agent_card: MakeAgentCard,
) -> None:
    entry = TeamCardMember(card=agent_card("@Entry"))
    card = TeamCard.model_construct(entry_point=entry, members=[entry])
    with pytest.raises(TeamCardError, match="duplicate agent name '@Entry'"):
        _ = card.agent_cards


def test_a_headcount_rename_colliding_with_another_member_is_refused(
    agent_card: MakeAgentCard,
) -> None:
    with pytest.raises(ValidationError, match="'@R_1' would be spawned twice"):
        TeamCard(
            entry_point=TeamCardMember(card=agent_card("@Entry")),
            members=[
                TeamCardMember(card=agent_card("@R"), headcount=2),
                TeamCardMember(card=agent_card("@R_1")),
            ],
        )


def test_an_entry_point_with_several_instances_is_refused(agent_card: MakeAgentCard) -> None:
    with pytest.raises(ValidationError, match="entry_point '@Entry' must have headcount 1"):
        TeamCard(entry_point=TeamCardMember(card=agent_card("@Entry"), headcount=2))


def test_a_headcount_below_one_is_refused(agent_card: MakeAgentCard) -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        TeamCardMember(card=agent_card("@Worker"), headcount=0)


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (TeamCard, {"entry_point": {"card": {}}, "colour": "red"}),
        (TeamCardMember, {"card": {}, "head_count": 2}),
    ],
)
def test_unknown_keys_are_rejected_by_name(model: type[Any], data: dict[str, Any]) -> None:
    data = dict(data)
    card = {
        "agent_class": "akgentic.core.agent.Akgent",
        "description": "d",
        "config": {"name": "@A", "role": "A"},
    }
    if model is TeamCard:
        data["entry_point"] = {"card": card}
    else:
        data["card"] = card
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    unknown = next(iter(set(data) - {"entry_point", "card"}))
    assert [e["loc"] for e in info.value.errors()] == [(unknown,)]
    assert info.value.errors()[0]["type"] == "extra_forbidden"


def test_the_card_round_trips_through_model_dump(research_card: TeamCard) -> None:
    assert TeamCard.model_validate(research_card.model_dump()) == research_card


def test_the_card_round_trips_through_yaml(research_card: TeamCard) -> None:
    text = research_card.to_yaml()
    assert "__model__" not in text
    assert TeamCard.from_yaml(text) == research_card


def test_a_telemetry_block_round_trips_through_yaml_and_model_dump(
    research_card: TeamCard,
) -> None:
    block = {"endpoint": "http://collector:4318", "capture_content": True}
    card = research_card.model_copy(update={"telemetry": block})
    assert "telemetry:\n  endpoint: http://collector:4318\n" in card.to_yaml()
    assert TeamCard.from_yaml(card.to_yaml()) == card
    assert TeamCard.model_validate(card.model_dump()) == card
    assert "telemetry" not in research_card.to_yaml()  # no block, no key


def test_a_card_written_by_hand_loads_with_dotted_paths_and_type_tags(tmp_path: Path) -> None:
    path = tmp_path / "card.yaml"
    path.write_text(
        """
name: echo-team
entry_point:
  card:
    agent_class: akgentic.core.UserProxy
    description: Team entry point
    config: {name: "@Entry", role: Entry}
members:
  - card:
      agent_class: {__type__: akgentic.core.agent.Akgent}
      description: Echoes messages
      skills: [echo]
      config: {name: "@Echo", role: Echo}
message_types:
  - __type__: akgentic.core.messages.message.UserMessage
  - akgentic.core.messages.message.ResultMessage
metadata_type: akgentic.testing.event_store_contract.ContractMetadata
welcome_message: hi
""",
        encoding="utf-8",
    )
    card = load_team_card(path)
    assert card.entry_point.card.agent_class is UserProxy
    assert card.members[0].card.agent_class is Akgent
    assert card.message_types == [UserMessage, ResultMessage]
    assert card.metadata_type is ContractMetadata
    assert TeamCard.from_file(path) == card


class ReviewerAgent(Akgent[BaseConfig, Any]):
    """An agent class a plugin registers under a short name."""


class Shout(UserMessage):
    """A message type a plugin registers (with a former path as alias)."""


@hookimpl
def akgentic_agent_classes() -> list[AgentClassSpec]:
    return [AgentClassSpec(name="reviewer", agent_class=ReviewerAgent)]


@hookimpl
def akgentic_message_types() -> list[MessageTypeSpec]:
    return [MessageTypeSpec(name="shout", message_class=Shout, aliases=("old.place.Shout",))]


class _NamesPlugin:
    akgentic_agent_classes = staticmethod(akgentic_agent_classes)
    akgentic_message_types = staticmethod(akgentic_message_types)


def test_registered_agent_class_and_message_type_names_resolve(
    register_plugin: Register,
) -> None:
    register_plugin(_NamesPlugin(), "names")
    card = TeamCard.from_yaml(
        """
entry_point:
  card: {agent_class: reviewer, description: d, config: {name: "@Entry", role: Entry}}
message_types: [shout, old.place.Shout]
"""
    )
    assert card.entry_point.card.agent_class is ReviewerAgent
    assert card.message_types == [Shout, Shout]


def test_an_unknown_registered_name_lists_the_registered_ones(register_plugin: Register) -> None:
    register_plugin(_NamesPlugin(), "names")
    with pytest.raises(TeamCardValidationError) as info:
        TeamCard.from_yaml(
            "entry_point:\n"
            "  card: {agent_class: reviewr, description: d, config: {name: '@E', role: E}}\n"
        )
    message = str(info.value)
    assert "unknown agent class 'reviewr'" in message
    assert "registered: reviewer" in message


def test_a_message_type_that_cannot_be_imported_fails_instead_of_being_dropped(
    plugin_host: object,
) -> None:
    with pytest.raises(TeamCardValidationError, match=r"message_types\[1\]: cannot import"):
        TeamCard.from_yaml(
            "entry_point:\n"
            "  card: {agent_class: akgentic.core.agent.Akgent, description: d,\n"
            "         config: {name: '@E', role: E}}\n"
            "message_types:\n"
            "  - akgentic.core.messages.message.UserMessage\n"
            "  - {__type__: akgentic.core.messages.message.NoSuchMessage}\n"
        )


def test_a_class_that_is_not_a_message_is_refused_as_message_type() -> None:
    with pytest.raises(ValidationError, match="is not a Message subclass"):
        TeamCard.model_validate(
            {
                "entry_point": {
                    "card": {
                        "agent_class": "akgentic.core.agent.Akgent",
                        "description": "d",
                        "config": {"name": "@E", "role": "E"},
                    }
                },
                "message_types": ["akgentic.core.agent_config.BaseConfig"],
            }
        )


def test_every_problem_of_a_card_file_is_reported_with_its_line(
    tmp_path: Path, plugin_host: object
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(
        "name: broken\n"
        "entry_point:\n"
        "  card:\n"
        "    agent_class: akgentic.core.agent.Akgent\n"
        "    description: d\n"
        "    config: {name: '@E', role: E}\n"
        "members:\n"
        "  - card:\n"
        "      agent_class: no.such.Agent\n"
        "      description: d\n"
        "      config: {name: '@W', role: W}\n"
        "  - card:\n"
        "      agent_class: akgentic.core.agent.Akgent\n"
        "      description: d\n"
        "      config: {name: '@X', role: X}\n"
        "    headcount: many\n"
        "welcome: hello\n",
        encoding="utf-8",
    )
    with pytest.raises(TeamCardValidationError) as info:
        load_team_card(path)
    problems = {p.location: p for p in info.value.problems}
    assert set(problems) == {"members[0].card", "members[1].headcount", "welcome"}
    assert problems["members[0].card"].line == 9
    assert "no.such.Agent" in problems["members[0].card"].message
    assert problems["members[1].headcount"].line == 16
    assert problems["welcome"].line == 17
    assert str(path) in str(info.value)


def test_a_card_file_that_is_not_yaml_reports_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: [unclosed\nentry_point: x\n", encoding="utf-8")
    with pytest.raises(TeamCardValidationError, match="not valid YAML") as info:
        load_team_card(path)
    assert info.value.problems[0].line is not None


def test_a_missing_card_file_is_a_validation_error(tmp_path: Path) -> None:
    with pytest.raises(TeamCardValidationError, match="cannot read"):
        load_team_card(tmp_path / "missing.yaml")
