"""``ShoutTool``: a small third-party tool card that uses all four channels.

- ``TOOL_CALL``: the model calls ``shout(text)``;
- ``COMMAND``: a human types ``/shout some text`` (same callable, built once per hook);
- ``SYSTEM_PROMPT``: a static rule about when shouting is appropriate;
- ``LLM_CONTEXT``: a :class:`ShoutLog` state, so the model keeps seeing how much it
  has shouted, delivered as deltas.

Each shout is also published as a :class:`Shouted` event through the observer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field, PrivateAttr

from akgentic.plugin_api import (
    COMMAND,
    LLM_CONTEXT,
    SYSTEM_PROMPT,
    TOOL_CALL,
    BaseToolParam,
    Channels,
    ContextState,
    RestOfLine,
    RetriableError,
    SerializableBaseModel,
    ToolCard,
)

__all__ = ["Shout", "ShoutLog", "ShoutLogState", "ShoutRules", "ShoutTool", "Shouted"]


class Shout(BaseToolParam):
    """The ``shout`` capability: on the model's tool list and as ``/shout``.

    Attributes:
        suffix: Appended to every shout (read when the callable is built).
        max_length: Longest text accepted; longer input is refused with a retry hint.
    """

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL, COMMAND})
    suffix: str = "!"
    max_length: int = 200


class ShoutRules(BaseToolParam):
    """Static guidance in the system prompt about when to shout."""

    expose: set[Channels] = Field(default_factory=lambda: {SYSTEM_PROMPT})
    rule: str = "Shout only when something is urgent; otherwise speak normally."


class ShoutLog(BaseToolParam):
    """The running tally of shouts, delivered to the model as context state.

    Attributes:
        recent: How many of the latest shouts the full view lists.
    """

    expose: set[Channels] = Field(default_factory=lambda: {LLM_CONTEXT})
    recent: int = 3


class Shouted(SerializableBaseModel):
    """Event published each time the card shouts."""

    text: str


class ShoutLogState(ContextState):
    """How many shouts so far, and the latest ones."""

    count: int
    latest: list[str]

    def render_full(self) -> str:
        if not self.count:
            return "You have not shouted yet."
        return f"You have shouted {self.count} time(s); latest: " + " | ".join(self.latest)

    def render_delta(self, previous: ShoutLogState) -> str | None:
        new = self.count - previous.count
        if new == 0:
            return None
        if new < 0:
            return self.render_full()
        return f"{new} new shout(s) since last update; {self.count} in total."


class ShoutTool(ToolCard):
    """Shouting, as a tool, a command, a prompt rule and a context state.

    Example YAML in a team file::

        tools:
          - card: shout
            shout: {suffix: "!!", instructions: "Never shout at the user."}
            rules: false
    """

    shout: Shout | bool = True
    rules: ShoutRules | bool = True
    log: ShoutLog | bool = True

    _shouts: list[str] = PrivateAttr(default_factory=list)

    def _build_shout(self, param: Shout) -> Callable[..., str]:
        # One builder for both hooks: the tool and the command must behave the same.
        suffix, limit = param.suffix, param.max_length

        def shout(text: RestOfLine) -> str:
            """Repeat a text in capitals, loudly.

            Args:
                text: What to shout.
            """
            cleaned = text.strip()
            if not cleaned:
                raise RetriableError("Nothing to shout: pass a non-empty text.")
            if len(cleaned) > limit:
                raise RetriableError(f"Too long to shout: keep it under {limit} characters.")
            loud = cleaned.upper() + suffix
            self._shouts.append(loud)
            observer = self._observer_or_none()  # the closure may outlive its agent
            if observer is not None:
                observer.notify_event(Shouted(text=loud))
            return loud

        return param.apply_instructions(shout)

    def get_tools(self) -> list[Callable[..., Any]]:
        param = self._param(self.shout, Shout, TOOL_CALL)
        return [] if param is None else [self._build_shout(param)]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        param = self._param(self.shout, Shout, COMMAND)
        return {} if param is None else {Shout: self._build_shout(param)}

    def get_system_prompts(self) -> list[Callable[[], str]]:
        param = self._param(self.rules, ShoutRules, SYSTEM_PROMPT)
        if param is None:
            return []
        rule = param.rule

        def shout_rules() -> str:
            return rule

        return [shout_rules]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        param = self._param(self.log, ShoutLog, LLM_CONTEXT)
        if param is None:
            return []
        recent = param.recent

        def shout_log() -> ContextState | None:
            shouts = list(self._shouts)
            return ShoutLogState(count=len(shouts), latest=shouts[-recent:] if recent else [])

        return [shout_log]
