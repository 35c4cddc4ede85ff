"""ToolFactory: dependency order, observer wiring, retry translation, aggregation."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

from akgentic.tool import (
    COMMAND,
    LLM_CONTEXT,
    SYSTEM_PROMPT,
    TOOL_CALL,
    BaseToolParam,
    Channels,
    CommandRegistry,
    ContextState,
    ContextUpdater,
    RetriableError,
    ToolCard,
    ToolFactory,
    ToolObserver,
)
from akgentic.tool.testing import RecordingObserver

WIRED: list[str] = []


class Retry(Exception):  # noqa: N818 - mirrors pydantic-ai's ModelRetry
    """Stand-in for the LLM library's retry exception."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Note(ContextState):
    """A one-line context state."""

    text: str

    def render_full(self) -> str:
        return self.text

    def render_delta(self, previous: Note) -> str | None:
        return None if previous.text == self.text else self.text


class Ops(BaseToolParam):
    """Capability of the test cards, on every channel."""

    expose: set[Channels] = {TOOL_CALL, COMMAND, LLM_CONTEXT, SYSTEM_PROMPT}


class Base(ToolCard):
    """Records wiring order; serves one of each capability named after the class."""

    needs: ClassVar[list[str]] = []
    ops: Ops | bool = True

    @property
    def depends_on(self) -> list[str]:
        return list(self.needs)

    def observer(self, observer: ToolObserver) -> Base:
        super().observer(observer)
        WIRED.append(type(self).__name__)
        return self

    def get_tools(self) -> list[Callable[..., Any]]:
        if self._param(self.ops, Ops, TOOL_CALL) is None:
            return []
        label = type(self).__name__.lower()

        def tool(value: int, flag: bool = False) -> str:
            """Do the thing."""
            if value < 0:
                raise RetriableError(f"{label}: value must be positive")
            if value == 0:
                raise KeyError("zero")
            return f"{label}:{value}:{flag}"

        tool.__name__ = f"{label}_tool"
        return [tool]

    def get_system_prompts(self) -> list[Callable[[], str]]:
        return [lambda: f"You have {type(self).__name__}."]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        def provider() -> ContextState | None:
            return Note(text=type(self).__name__)

        provider.__name__ = f"{type(self).__name__.lower()}_state"
        return [provider]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        label = type(self).__name__.lower()

        def command() -> str:
            """Report the card."""
            return label

        command.__name__ = f"{label}_cmd"
        return {Ops: command}

    def get_toolsets(self) -> list[Any]:
        return [f"{type(self).__name__}-toolset"]


class A(Base):
    """No dependency."""


class B(Base):
    """Needs A."""

    needs: ClassVar[list[str]] = ["A"]


class C(Base):
    """Needs B."""

    needs: ClassVar[list[str]] = ["B"]


class D(Base):
    """Needs A and C."""

    needs: ClassVar[list[str]] = ["A", "C"]


class Loop1(Base):
    """Part of a cycle."""

    needs: ClassVar[list[str]] = ["Loop2"]


class Loop2(Base):
    """Part of a cycle."""

    needs: ClassVar[list[str]] = ["Loop1"]


class SameStateName(Base):
    """Provides a context provider named like A's."""

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        def a_state() -> ContextState | None:
            return None

        return [a_state]


class SameCommandName(Base):
    """Provides a command named like A's."""

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        def a_cmd() -> str:
            """Clash."""
            return "clash"

        return {Ops: a_cmd}


class AsyncTool(Base):
    """A card whose tool is a coroutine function."""

    def get_tools(self) -> list[Callable[..., Any]]:
        async def fetch(url: str) -> str:
            """Fetch a page."""
            raise RetriableError(f"cannot reach {url}")

        return [fetch]


class Report(BaseToolParam):
    """A command-only capability with a param class of its own."""

    expose: set[Channels] = {COMMAND}


class Reporter(ToolCard):
    """Serves one command, under ``Report``, and nothing else."""

    report: Report | bool = True

    def get_tools(self) -> list[Callable[..., Any]]:
        return []

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        if self._param(self.report, Report, COMMAND) is None:
            return {}

        def report(topic: str) -> str:
            """Report on a topic."""
            if not topic:
                raise RetriableError("name a topic")
            return f"report on {topic}"

        return {Report: report}


@pytest.fixture(autouse=True)
def _clear_wiring_log() -> None:
    WIRED.clear()


def _names(cards: list[ToolCard]) -> list[str]:
    return [type(card).__name__ for card in cards]


def test_cards_are_sorted_after_their_dependencies() -> None:
    factory = ToolFactory([D(), C(), B(), A()])
    assert _names(factory.tool_cards) == ["A", "B", "C", "D"]


def test_independent_cards_keep_their_given_order() -> None:
    assert _names(ToolFactory([B(), A(), Base()]).tool_cards) == ["A", "Base", "B"]
    assert _names(ToolFactory([Base(), A()]).tool_cards) == ["Base", "A"]


def test_the_order_is_deterministic() -> None:
    orders = {tuple(_names(ToolFactory([C(), Base(), B(), A(), D()]).tool_cards)) for _ in "xyz"}
    assert orders == {("Base", "A", "B", "C", "D")}


def test_observers_are_attached_in_dependency_order() -> None:
    observer = RecordingObserver()
    factory = ToolFactory([C(), B(), A()], observer=observer)
    assert WIRED == ["A", "B", "C"]
    assert all(card._observer_or_none() is observer for card in factory.tool_cards)


def test_without_an_observer_nothing_is_wired() -> None:
    factory = ToolFactory([A()])
    assert WIRED == []
    assert factory.observer is None


def test_a_missing_dependency_fails_before_any_card_is_wired() -> None:
    with pytest.raises(ValueError, match="B depends on A"):
        ToolFactory([Base(), B()], observer=RecordingObserver())
    assert WIRED == []


def test_a_dependency_cycle_fails_before_any_card_is_wired() -> None:
    with pytest.raises(ValueError, match="cycle among: Loop1, Loop2"):
        ToolFactory([A(), Loop1(), Loop2()], observer=RecordingObserver())
    assert WIRED == []


def test_a_retriable_error_becomes_the_injected_retry_exception() -> None:
    (tool,) = ToolFactory([A()], retry_exception=Retry).get_tools()
    with pytest.raises(Retry) as error:
        tool(-1)
    assert error.value.message == "a: value must be positive"
    assert isinstance(error.value.__cause__, RetriableError)


def test_other_exceptions_pass_through_the_retry_wrapper() -> None:
    (tool,) = ToolFactory([A()], retry_exception=Retry).get_tools()
    with pytest.raises(KeyError):
        tool(0)


def test_the_wrapped_tool_keeps_its_name_docstring_and_signature() -> None:
    (original,) = A().get_tools()
    (wrapped,) = ToolFactory([A()], retry_exception=Retry).get_tools()
    assert wrapped.__name__ == "a_tool"
    assert wrapped.__doc__ == "Do the thing."
    assert inspect.signature(wrapped) == inspect.signature(original)
    assert wrapped(2, flag=True) == "a:2:True"


def test_a_coroutine_tool_gets_a_coroutine_wrapper() -> None:
    (wrapped,) = ToolFactory([AsyncTool()], retry_exception=Retry).get_tools()
    assert inspect.iscoroutinefunction(wrapped)
    assert wrapped.__name__ == "fetch"
    with pytest.raises(Retry, match="cannot reach x"):
        asyncio.run(wrapped("x"))


def test_without_a_retry_exception_tools_are_returned_unwrapped() -> None:
    (tool,) = ToolFactory([A()]).get_tools()
    with pytest.raises(RetriableError):
        tool(-1)


def test_each_getter_collects_every_card_in_dependency_order() -> None:
    factory = ToolFactory([B(), A()])
    assert [tool.__name__ for tool in factory.get_tools()] == ["a_tool", "b_tool"]
    assert [prompt() for prompt in factory.get_system_prompts()] == ["You have A.", "You have B."]
    assert [p.__name__ for p in factory.get_context_states()] == ["a_state", "b_state"]
    assert factory.get_toolsets() == ["A-toolset", "B-toolset"]


def test_a_capability_turned_off_is_not_collected() -> None:
    assert ToolFactory([A(ops=False)]).get_tools() == []


def test_two_providers_with_one_name_are_refused_naming_both_cards() -> None:
    factory = ToolFactory([A(), SameStateName()])
    with pytest.raises(ValueError, match="'a_state' is provided by both A and SameStateName"):
        factory.get_context_states()


def test_the_command_registry_holds_every_card_command_with_its_owner() -> None:
    registry = ToolFactory([B(), A()]).get_command_registry()
    assert isinstance(registry, CommandRegistry)
    assert [(d.name, d.tool_card) for d in registry.descriptors()] == [
        ("a_cmd", "A"),
        ("b_cmd", "B"),
    ]
    assert registry.dispatch("/b_cmd") == "b"


def test_get_commands_maps_each_param_class_to_its_card_command_in_order() -> None:
    commands = ToolFactory([Reporter(), A()]).get_commands()
    assert list(commands) == [Report, Ops]
    assert commands[Report]("sales") == "report on sales"
    assert commands[Ops]() == "a"


def test_get_commands_are_the_cards_own_callables_without_retry_wrapping() -> None:
    commands = ToolFactory([Reporter()], retry_exception=Retry).get_commands()
    assert commands[Report].__name__ == "report"
    # Code calls commands directly, so the card's own error reaches it.
    with pytest.raises(RetriableError, match="name a topic"):
        commands[Report]("")


def test_a_command_turned_off_is_not_in_get_commands() -> None:
    assert ToolFactory([Reporter(report=False), A()]).get_commands().keys() == {Ops}


def test_two_cards_serving_one_param_class_are_refused_by_get_commands() -> None:
    with pytest.raises(ValueError, match="command param Ops is served by both A and B"):
        ToolFactory([A(), B()]).get_commands()


def test_extra_commands_are_owned_by_the_agent() -> None:
    def clear() -> str:
        """Forget the conversation."""
        return "cleared"

    registry = ToolFactory([A()]).get_command_registry(extra_commands=[clear])
    assert registry.callable("clear")() == "cleared"
    assert registry.descriptors()[-1].tool_card == "BaseAgent"


def test_two_cards_offering_one_command_name_are_refused_naming_both() -> None:
    with pytest.raises(ValueError, match="'a_cmd' is provided by both A and SameCommandName"):
        ToolFactory([A(), SameCommandName()]).get_command_registry()


def test_an_extra_command_clashing_with_a_card_command_is_refused() -> None:
    def a_cmd() -> str:
        """Clash."""
        return "x"

    with pytest.raises(ValueError, match="both A and BaseAgent"):
        ToolFactory([A()]).get_command_registry(extra_commands=[a_cmd])


def test_the_context_updater_uses_the_factory_observer_and_providers() -> None:
    observer = RecordingObserver()
    updater = ToolFactory([A(), B()], observer=observer).get_context_updater()
    assert isinstance(updater, ContextUpdater)
    assert updater.provider_names == ["a_state", "b_state"]
    assert updater.compose_update([]) == "**Context update 1** — current state.\n\nA\n\nB"


def test_a_context_updater_needs_an_observer() -> None:
    with pytest.raises(ValueError, match="with an observer"):
        ToolFactory([A()]).get_context_updater()


def test_a_context_updater_needs_an_actor_tool_observer() -> None:
    class EventsOnly:
        def notify_event(self, event: object) -> None:
            return None

    observer = EventsOnly()
    with pytest.raises(ValueError, match="needs an ActorToolObserver"):
        ToolFactory([A()], observer=observer).get_context_updater()


def test_a_context_updater_refuses_duplicate_provider_names() -> None:
    observer = RecordingObserver()
    factory = ToolFactory([A(), SameStateName()], observer=observer)
    with pytest.raises(ValueError, match="both A and SameStateName"):
        factory.get_context_updater()


def test_an_observer_that_cannot_be_weakly_referenced_is_refused_by_the_factory() -> None:
    class Slotted:
        __slots__ = ()

        def notify_event(self, event: object) -> None:
            return None

    with pytest.raises(TypeError, match="weak references so that tools never keep"):
        ToolFactory([A()], observer=Slotted())
