"""``ToolFactory``: wires a list of cards to their agent and collects their capabilities."""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from akgentic.tool.commands.registry import CommandRegistry, CommandSource
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.context_state import ContextProvider
from akgentic.tool.core.context_update import ContextUpdater
from akgentic.tool.core.dependencies import sort_by_dependencies
from akgentic.tool.core.observer import ActorToolObserver, ToolObserver, weak_observer
from akgentic.tool.core.params import BaseToolParam
from akgentic.tool.errors import RetriableError

__all__ = ["EXTRA_COMMANDS_OWNER", "ToolFactory", "wrap_retriable"]

EXTRA_COMMANDS_OWNER = "BaseAgent"
"""Owner label of commands the agent adds itself (``extra_commands``)."""


def wrap_retriable(
    func: Callable[..., Any], retry_exception: Callable[[str], BaseException]
) -> Callable[..., Any]:
    """Wrap a tool so that ``RetriableError`` leaves it as ``retry_exception(message)``.

    The wrapper keeps the tool's name, docstring and signature (``functools.wraps``),
    which is what the LLM library reads to build the tool's schema. Coroutine
    functions get a coroutine wrapper.
    """
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return await func(*args, **kwargs)
            except RetriableError as error:
                raise retry_exception(str(error)) from error

        return async_wrapper

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except RetriableError as error:
            raise retry_exception(str(error)) from error

    return wrapper


def _owner(card: ToolCard) -> str:
    return type(card).__name__


def _name_of(func: Callable[..., Any], owner: str, what: str) -> str:
    name = getattr(func, "__name__", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{owner} returned a {what} without a __name__: {func!r}")
    return name


class ToolFactory:
    """Turns an agent's cards into flat lists of capabilities, one list per channel.

    On construction the cards are sorted by ``depends_on`` (see
    :func:`~akgentic.tool.core.dependencies.sort_by_dependencies`; an unsatisfiable
    order raises before any card is touched) and, when an ``observer`` is given, each
    card's ``observer()`` is called in that order. The getters then ask every card's
    hook, in the same order.

    Args:
        tool_cards: The agent's cards.
        observer: The owning agent; held weakly, like the cards hold it.
        retry_exception: The LLM library's "try again" exception (for pydantic-ai,
            ``ModelRetry``). When set, every tool is wrapped so that a
            :class:`~akgentic.tool.errors.RetriableError` becomes this exception.

    Attributes:
        tool_cards: The cards, in wiring order.
    """

    def __init__(
        self,
        tool_cards: Sequence[ToolCard],
        observer: ToolObserver | None = None,
        retry_exception: Callable[[str], BaseException] | None = None,
    ) -> None:
        self.tool_cards: list[ToolCard] = sort_by_dependencies(list(tool_cards))
        self.retry_exception = retry_exception
        self._observer_ref: weakref.ReferenceType[ToolObserver] | None = None
        if observer is not None:
            self._observer_ref = weak_observer(observer)
            for card in self.tool_cards:
                card.observer(observer)

    @property
    def observer(self) -> ToolObserver | None:
        """The observer given at construction, or None (also once it is collected)."""
        return None if self._observer_ref is None else self._observer_ref()

    def get_tools(self) -> list[Callable[..., Any]]:
        """Every card's tool functions, wrapped for retries when configured."""
        tools: list[Callable[..., Any]] = []
        for card in self.tool_cards:
            for tool in card.get_tools():
                retry = self.retry_exception
                tools.append(tool if retry is None else wrap_retriable(tool, retry))
        return tools

    def get_system_prompts(self) -> list[Callable[[], str]]:
        """Every card's static prompt renderers."""
        return [prompt for card in self.tool_cards for prompt in card.get_system_prompts()]

    def get_context_states(self) -> list[ContextProvider]:
        """Every card's context providers.

        Raises:
            ValueError: Two providers share a ``__name__`` (their key in the persisted
                baselines); the message names both cards.
        """
        providers: list[ContextProvider] = []
        owners: dict[str, str] = {}
        for card in self.tool_cards:
            for provider in card.get_context_states():
                name = _name_of(provider, _owner(card), "context provider")
                if name in owners:
                    raise ValueError(
                        f"context provider '{name}' is provided by both {owners[name]} and "
                        f"{_owner(card)}; provider names must be unique per agent"
                    )
                owners[name] = _owner(card)
                providers.append(provider)
        return providers

    def get_context_updater(self) -> ContextUpdater:
        """A :class:`ContextUpdater` over this factory's observer and context providers.

        Raises:
            ValueError: The factory has no observer, the observer is not an
                :class:`ActorToolObserver` (the updater needs its persisted state), or
                two providers share a name.
        """
        observer = self.observer
        if observer is None:
            raise ValueError("get_context_updater() needs a ToolFactory built with an observer")
        if not isinstance(observer, ActorToolObserver):
            raise ValueError(
                f"get_context_updater() needs an ActorToolObserver (with a state carrying "
                f"tool_state); {type(observer).__name__} is not one"
            )
        return ContextUpdater(observer, self.get_context_states())

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        """Every card's commands, keyed by the param class that serves each.

        The callables are the cards' own (no retry wrapping): an orchestrator or a
        script calls them directly. :meth:`get_command_registry` builds the parsed,
        name-keyed form an agent dispatches slash commands through.

        Raises:
            ValueError: Two cards serve a command under the same param class.
        """
        commands: dict[type[BaseToolParam], Callable[..., Any]] = {}
        owners: dict[type[BaseToolParam], str] = {}
        for card in self.tool_cards:
            for key, command in card.get_commands().items():
                if key in commands:
                    raise ValueError(
                        f"command param {key.__name__} is served by both {owners[key]} and "
                        f"{_owner(card)}"
                    )
                owners[key] = _owner(card)
                commands[key] = command
        return commands

    def get_command_registry(
        self, extra_commands: Iterable[Callable[..., Any]] | None = None
    ) -> CommandRegistry:
        """One registry with every card's commands, plus the agent's own.

        Commands are keyed by their callable's ``__name__``. ``extra_commands`` are
        owned by ``"BaseAgent"`` in descriptors and error messages.

        Raises:
            ValueError: Two commands share a name (the message names both owners), or a
                command's signature cannot be parsed from a command line.
        """
        sources: list[CommandSource] = [
            (command, _owner(card))
            for card in self.tool_cards
            for command in card.get_commands().values()
        ]
        sources.extend((command, EXTRA_COMMANDS_OWNER) for command in extra_commands or ())
        return CommandRegistry(sources)

    def get_toolsets(self) -> list[Any]:
        """Every card's ready-made toolsets, for the LLM library."""
        return [toolset for card in self.tool_cards for toolset in card.get_toolsets()]
