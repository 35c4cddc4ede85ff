"""``MetadataTool``: the team's business metadata, rendered once into the system prompt.

An operator writes one template (``"FY {fiscal_year}, {engagement}"``); the card
fills it from the metadata set with ``Orchestrator.set_metadata()``. The first
successful render is kept for the card's life, so the prompt prefix stays
byte-stable even when the metadata changes later. Rendering never raises: every
failure gives an empty prompt, a log line (once per reason) and a sentence for
``/team_metadata``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, field_validator, model_validator

from akgentic.plugin_api import (
    COMMAND,
    SYSTEM_PROMPT,
    BaseToolParam,
    Channels,
    ToolCard,
    ToolObserver,
)
from akgentic_metadata.template import TemplateError, placeholders, render

__all__ = ["MetadataTool", "RenderMetadata"]

logger = logging.getLogger(__name__)

ASK_TIMEOUT_S = 5.0
"""How long ``observer()`` and a render wait for the orchestrator's metadata."""

_PREFIX = "No team metadata block: "
NOT_IN_TEAM = _PREFIX + "this agent is not part of a team."
NO_METADATA = _PREFIX + "the team has no metadata yet."
NOT_A_MODEL = _PREFIX + "the team metadata is not a model."
RENDER_FAILED = _PREFIX + "rendering failed."


class RenderMetadata(BaseToolParam):
    """How the metadata block is written.

    Attributes:
        template: ``str.format`` text with bare field names of the metadata model
            (``{fiscal_year}``); ``{{`` and ``}}`` are literal braces.
        header: One line shown in bold above the block; None or ``""`` for none.
    """

    expose: set[Channels] = Field(default_factory=lambda: {SYSTEM_PROMPT, COMMAND})
    template: str
    header: str | None = None

    @field_validator("template")
    @classmethod
    def _check_template(cls, template: str) -> str:
        if not template.strip():
            raise ValueError("the metadata template must not be blank")
        placeholders(template)  # TemplateError is a ValueError: a validation error
        return template

    @field_validator("header")
    @classmethod
    def _check_header(cls, header: str | None) -> str | None:
        if header is not None and ("\n" in header or "\r" in header):
            raise ValueError("the metadata header must be one line")
        return header


def _fields_of(model: BaseModel) -> list[str]:
    cls = type(model)
    return [*cls.model_fields, *cls.model_computed_fields]


class _Unrenderable(Exception):  # noqa: N818 - internal signal, never escapes
    def __init__(self, command_text: str, log_level: int, log_text: str) -> None:
        super().__init__(log_text)
        self.command_text = command_text
        self.log_level = log_level


class MetadataTool(ToolCard):
    """The team's metadata as a block of the system prompt and a ``/team_metadata`` command.

    Shipped off: give it a template to serve anything. Example YAML::

        tools:
          - card: metadata
            render_metadata:
              template: "Fiscal year {fiscal_year}; engagement: {engagement}"
              header: Team context
    """

    render_metadata: RenderMetadata | bool = False

    _snapshot: str | None = PrivateAttr(default=None)
    _logged: set[str] = PrivateAttr(default_factory=set)

    @model_validator(mode="after")
    def _no_default_template(self) -> MetadataTool:
        if self.render_metadata is True:
            raise ValueError(
                "render_metadata has no default template: pass "
                "RenderMetadata(template=...) (in YAML, a mapping with a template key)"
            )
        return self

    # ------------------------------------------------------------ wiring

    def observer(self, observer: ToolObserver) -> MetadataTool:
        """Attach the agent; check the template's names now when the team has metadata.

        Raises:
            ValueError: The team already holds metadata and a placeholder is not one
                of its fields (the message names the placeholder, class and fields).
        """
        super().observer(observer)
        self._snapshot = None
        self._logged = set()
        param = resolve_render(self.render_metadata)
        if param is None:
            return self
        try:
            metadata = self._read_metadata()
        except _Unrenderable:
            return self  # no team, no metadata or no answer: checked at first render
        if isinstance(metadata, BaseModel):
            fields = _fields_of(metadata)
            for name in placeholders(param.template):
                if name not in fields:
                    raise ValueError(
                        f"metadata template placeholder {{{name}}} is not a field of "
                        f"{type(metadata).__name__} (fields: {', '.join(fields) or 'none'})"
                    )
        return self

    def _read_metadata(self) -> Any:
        observer = self._observer_or_none()
        address = getattr(observer, "orchestrator", None) if observer is not None else None
        if observer is None or address is None:
            raise _Unrenderable(NOT_IN_TEAM, logging.ERROR, "not part of a team")
        try:
            metadata = observer.proxy_ask(address, timeout=ASK_TIMEOUT_S).get_metadata()  # type: ignore[attr-defined]
        except Exception as error:  # a stopped or unreachable orchestrator
            raise _Unrenderable(NOT_IN_TEAM, logging.ERROR, f"no answer ({error})") from error
        if metadata is None:
            raise _Unrenderable(NO_METADATA, logging.WARNING, "the team has no metadata yet")
        return metadata

    # ----------------------------------------------------------- render

    def _render(self, param: RenderMetadata) -> tuple[str, str]:
        """(prompt text, command text); caches the first successful block."""
        if self._snapshot is not None:
            return self._snapshot, self._snapshot
        try:
            block = self._render_block(param)
        except _Unrenderable as failure:
            self._log_once(failure.log_level, str(failure))
            return "", failure.command_text
        except Exception:
            if "traceback" not in self._logged:
                self._logged.add("traceback")
                logger.exception("MetadataTool: rendering the team metadata failed")
            return "", RENDER_FAILED
        self._snapshot = block
        return block, block

    def _render_block(self, param: RenderMetadata) -> str:
        metadata = self._read_metadata()
        if not isinstance(metadata, BaseModel):
            raise _Unrenderable(NOT_A_MODEL, logging.ERROR, "the team metadata is not a model")
        fields = _fields_of(metadata)
        names = placeholders(param.template)
        for name in names:
            if name not in fields:
                cls = type(metadata).__name__
                raise _Unrenderable(
                    f"{_PREFIX}{{{name}}} is not a field of {cls}.",
                    logging.ERROR,
                    f"{{{name}}} is not a field of {cls} (fields: {', '.join(fields)})",
                )
        try:
            body = render(param.template, {n: str(getattr(metadata, n)) for n in names})
        except TemplateError as error:  # unreachable after construction; kept explicit
            raise _Unrenderable(RENDER_FAILED, logging.ERROR, str(error)) from error
        return f"**{param.header}**\n{body}" if param.header else body

    def _log_once(self, level: int, reason: str) -> None:
        if reason not in self._logged:
            self._logged.add(reason)
            logger.log(level, "MetadataTool: no metadata block (%s)", reason)

    # ------------------------------------------------------------ hooks

    def get_tools(self) -> list[Callable[..., Any]]:
        return []

    def get_system_prompts(self) -> list[Callable[[], str]]:
        param = self._param(resolve_render(self.render_metadata), RenderMetadata, SYSTEM_PROMPT)
        if param is None:
            return []

        def team_metadata() -> str:
            return self._render(param)[0]

        return [team_metadata]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        param = self._param(resolve_render(self.render_metadata), RenderMetadata, COMMAND)
        if param is None:
            return {}

        def team_metadata() -> str:
            """Show the team metadata block this agent has in its system prompt."""
            return self._render(param)[1]

        return {RenderMetadata: param.apply_instructions(team_metadata)}


def resolve_render(value: RenderMetadata | bool) -> RenderMetadata | None:
    """The configured param, or None when off (``True`` is refused at construction)."""
    return value if isinstance(value, RenderMetadata) else None
