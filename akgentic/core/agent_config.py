"""Static configuration of an actor."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from pydantic import ConfigDict, Field

from akgentic.core.utils.serializer import SerializableBaseModel

__all__ = ["AgentConfig", "BaseConfig", "ReadOnlyField"]


class BaseConfig(SerializableBaseModel):
    """Name, role and squad of an actor; subclass it to add agent settings.

    Unknown keyword arguments are rejected (a typo must not be silently lost);
    stored payloads written by an older version still load, see the serializer.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    role: str = ""
    squad_id: UUID | None = None


AgentConfig = BaseConfig


def ReadOnlyField(default: Any = ..., **kwargs: Any) -> Any:
    """A pydantic ``Field`` flagged ``readOnly`` in the JSON schema."""
    extra = dict(kwargs.pop("json_schema_extra", None) or {})
    extra["readOnly"] = True
    return Field(default, json_schema_extra=extra, **kwargs)
