"""akgentic.core: the actor runtime every team runs on (pydantic + pykka only).

Public names are exported lazily: ``from akgentic.core import Orchestrator`` imports
the modules that define it, and ``import akgentic.core`` alone imports nothing but
this file. That keeps the packages built on the core cheap to import when they need
one corner of it (``akgentic.tool`` only needs the serializer, not the actor system).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
    from pykka import ActorDeadError, ActorRef, ActorRegistry

    from akgentic.core.actor_address import (
        ActorAddress,
        ActorAddressProxy,
        ActorAddressStopped,
    )
    from akgentic.core.actor_address_impl import ActorAddressImpl
    from akgentic.core.actor_system import ActorSystem, ExecutionContext, Statistics
    from akgentic.core.agent import Akgent, AkgentDeserializeContext
    from akgentic.core.agent_card import AgentCard
    from akgentic.core.agent_config import BaseConfig
    from akgentic.core.agent_state import AkgentStateObserver, BaseState
    from akgentic.core.event_subscriber import EventSubscriber
    from akgentic.core.orchestrator import Orchestrator
    from akgentic.core.user_proxy import UserProxy

_LAZY: dict[str, str] = {
    "ActorDeadError": "pykka",
    "ActorRef": "pykka",
    "ActorRegistry": "pykka",
    "ActorAddress": "akgentic.core.actor_address",
    "ActorAddressProxy": "akgentic.core.actor_address",
    "ActorAddressStopped": "akgentic.core.actor_address",
    "ActorAddressImpl": "akgentic.core.actor_address_impl",
    "ActorSystem": "akgentic.core.actor_system",
    "ExecutionContext": "akgentic.core.actor_system",
    "Statistics": "akgentic.core.actor_system",
    "Akgent": "akgentic.core.agent",
    "AkgentDeserializeContext": "akgentic.core.agent",
    "AgentCard": "akgentic.core.agent_card",
    "BaseConfig": "akgentic.core.agent_config",
    "AkgentStateObserver": "akgentic.core.agent_state",
    "BaseState": "akgentic.core.agent_state",
    "EventSubscriber": "akgentic.core.event_subscriber",
    "Orchestrator": "akgentic.core.orchestrator",
    "UserProxy": "akgentic.core.user_proxy",
}

__all__ = [
    "ActorAddress",
    "ActorAddressImpl",
    "ActorAddressProxy",
    "ActorAddressStopped",
    "ActorDeadError",
    "ActorRef",
    "ActorRegistry",
    "ActorSystem",
    "AgentCard",
    "AgentConfig",
    "Akgent",
    "AkgentDeserializeContext",
    "AkgentStateObserver",
    "BaseConfig",
    "BaseState",
    "EventSubscriber",
    "ExecutionContext",
    "Orchestrator",
    "Statistics",
    "UserProxy",
]

_get_export, _dir = lazy_exports(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    if name == "AgentConfig":  # the old name of BaseConfig; warns, so never cached
        from akgentic.core.agent_config import deprecated_agent_config

        return deprecated_agent_config(stacklevel=3)
    return _get_export(name)


def __dir__() -> list[str]:
    return sorted({*_dir(), *__all__})
