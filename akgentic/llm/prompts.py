"""Prompt templates and small ready-made system-prompt functions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["PromptTemplate", "current_datetime_prompt", "json_output_reminder_prompt"]


class PromptTemplate(BaseModel):
    """A ``str.format`` template plus the values to fill it with.

    ``render()`` raises KeyError when the template names a parameter that
    ``params`` lacks; write literal braces as ``{{`` and ``}}``.
    """

    model_config = ConfigDict(extra="forbid")

    template: str = "You are a useful assistant"
    params: dict[str, str] = {}

    def render(self) -> str:
        """The template with every ``{name}`` replaced from ``params``."""
        return self.template.format(**self.params)


def current_datetime_prompt(ctx: Any = None) -> str:
    """A system-prompt function telling the model the local date and time (to the minute)."""
    return f"The current date and time is {datetime.now():%Y-%m-%d %H:%M}."


def json_output_reminder_prompt(ctx: Any = None) -> str:
    """A system-prompt function for models without native structured output."""
    return (
        "Answer with a single valid JSON object that matches the requested schema, "
        "and nothing else: no prose, no code fences."
    )
