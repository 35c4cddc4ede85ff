"""akgentic.core: the actor runtime every team runs on (pydantic + pykka only)."""

from typing import Any

from pykka import ActorDeadError, ActorRef, ActorRegistry

from akgentic.core.actor_address import ActorAddress, ActorAddressProxy, ActorAddressStopped
from akgentic.core.actor_address_impl import ActorAddressImpl
from akgentic.core.actor_system import ActorSystem, ExecutionContext, Statistics
from akgentic.core.agent import Akgent, AkgentDeserializeContext
from akgentic.core.agent_card import AgentCard
from akgentic.core.agent_config import BaseConfig, deprecated_agent_config
from akgentic.core.agent_state import AkgentStateObserver, BaseState
from akgentic.core.event_subscriber import EventSubscriber
from akgentic.core.orchestrator import Orchestrator
from akgentic.core.user_proxy import UserProxy

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


def __getattr__(name: str) -> Any:
    if name == "AgentConfig":  # the old name of BaseConfig; warns
        return deprecated_agent_config(stacklevel=3)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
