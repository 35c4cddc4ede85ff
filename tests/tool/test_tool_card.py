"""ToolCard: serializable configuration, private runtime handles, the weak observer."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ConfigDict, PrivateAttr, ValidationError

from akgentic.tool import (
    COMMAND,
    TOOL_CALL,
    BaseToolParam,
    Channels,
    ToolCard,
    ToolObserver,
    ToolObserverGone,
)
from akgentic.tool.testing import RecordingObserver


class Echo(BaseToolParam):
    """Echo the input back."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}
    prefix: str = ""


class EchoTool(ToolCard):
    """A card with one capability and a runtime handle."""

    echo: Echo | bool = True
    _calls: list[str] = PrivateAttr(default_factory=list)

    def get_tools(self) -> list[Callable[..., Any]]:
        param = self._param(self.echo, Echo, TOOL_CALL)
        if param is None:
            return []
        prefix = param.prefix

        def echo(text: str) -> str:
            """Repeat the text."""
            self._calls.append(text)
            return prefix + text

        return [param.apply_instructions(echo)]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        param = self._param(self.echo, Echo, COMMAND)
        return {} if param is None else {Echo: self.get_tools()[0]}


class Agentish:
    """A plain observer object standing in for an agent."""

    def __init__(self) -> None:
        self.events: list[object] = []

    def notify_event(self, event: object) -> None:
        self.events.append(event)


def test_a_card_round_trips_through_model_dump_and_model_validate() -> None:
    card = EchoTool(echo=Echo(prefix="> ", instructions="Use sparingly."))
    again = EchoTool.model_validate(card.model_dump())
    assert again == card
    assert isinstance(again.echo, Echo) and again.echo.prefix == "> "


def test_a_card_round_trips_through_json() -> None:
    card = EchoTool(echo=False)
    assert EchoTool.model_validate_json(card.model_dump_json()) == card


def test_runtime_handles_in_private_attributes_are_not_serialized() -> None:
    card = EchoTool()
    card.get_tools()[0]("hi")
    assert "_calls" not in card.model_dump()
    assert EchoTool.model_validate(card.model_dump())._calls == []


def test_the_dump_carries_the_class_path() -> None:
    dumped = EchoTool().model_dump()
    assert dumped["__model__"].endswith(".EchoTool")


def test_a_misspelt_card_field_is_refused() -> None:
    with pytest.raises(ValidationError, match="ecko"):
        EchoTool.model_validate({"ecko": False})


def test_a_card_class_allowing_arbitrary_types_is_refused_at_definition() -> None:
    with pytest.raises(TypeError, match="arbitrary_types_allowed"):

        class Leaky(ToolCard):
            model_config = ConfigDict(arbitrary_types_allowed=True)

            def get_tools(self) -> list[Callable[..., Any]]:
                return []


def test_the_base_class_is_abstract() -> None:
    with pytest.raises(TypeError):
        ToolCard()  # type: ignore[abstract]


def test_default_hooks_serve_nothing() -> None:
    card = EchoTool()
    assert card.depends_on == []
    assert card.get_system_prompts() == []
    assert card.get_context_states() == []
    assert card.get_toolsets() == []


def test_instructions_reach_the_built_tool_docstring() -> None:
    (tool,) = EchoTool(echo=Echo(instructions="Only echo greetings.")).get_tools()
    assert tool.__doc__ == "Repeat the text.\n\nAdditional Instructions:\nOnly echo greetings."


def test_a_capability_set_to_false_is_not_served() -> None:
    assert EchoTool(echo=False).get_tools() == []


def test_a_capability_not_exposed_on_a_channel_is_not_served_there() -> None:
    card = EchoTool(echo=Echo(expose={TOOL_CALL}))
    assert len(card.get_tools()) == 1
    assert card.get_commands() == {}


def test_observer_returns_the_card_for_chaining() -> None:
    agent = Agentish()
    card = EchoTool()
    assert card.observer(agent) is card
    assert card._observer is agent
    assert card._observer_or_none() is agent


def test_the_observer_is_held_weakly() -> None:
    agent = Agentish()
    card = EchoTool().observer(agent)
    del agent
    gc.collect()
    assert card._observer_or_none() is None


def test_a_collected_observer_raises_tool_observer_gone() -> None:
    agent = Agentish()
    card = EchoTool().observer(agent)
    del agent
    gc.collect()
    with pytest.raises(ToolObserverGone, match="stopped"):
        _ = card._observer


def test_a_card_never_wired_says_so() -> None:
    card = EchoTool()
    assert card._observer_or_none() is None
    with pytest.raises(ToolObserverGone, match="no observer"):
        _ = card._observer


class AssigningEchoTool(EchoTool):
    """A card attaching its observer by assignment, the pattern older cards use."""

    def observer(self, observer: ToolObserver) -> AssigningEchoTool:
        self._observer = observer
        return self


def test_assigning_the_observer_attribute_also_stores_it_weakly() -> None:
    agent = Agentish()
    card = AssigningEchoTool().observer(agent)
    attached = card._observer_or_none() is agent
    del agent
    gc.collect()
    assert attached
    assert card._observer_or_none() is None


def test_an_observer_that_cannot_be_weakly_referenced_is_refused() -> None:
    class Slotted:
        __slots__ = ()

        def notify_event(self, event: object) -> None:
            return None

    with pytest.raises(TypeError, match="weak"):
        EchoTool().observer(Slotted())


def test_the_observer_is_not_part_of_the_serialized_card() -> None:
    card = EchoTool().observer(RecordingObserver())
    assert EchoTool.model_validate(card.model_dump())._observer_or_none() is None
