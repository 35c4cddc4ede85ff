"""AgentCard: the blueprint of a role that a team can spawn."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import ConfigDict, Field, model_validator

from akgentic.core.agent_config import BaseConfig
from akgentic.core.utils.serializer import (
    MODEL_KEY,
    TYPE_KEY,
    SerializableBaseModel,
    import_class,
)

__all__ = ["AgentCard", "config_type_of"]

_config_types: dict[type, type[BaseConfig]] = {}


def config_type_of(agent_class: type) -> type[BaseConfig]:
    """The ``ConfigType`` an ``Akgent[ConfigType, StateType]`` subclass declares.

    Walks ``__orig_bases__`` along the MRO; unparameterised or non-Akgent classes
    give :class:`BaseConfig`.
    """
    cached = _config_types.get(agent_class)
    if cached is not None:
        return cached
    from akgentic.core.agent import Akgent  # the card module must not import the actor at load

    found: type[BaseConfig] = BaseConfig
    for klass in getattr(agent_class, "__mro__", ()):
        for base in klass.__dict__.get("__orig_bases__", ()):
            origin = typing.get_origin(base)
            args = typing.get_args(base)
            if (
                isinstance(origin, type)
                and issubclass(origin, Akgent)
                and args
                and isinstance(args[0], type)
                and issubclass(args[0], BaseConfig)
            ):
                found = args[0]
                break
        else:
            continue
        break
    _config_types[agent_class] = found
    return found


def _resolve_class(value: Any) -> type:
    if isinstance(value, type):
        return value
    if isinstance(value, dict) and TYPE_KEY in value:
        value = value[TYPE_KEY]
    if not isinstance(value, str) or "." not in value:
        raise ValueError(
            f"agent_class must be a class or a dotted 'module.Class' path, got {value!r}"
        )
    cls = import_class(value)
    if not isinstance(cls, type):
        raise ValueError(f"agent_class {value!r} does not name a class")
    return cls


class AgentCard(SerializableBaseModel):
    """Role blueprint: which class to spawn, with which configuration and skills.

    The role is ``config.role`` (read it through :attr:`role`); it is the key of
    the orchestrator's role catalog. Always spawn from :meth:`get_config_copy`.
    """

    model_config = ConfigDict(extra="forbid")

    agent_class: str | type
    description: str
    skills: list[str] = Field(default_factory=list)
    config: BaseConfig = Field(default_factory=BaseConfig)
    can_be_hired: bool = False
    routes_to: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _coerce_config(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if "role" in data and MODEL_KEY not in data:
            raise ValueError(
                "AgentCard has no 'role' argument: the role is config.role, "
                "e.g. AgentCard(..., config=BaseConfig(name='@Dev', role='Developer'))"
            )
        config = data.get("config")
        if isinstance(config, dict) and "agent_class" in data:
            agent_class = _resolve_class(data["agent_class"])
            config_cls = config_type_of(agent_class)
            marker = config.get(MODEL_KEY)
            if marker is None or marker == f"{config_cls.__module__}.{config_cls.__name__}":
                data = {**data, "config": config_cls.model_validate(config)}
        return data

    @model_validator(mode="after")
    def _require_role(self) -> AgentCard:
        if not self.config.role:
            raise ValueError("AgentCard.config.role must not be empty (it keys the role catalog)")
        return self

    @property
    def role(self) -> str:
        """The role this card defines (``config.role``)."""
        return self.config.role

    def get_config_copy(self) -> BaseConfig:
        """Deep copy of the configuration, safe to hand to a new actor."""
        return self.config.model_copy(deep=True)

    def get_agent_class(self) -> type:
        """The agent class, importing it if it was given as a dotted path."""
        if isinstance(self.agent_class, type):
            return self.agent_class
        if not self.agent_class or "." not in self.agent_class:
            raise ValueError(
                f"agent_class must be a dotted 'module.Class' path: {self.agent_class!r}"
            )
        cls: type = import_class(self.agent_class)
        return cls

    def has_skill(self, skill: str) -> bool:
        """Whether ``skill`` is listed on the card."""
        return skill in self.skills

    def can_route_to(self, role: str) -> bool:
        """Declared routing hint: an empty ``routes_to`` means unrestricted (not enforced)."""
        return not self.routes_to or role in self.routes_to
