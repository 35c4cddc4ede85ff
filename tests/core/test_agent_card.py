"""AgentCard and BaseConfig: strict construction, tolerant loading, config coercion."""

from __future__ import annotations

import logging
from typing import Any, Generic, TypeVar

import pydantic
import pytest

from akgentic.core import AgentCard, BaseConfig, BaseState
from akgentic.core.agent import Akgent
from akgentic.core.agent_card import config_type_of
from akgentic.core.utils import deserialize_object


class RichConfig(BaseConfig):
    prompt: str = "default prompt"
    temperature: float = 0.0


class RichAgent(Akgent[RichConfig, BaseState]):
    pass


class IndirectAgent(RichAgent):
    pass


C = TypeVar("C", bound=BaseConfig)


class GenericAgent(Akgent[C, BaseState], Generic[C]):
    pass


class NotAnAgent:
    pass


def test_config_models_reject_unknown_keys() -> None:
    with pytest.raises(pydantic.ValidationError, match="Extra inputs are not permitted"):
        BaseConfig(name="@A", rol="typo")  # type: ignore[call-arg]


def test_stored_config_payloads_with_removed_fields_still_load(
    caplog: pytest.LogCaptureFixture,
) -> None:
    payload = BaseConfig(name="@A", role="A").model_dump()
    payload["retired_option"] = True
    with caplog.at_level(logging.WARNING):
        restored = deserialize_object(payload)
    assert restored.name == "@A"
    assert "retired_option" in caplog.text


def test_a_role_keyword_on_the_card_explains_where_the_role_goes() -> None:
    with pytest.raises(pydantic.ValidationError, match=r"config\.role"):
        AgentCard(role="Dev", agent_class=RichAgent, description="d")  # type: ignore[call-arg]


def test_unknown_card_keys_are_rejected() -> None:
    with pytest.raises(pydantic.ValidationError):
        AgentCard(
            agent_class=RichAgent,
            description="d",
            config=BaseConfig(role="R"),
            skils=["typo"],  # type: ignore[call-arg]
        )


def test_an_empty_role_is_rejected() -> None:
    with pytest.raises(pydantic.ValidationError, match="role"):
        AgentCard(agent_class=RichAgent, description="d")


def test_the_role_is_read_from_the_config_and_not_dumped() -> None:
    card = AgentCard(agent_class=RichAgent, description="d", config=BaseConfig(role="Dev"))
    assert card.role == "Dev"
    assert "role" not in card.model_dump()


@pytest.mark.parametrize(
    ("agent_class", "expected"),
    [
        (RichAgent, RichConfig),
        (IndirectAgent, RichConfig),
        (GenericAgent, BaseConfig),
        (NotAnAgent, BaseConfig),
    ],
)
def test_dict_configs_are_coerced_to_the_agent_config_type(
    agent_class: type, expected: type
) -> None:
    card = AgentCard(
        agent_class=agent_class,
        description="d",
        config={"name": "@X", "role": "X"},
    )
    assert type(card.config) is expected


def test_config_type_lookup_is_cached_per_class() -> None:
    assert config_type_of(IndirectAgent) is RichConfig
    assert config_type_of(IndirectAgent) is RichConfig


def test_a_yaml_like_card_with_a_dotted_class_path_loads_a_rich_config() -> None:
    data: dict[str, Any] = {
        "agent_class": f"{RichAgent.__module__}.RichAgent",
        "description": "from yaml",
        "skills": ["a"],
        "config": {"name": "@Y", "role": "Y", "prompt": "be brief"},
    }
    card = AgentCard.model_validate(data)
    assert isinstance(card.config, RichConfig) and card.config.prompt == "be brief"
    assert card.get_agent_class() is RichAgent


def test_an_unresolvable_agent_class_fails_validation() -> None:
    with pytest.raises(pydantic.ValidationError):
        AgentCard.model_validate(
            {"agent_class": "nowhere.Agent", "description": "d", "config": {"role": "R"}}
        )


def test_get_agent_class_requires_a_dotted_path() -> None:
    card = AgentCard(agent_class="Unqualified", description="d", config=BaseConfig(role="R"))
    with pytest.raises(ValueError, match="dotted"):
        card.get_agent_class()


def test_get_config_copy_is_independent() -> None:
    card = AgentCard(agent_class=RichAgent, description="d", config=RichConfig(role="R"))
    copy = card.get_config_copy()
    copy.name = "@Changed"
    assert card.config.name == "" and isinstance(copy, RichConfig)


def test_a_card_round_trips_with_its_class_as_a_type_marker() -> None:
    card = AgentCard(
        agent_class=RichAgent,
        description="d",
        skills=["x"],
        routes_to=["QA"],
        can_be_hired=True,
        config=RichConfig(name="@R", role="R", prompt="p"),
    )
    dumped = card.model_dump()
    assert dumped["agent_class"] == {"__type__": f"{RichAgent.__module__}.RichAgent"}
    restored = AgentCard.model_validate(dumped)
    assert restored.agent_class is RichAgent
    assert isinstance(restored.config, RichConfig) and restored.config.prompt == "p"
    assert restored.can_be_hired and restored.can_route_to("QA") and not restored.can_route_to("X")
    string_card = AgentCard(agent_class="a.B", description="d", config=BaseConfig(role="R"))
    assert string_card.model_dump()["agent_class"] == "a.B"
    assert string_card.can_route_to("anyone") and string_card.has_skill("x") is False
