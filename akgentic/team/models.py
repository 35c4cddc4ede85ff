"""Persistence models of the team layer: the team record, stored events and state snapshots.

* :class:`Process` is one team's record: its card (kept as a reference of what
  the team was asked to be), status, user, timestamps, typed business
  metadata with the index entries derived from it, and the claim: the
  :class:`TeamOwner` process running it and the claim's ``epoch``, and its
  :class:`~akgentic.team.metadata.Lineage` (the fork it comes from, if any).
* :class:`PersistedEvent` is one entry of a team's append-only event log,
  numbered by a gap-free per-team ``sequence`` starting at 1.
* :class:`AgentStateSnapshot` is the latest state of one agent (upserted, never
  appended).

All three are :class:`~akgentic.core.utils.serializer.SerializableBaseModel`:
their dumps carry ``__model__`` tags, so a stored event comes back as the same
message subclass and a snapshot as the same state subclass.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Self
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from akgentic.core.agent_state import BaseState
from akgentic.core.messages.message import Message
from akgentic.core.utils.serializer import (
    MODEL_KEY,
    SerializableBaseModel,
    deserialize_object,
)
from akgentic.team.card import TeamCard
from akgentic.team.metadata import Lineage, derive_metadata_indexes

__all__ = [
    "AgentStateSnapshot",
    "PersistedEvent",
    "Process",
    "TeamOwner",
    "TeamStatus",
    "is_inbound_id",
    "utc_now",
    "validate_metadata",
]


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def is_inbound_id(message_id: UUID) -> bool:
    """Whether a message id may be an inbound message's: name-based (UUID version 5).

    A runtime derives an inbound message's id from its idempotency key
    (:func:`akgentic.cluster.keys.inbound_id`); the checkpoint fold keeps these ids.
    """
    return message_id.version == 5


class TeamStatus(StrEnum):
    """Lifecycle status of a team: ``running`` -> ``stopped`` (-> ``running``...) -> ``deleted``.

    ``passivated``: idle, its actors stopped by the manager; any message brings
    it back (see docs/virtual-teams.md). ``broken``: an activation failed; the
    record's ``reason`` says why, and only an explicit resume brings it back.
    """

    RUNNING = "running"
    STOPPED = "stopped"
    PASSIVATED = "passivated"
    BROKEN = "broken"
    DELETED = "deleted"


def validate_metadata(team_card: TeamCard, metadata: Any) -> SerializableBaseModel | None:
    """Check a metadata value against ``team_card.metadata_type`` and return the model.

    ``None`` clears metadata. A mapping is validated as the declared type (a
    ``pydantic.ValidationError`` on failure); an instance must be of the
    declared type. A card that declares no ``metadata_type`` rejects any value
    with ``ValueError``, so metadata is never dropped silently.
    """
    if metadata is None:
        return None
    declared = team_card.metadata_type
    if declared is None:
        raise ValueError(
            f"team card {team_card.name or '(unnamed)'} declares no metadata_type, "
            "so it accepts no metadata; declare one on the card or pass None"
        )
    if isinstance(metadata, declared):
        return metadata
    if isinstance(metadata, dict):
        if MODEL_KEY in metadata:
            metadata = deserialize_object(metadata)
            if isinstance(metadata, declared):
                return metadata
        else:
            return declared.model_validate(metadata)
    raise ValueError(
        f"metadata must be a {declared.__module__}.{declared.__name__} "
        f"(the card's metadata_type), got {type(metadata).__module__}.{type(metadata).__name__}"
    )


class TeamOwner(BaseModel):
    """Who claimed a team: one ``TeamManager`` in one process on one host.

    ``stop_signal`` is the signal on which the owning process stops its teams
    cleanly (the ``akgentic`` command line records ``SIGTERM``); ``None`` means
    the owner cannot be asked to stop from outside (an application embedding a
    manager stops its teams through its own API).
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    host: str
    pid: int
    instance: str
    stop_signal: int | None = None

    @classmethod
    def current(cls, instance: UUID | str, stop_signal: int | None = None) -> TeamOwner:
        """The owner describing this process and the manager ``instance``."""
        return cls(
            host=socket.gethostname(),
            pid=os.getpid(),
            instance=str(instance),
            stop_signal=stop_signal,
        )

    @property
    def on_this_host(self) -> bool:
        """Whether the owner runs on the machine this code runs on."""
        return self.host == socket.gethostname()

    def process_alive(self) -> bool | None:
        """Whether the owning process exists: ``None`` when it runs on another host."""
        if not self.on_this_host:
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def describe(self) -> str:
        """``process 1234 on host-name`` (for messages)."""
        return f"process {self.pid} on {self.host}"


class Process(SerializableBaseModel):
    """The persisted record of one team.

    ``metadata`` is validated against ``team_card.metadata_type`` and
    ``metadata_indexes`` is always derived from it (a caller-supplied value is
    ignored); stores derive it again on every write. ``owner`` and ``epoch``
    are the current claim: a store's ``claim_team`` bumps ``epoch`` and sets
    ``owner``; writes that carry an older epoch are refused. Change a record with
    :meth:`with_status` / :meth:`with_metadata`, which re-validate, rather than
    by mutating it.
    """

    model_config = ConfigDict(extra="forbid")

    team_id: UUID
    team_card: TeamCard
    status: TeamStatus = TeamStatus.RUNNING
    user_id: str = "cli"
    user_email: str = ""
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)
    metadata: SerializableBaseModel | None = None
    metadata_indexes: list[str] = Field(default_factory=list)
    owner: TeamOwner | None = None
    epoch: int = Field(default=0, ge=0)
    lineage: Lineage = Field(default_factory=Lineage)
    #: Why the team is ``broken`` (its failed activation); None otherwise.
    reason: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _validate_metadata(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        card = data.get("team_card")
        if isinstance(card, dict):
            card = data["team_card"] = TeamCard.model_validate(card)
        if isinstance(card, TeamCard):
            data["metadata"] = validate_metadata(card, data.get("metadata"))
        data.pop("metadata_indexes", None)
        return data

    @model_validator(mode="after")
    def _derive_indexes(self) -> Self:
        self.__dict__["metadata_indexes"] = derive_metadata_indexes(self.metadata)
        return self

    @property
    def id(self) -> UUID:
        """Alias of :attr:`team_id`."""
        return self.team_id

    @property
    def name(self) -> str | None:
        """The team's own name (:attr:`Lineage.name`), else its card's name."""
        return self.lineage.name or self.team_card.name or None

    def with_status(self, status: TeamStatus) -> Process:
        """A copy with ``status`` changed and ``updated_at`` refreshed."""
        update: dict[str, Any] = {"status": TeamStatus(status), "updated_at": utc_now()}
        if status != TeamStatus.BROKEN:
            update["reason"] = None
        return self.model_copy(update=update)

    def with_metadata(self, metadata: Any) -> Process:
        """A copy whose metadata is *replaced* by ``metadata`` (validated; ``None`` clears).

        Nothing from the previous value is merged in; the index entries are
        derived from the new value alone.
        """
        value = validate_metadata(self.team_card, metadata)
        return self.model_copy(
            update={
                "metadata": value,
                "metadata_indexes": derive_metadata_indexes(value),
                "updated_at": utc_now(),
            }
        )


class PersistedEvent(SerializableBaseModel):
    """One entry of a team's event log: the message and its per-team sequence number.

    ``timestamp`` is when the team recorded it; the events one orchestrator turn
    records (a member's batch of turn telemetry) share one.
    """

    team_id: UUID
    sequence: int = Field(ge=1)
    event: Message
    timestamp: datetime = Field(default_factory=utc_now)


class AgentStateSnapshot(SerializableBaseModel):
    """The latest persisted state of one agent of a team (keyed by ``agent_id``)."""

    team_id: UUID
    agent_id: str
    name: str | None = None
    state: BaseState
    updated_at: datetime = Field(default_factory=utc_now)
