"""Data the event store contract writes: a card, records, events and states of every kind.

Shared by :mod:`akgentic.testing.event_store_contract` and
:mod:`akgentic.testing.event_store_ownership`, and public for store authors who
want the same values in their own tests.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

from pydantic import Field

from akgentic.core.actor_address import ActorAddressProxy
from akgentic.core.agent_card import AgentCard
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.messages import (
    ClosedNotification,
    ErrorMessage,
    EventMessage,
    Message,
    ProcessedMessage,
    ReceivedMessage,
    ResultMessage,
    SentMessage,
    StartMessage,
    StopMessage,
    TeamStoppingEvent,
    UserMessage,
)
from akgentic.team.card import TeamCard, TeamCardMember
from akgentic.team.messages import WelcomeMessage
from akgentic.team.metadata import TeamMetadata
from akgentic.team.models import PersistedEvent, Process, TeamStatus
from akgentic.team.store import EventStore

__all__ = [
    "HOSTILE_VALUES",
    "ContractMetadata",
    "ContractState",
    "contract_card",
    "contract_event",
    "contract_messages",
    "contract_process",
    "resolve_opener",
]

HOSTILE_VALUES: tuple[str, ...] = (
    "o'brien",
    'say "hello"',
    "acme|contoso",
    "trailing|",
    "back\\slash",
    "back\\|pipe",
    "100%",
    "%",
    "a_c",
    "_",
    "*",
    "x' OR '1'='1",
    "'; DROP TABLE teams; --",
    '") OR 1=1 --',
    "line\nbreak",
    "tab\tand unicode \u00e9\u6f22\U0001f600",
    "",
    "z" * 10_000,
)
"""Metadata values that must each match only themselves (and not ``abc``, ``plain``...)."""


class ContractState(BaseState):
    """A custom state class, to check that snapshots come back as their subclass."""

    counter: int = 0
    notes: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)


class ContractMetadata(TeamMetadata):
    """Team metadata used by the contract: indexed fields of several types."""

    tenant: str = Field(json_schema_extra={"indexed": True})
    case_ref: str | None = Field(None, json_schema_extra={"indexed": True})
    channel: str | None = Field(None, json_schema_extra={"indexed": True})
    priority: int | None = Field(None, json_schema_extra={"indexed": True})
    urgent: bool | None = Field(None, json_schema_extra={"indexed": True})
    notes: str = ""


def contract_card() -> TeamCard:
    """A small team card declaring :class:`ContractMetadata`."""
    entry = AgentCard(
        agent_class="akgentic.core.user_proxy.UserProxy",
        description="Team entry point",
        config=BaseConfig(name="@Entry", role="Entry"),
    )
    worker = AgentCard(
        agent_class="akgentic.core.agent.Akgent",
        description="Does the work",
        skills=["work"],
        config=BaseConfig(name="@Worker", role="Worker"),
    )
    return TeamCard(
        name="contract-team",
        description="Team used by the event store contract",
        entry_point=TeamCardMember(card=entry),
        members=[TeamCardMember(card=worker)],
        message_types=[UserMessage],
        metadata_type=ContractMetadata,
        welcome_message="hello",
    )


def contract_process(
    team_id: UUID | None = None,
    *,
    user_id: str = "alice",
    status: TeamStatus = TeamStatus.RUNNING,
    metadata: ContractMetadata | None = None,
    created_at: datetime | None = None,
) -> Process:
    """A team record for the contract card."""
    now = created_at or datetime.now(UTC)
    return Process(
        team_id=team_id or uuid4(),
        team_card=contract_card(),
        status=status,
        user_id=user_id,
        user_email=f"{user_id}@example.org",
        created_at=now,
        updated_at=now,
        metadata=metadata,
    )


def _address(team_id: UUID, name: str, role: str) -> ActorAddressProxy:
    return ActorAddressProxy(
        {
            "__actor_address__": True,
            "__actor_type__": "akgentic.core.agent.Akgent",
            "agent_id": str(uuid4()),
            "name": name,
            "role": role,
            "team_id": str(team_id),
            "squad_id": "",
            "is_user_proxy": False,
        }
    )


def contract_messages(team_id: UUID) -> list[Message]:
    """One of each kind of core message, stamped for ``team_id``."""
    orchestrator = _address(team_id, "@Orchestrator", "Orchestrator")
    worker = _address(team_id, "@Worker", "Worker")
    question = UserMessage(content="What is 6 x 7?").init(worker, team_id)
    messages: list[Message] = [
        StartMessage(config=BaseConfig(role="Orchestrator", name="@Orchestrator")),
        StartMessage(config=BaseConfig(name="@Worker", role="Worker"), parent=orchestrator),
        WelcomeMessage(content="Team ready."),
        SentMessage(message=question, recipient=worker),
        ReceivedMessage(message_id=question.id),
        ResultMessage(content="42"),
        ProcessedMessage(message_id=question.id),
        ErrorMessage(content="boom", traceback="Traceback ...", current_message=question),
        EventMessage(event=ClosedNotification(message_id=question.id)),
        EventMessage(event=TeamStoppingEvent()),
        StopMessage(),
    ]
    for message in messages:
        message.init(worker if message is not messages[0] else orchestrator, team_id)
    return messages


def contract_event(team_id: UUID, sequence: int, content: str | None = None) -> PersistedEvent:
    """A stored user message with the given sequence."""
    message = UserMessage(content=content if content is not None else f"message {sequence}")
    message.init(None, team_id)
    return PersistedEvent(team_id=team_id, sequence=sequence, event=message)


def resolve_opener(path: str) -> Callable[[str], EventStore]:
    module_name, _, attribute = path.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"opener {path!r} is not callable")
    opener: Callable[[str], EventStore] = target
    return opener
