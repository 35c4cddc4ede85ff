"""``SkillTool``: a library of named procedures, listed in the prompt, loaded on demand.

The system prompt carries a menu (one ``name — description`` line per skill); the
model calls ``use_skill(name)`` to get a body when the work at hand matches, and
humans type ``/skills`` to read the same menu. Bodies are never in the prompt, so
the prefix costs one line per skill however long the procedures are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import AliasChoices, Field, field_validator, model_validator

from akgentic.plugin_api import (
    COMMAND,
    SYSTEM_PROMPT,
    TOOL_CALL,
    BaseToolParam,
    Channels,
    RetriableError,
    SerializableBaseModel,
    ToolCard,
)

__all__ = ["MENU_HEADER", "REFERENCE_HEADER", "SkillEntry", "SkillTool", "Skills"]

MENU_HEADER = (
    "**Skills — load before you work.** When your next piece of work is of a kind named "
    "below, call use_skill(name) first and follow what it returns, even if you think you "
    "already know how. Choose by the kind of work, not by its topic."
)
"""First menu line when ``use_skill`` is offered: it obliges the model to load."""

REFERENCE_HEADER = (
    "**Skills of this team (for reference; their full text is not available to you).**"
)
"""First menu line when no ``use_skill`` tool is offered, so no missing tool is named."""

EMPTY_COMMAND_TEXT = "No skills are configured."

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_SEPARATOR = " — "
_ECHO_LIMIT = 100


class SkillEntry(SerializableBaseModel):
    """One skill: a short name, a one-line description for the menu, and its body.

    Attributes:
        name: 1 to 64 characters of letters, digits, ``.``, ``_`` and ``-``, starting with
            a letter or digit (so a name cannot be a path or span menu lines).
        description: One non-blank line of at most 300 characters, without the menu's
            `` — `` separator.
        content: The body returned by ``use_skill``; any non-blank text, never formatted.
    """

    name: str
    description: str
    content: str

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not _NAME.fullmatch(name):
            raise ValueError(
                f"skill name {name[:_ECHO_LIMIT]!r} must be 1-64 letters, digits, '.', '_' or "
                "'-', starting with a letter or digit"
            )
        return name

    @field_validator("description")
    @classmethod
    def _check_description(cls, description: str) -> str:
        if not description.strip():
            raise ValueError("a skill description must not be blank")
        if "\n" in description or "\r" in description:
            raise ValueError("a skill description must be one line")
        if len(description) > 300:
            raise ValueError(f"a skill description is {len(description)} characters; max 300")
        if _SEPARATOR.strip() in description:
            raise ValueError("a skill description must not contain the menu separator '—'")
        return description

    @field_validator("content")
    @classmethod
    def _check_content(cls, content: str) -> str:
        if not content.strip():
            raise ValueError("a skill's content must not be blank")
        return content


class Skills(BaseToolParam):
    """The skill library and the channels it is served on.

    Attributes:
        skills: The entries, in menu order; names are unique ignoring case.
    """

    expose: set[Channels] = Field(default_factory=lambda: {SYSTEM_PROMPT, TOOL_CALL, COMMAND})
    skills: list[SkillEntry] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> Skills:
        seen: dict[str, str] = {}
        for entry in self.skills:
            folded = entry.name.casefold()
            if folded in seen:
                raise ValueError(
                    f"skill name {entry.name!r} repeats {seen[folded]!r} (names are compared "
                    "ignoring case)"
                )
            seen[folded] = entry.name
        return self


def render_menu(param: Skills) -> str:
    """The menu text for ``param``: a header line, then one line per skill."""
    if not param.skills:
        return ""
    header = MENU_HEADER if TOOL_CALL in param.expose else REFERENCE_HEADER
    lines = [f"{entry.name}{_SEPARATOR}{entry.description}" for entry in param.skills]
    return "\n".join([header, *lines])


class SkillTool(ToolCard):
    """Skills: reusable procedures the model loads by name when its work needs them.

    Example YAML in a team file::

        tools:
          - card: skill
            skills:
              skills:
                - name: refund-policy
                  description: Approval rules and amount limits for customer refunds.
                  content: Refunds over 500 EUR need a manager's approval...
    """

    skills: Skills | bool = Field(default=True, validation_alias=AliasChoices("skills", "param"))

    def _library(self, channel: Channels) -> Skills | None:
        return self._param(self.skills, Skills, channel)

    def get_system_prompts(self) -> list[Callable[[], str]]:
        param = self._library(SYSTEM_PROMPT)
        if param is None:
            return []
        menu = render_menu(param)

        def skills() -> str:
            return menu

        return [skills]

    def get_tools(self) -> list[Callable[..., Any]]:
        param = self._library(TOOL_CALL)
        if param is None:
            return []
        bodies = {entry.name: entry.content for entry in param.skills}
        names = ", ".join(bodies)

        def use_skill(name: str) -> str:
            """Load the full text of a skill listed in your system prompt.

            Call it before starting work of the kind a skill names, and follow what it
            returns. Calling it again returns the same text.

            Args:
                name: The skill's name, exactly as listed.
            """
            wanted = name.strip()
            body = bodies.get(wanted)
            if body is not None:
                return f"{wanted}\n\n{body}"
            echoed = wanted[:_ECHO_LIMIT]
            if not bodies:
                raise RetriableError(f"No skill named {echoed!r}; this library is empty.")
            raise RetriableError(f"No skill named {echoed!r}. Known skills: {names}.")

        return [param.apply_instructions(use_skill)]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        param = self._library(COMMAND)
        if param is None:
            return {}
        text = render_menu(param) or EMPTY_COMMAND_TEXT

        def skills() -> str:
            """List the skills this agent can load, one per line."""
            return text

        return {Skills: param.apply_instructions(skills)}
