"""``ModelTool``: list the agent's model roster and switch between its models at run time.

The card needs an observer meeting :class:`~akgentic.tool.model.ModelSwitchToolObserver`
(``BaseAgent`` does). A switch applies from the next run; the selection is written to
the agent's persisted tool state, so a resumed agent answers on the model it chose.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal, cast

from pydantic import Field

from akgentic.plugin_api import (
    COMMAND,
    LLM_CONTEXT,
    TOOL_CALL,
    BaseToolParam,
    Channels,
    ContextState,
    ModelRow,
    ModelSwitchToolObserver,
    RetriableError,
    ToolCard,
    ToolObserverGone,
)
from akgentic_model.state import ActiveModelState

__all__ = [
    "NO_ROSTER",
    "ActiveModel",
    "ListModels",
    "ModelTool",
    "SwitchModel",
    "render_rows",
    "render_tokens",
]

logger = logging.getLogger(__name__)

NO_ROSTER = "No model roster is configured for this agent, so there is no other model to switch to."


def _both() -> set[Channels]:
    return {TOOL_CALL, COMMAND}


class ListModels(BaseToolParam):
    """``list_models()`` and ``/list_models``: the roster, one line per model."""

    expose: set[Channels] = Field(default_factory=_both)


class SwitchModel(BaseToolParam):
    """``switch_model(model)`` and ``/switch_model``: change the model from the next turn."""

    expose: set[Channels] = Field(default_factory=_both)


class ActiveModel(BaseToolParam):
    """The active model as context state (``instructions`` has no docstring to extend)."""

    expose: set[Channels] = Field(default_factory=lambda: {LLM_CONTEXT})


def render_tokens(count: int) -> str:
    """``512`` -> ``"512"``; ``1500`` -> ``"2k"``; ``262144`` -> ``"262k"``."""
    return str(count) if count < 1000 else f"{round(count / 1000)}k"


def render_rows(rows: list[ModelRow]) -> str:
    """The listing: ``<key> (<detail>)[ [ACTIVE]]`` per row, or the no-roster sentence."""
    if not rows:
        return NO_ROSTER
    lines = []
    for row in rows:
        if row.context_length is not None:
            detail = f"context: {render_tokens(row.context_length)}"
        else:
            detail = "no compaction activated"
        lines.append(f"{row.key} ({detail})" + (" [ACTIVE]" if row.active else ""))
    return "\n".join(lines)


class ModelTool(ToolCard):
    """Model switching: list the roster, switch, and keep the active model in context.

    Example YAML in a team file (humans may switch, the model may only list)::

        tools:
          - card: model
            switch_model: {expose: [command]}
    """

    list_models: ListModels | bool = True
    switch_model: SwitchModel | bool = True
    active_model: ActiveModel | bool = True

    def _switcher(self) -> ModelSwitchToolObserver:
        observer = self._observer  # ToolObserverGone when unwired or gone
        if not isinstance(observer, ModelSwitchToolObserver):
            raise ToolObserverGone(
                f"{type(observer).__name__} cannot list or switch models: ModelTool needs "
                "an agent that meets ModelSwitchToolObserver"
            )
        return observer

    # ---------------------------------------------------------- builders

    def _build_list(self, param: ListModels) -> Callable[[], str]:
        def list_models() -> str:
            """List the models you can switch to, one per line, the active one marked.

            Each line starts with the key to pass to switch_model.
            """
            return render_rows(self._switcher().list_model_rows())

        return param.apply_instructions(list_models)

    def _build_switch_tool(self, param: SwitchModel) -> Callable[[str], str]:
        def switch_model(model: str) -> str:
            """Switch to another model of your roster; it answers from your next turn on.

            When unsure of the keys, call list_models first.

            Args:
                model: The key of a roster line, exactly as listed (provider:model).
            """
            switcher = self._switcher()
            try:
                confirmation = switcher.switch_model(model)
            except RetriableError:
                raise
            except ToolObserverGone:
                raise
            except Exception as error:
                raise RetriableError(f"Cannot switch to {model!r}: {error}") from error
            # Read the chain now: the agent may have replaced its state during the call.
            switcher.state.tool_state.active_model = model
            return confirmation

        return param.apply_instructions(switch_model)

    def _build_switch_command(self, param: SwitchModel) -> Callable[..., str]:
        tool = self._build_switch_tool(param)

        def switch_model(model: str) -> str:
            """Switch this agent to another model of its roster, from its next turn on.

            Args:
                model: The roster key (provider:model); /list_models shows them.
            """
            return tool(model)

        keys = self._roster_keys()
        if keys:
            # A real Literal object, so the registry announces the keys as choices.
            switch_model.__annotations__ = {
                "model": cast(Any, Literal).__getitem__(tuple(keys)),
                "return": str,
            }
        return param.apply_instructions(switch_model)

    def _roster_keys(self) -> list[str]:
        observer = self._observer_or_none()
        if not isinstance(observer, ModelSwitchToolObserver):
            return []
        try:
            return [row.key for row in observer.list_model_rows()]
        except Exception as error:
            logger.warning("ModelTool: the model roster could not be read (%s)", error)
            return []

    def _build_provider(self) -> Callable[[], ContextState | None]:
        def active_model_state() -> ContextState | None:
            observer = self._observer_or_none()
            if not isinstance(observer, ModelSwitchToolObserver):
                return None
            try:
                rows = observer.list_model_rows()
            except Exception:
                logger.warning("ModelTool: the model roster could not be read", exc_info=True)
                return None
            active = next((row for row in rows if row.active), None)
            return None if active is None else ActiveModelState(key=active.key)

        return active_model_state

    # ------------------------------------------------------------ hooks

    def get_tools(self) -> list[Callable[..., Any]]:
        tools: list[Callable[..., Any]] = []
        listing = self._param(self.list_models, ListModels, TOOL_CALL)
        if listing is not None:
            tools.append(self._build_list(listing))
        switch = self._param(self.switch_model, SwitchModel, TOOL_CALL)
        if switch is not None:
            tools.append(self._build_switch_tool(switch))
        return tools

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        commands: dict[type[BaseToolParam], Callable[..., Any]] = {}
        listing = self._param(self.list_models, ListModels, COMMAND)
        if listing is not None:
            commands[ListModels] = self._build_list(listing)
        switch = self._param(self.switch_model, SwitchModel, COMMAND)
        if switch is not None:
            commands[SwitchModel] = self._build_switch_command(switch)
        return commands

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        if self._param(self.active_model, ActiveModel, LLM_CONTEXT) is None:
            return []
        return [self._build_provider()]
