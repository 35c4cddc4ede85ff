"""Static configuration of an actor: :class:`BaseConfig`.

``AgentConfig`` is still importable from here and from ``akgentic.core`` as an alias of
``BaseConfig``; it warns, because ``akgentic.agent.AgentConfig`` is another class.
"""

from __future__ import annotations

import warnings
from typing import Any
from uuid import UUID

from pydantic import ConfigDict, Field

from akgentic.core.utils.serializer import SerializableBaseModel

__all__ = ["AgentConfig", "BaseConfig", "ReadOnlyField"]  # noqa: F822 - AgentConfig is served by __getattr__


class BaseConfig(SerializableBaseModel):
    """Name, role and squad of an actor; subclass it to add agent settings.

    Unknown keyword arguments are rejected (a typo must not be silently lost);
    stored payloads written by an older version still load, see the serializer.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    role: str = ""
    squad_id: UUID | None = None


def __getattr__(name: str) -> Any:
    if name == "AgentConfig":
        return deprecated_agent_config(stacklevel=3)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def deprecated_agent_config(stacklevel: int) -> type[BaseConfig]:
    """``BaseConfig``, under its old core name ``AgentConfig``, with a DeprecationWarning.

    The old name stays importable, but it is easily taken for ``akgentic.agent.AgentConfig``
    (the LLM agent's richer configuration), so using it says which class it is.
    """
    warnings.warn(
        "akgentic.core.AgentConfig is akgentic.core.BaseConfig (an actor's name, role "
        "and squad); import BaseConfig, or akgentic.agent.AgentConfig for an LLM agent",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return BaseConfig


def ReadOnlyField(default: Any = ..., **kwargs: Any) -> Any:  # noqa: N802 - named like pydantic's Field
    """A pydantic ``Field`` flagged ``readOnly`` in the JSON schema."""
    extra = dict(kwargs.pop("json_schema_extra", None) or {})
    extra["readOnly"] = True
    return Field(default, json_schema_extra=extra, **kwargs)
