"""The runtime client API: what code says to teams, wherever they run.

A :class:`RuntimeClient` is returned by :func:`akgentic.cluster.connect`; the
same calls work on the built-in ``local`` runtime (teams in this process) and
on a fleet (``nats://...``, the ``akgentic-nats`` plugin):

* :meth:`RuntimeClient.create` places a new team and returns its id;
* :meth:`RuntimeClient.send` delivers a message and returns an :class:`Ack` once
  the message is in the team's durable log (its ``sequence``) on the worker that
  owns the team; a message carries an idempotency ``key`` (one is made when none
  is given), so a retry or a redelivery with the same key never acts twice;
* :meth:`RuntimeClient.events` replays the stored log from a sequence, then
  follows live durable events;
* :meth:`RuntimeClient.list_teams` lists the stored teams (as
  :class:`TeamSummary`, what ``akgentic team list`` prints);
* :meth:`RuntimeClient.where`, :meth:`stop`, :meth:`resume`, :meth:`delete`
  (each raises ``TeamNotFoundError`` for a team the store does not hold).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from datetime import datetime
from typing import Any, Protocol, runtime_checkable
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from akgentic.core.utils.serializer import SerializableBaseModel
from akgentic.team.card import TeamCard
from akgentic.team.errors import TeamError
from akgentic.team.models import PersistedEvent, Process, TeamStatus
from akgentic.team.ownership import TeamId

__all__ = [
    "Ack",
    "ClusterError",
    "Placement",
    "RuntimeClient",
    "TeamSummary",
    "TeamUnavailableError",
]


class ClusterError(TeamError):
    """A runtime could not carry out a request."""


class TeamUnavailableError(ClusterError):
    """No worker answered for the team in time (it may be moving, or unknown)."""


class Ack(BaseModel):
    """A delivered message: durable in the log at ``sequence``, handled by ``worker``.

    ``duplicate`` is true when the idempotency key had been seen already: the
    message was not delivered again and ``sequence`` is the first delivery's.
    """

    model_config = ConfigDict(frozen=True)

    team_id: UUID
    sequence: int
    worker: str
    epoch: int | None = None
    key: str
    duplicate: bool = False


class Placement(BaseModel):
    """Where a team runs: the worker holding it (``None`` when not placed) and its status."""

    model_config = ConfigDict(frozen=True)

    team_id: UUID
    status: str
    worker: str | None = None
    epoch: int | None = None


class TeamSummary(BaseModel):
    """One stored team as listed: what ``akgentic team list`` prints, wherever it runs.

    ``metadata`` is plain JSON data (no class marker); ``metadata_indexes`` the
    ``key|value`` entries a ``list_teams(metadata=...)`` filter matches.
    """

    model_config = ConfigDict(frozen=True)

    team_id: UUID
    name: str | None = None
    status: TeamStatus
    user_id: str
    created_at: datetime
    updated_at: datetime
    metadata: Any = None
    metadata_indexes: list[str] = Field(default_factory=list)
    parent_id: UUID | None = None
    parent_sequence: int | None = None
    abandoned_for: UUID | None = None
    lineage: str = ""
    #: Why a ``broken`` team could not be activated (None for every other status).
    reason: str | None = None

    @classmethod
    def of(cls, process: Process) -> TeamSummary:
        """The summary of a stored team record."""
        from akgentic.team.stores.codec import plain

        metadata: Any = None
        if process.metadata is not None:
            metadata = plain(process.metadata.model_dump(mode="json", exclude={"__model__"}))
            if isinstance(metadata, dict):
                metadata.pop("__model__", None)
        return cls(
            team_id=process.team_id,
            name=process.name,
            status=process.status,
            user_id=process.user_id,
            created_at=process.created_at,
            updated_at=process.updated_at,
            metadata=metadata,
            metadata_indexes=list(process.metadata_indexes),
            parent_id=process.lineage.parent_id,
            parent_sequence=process.lineage.parent_sequence,
            abandoned_for=process.lineage.abandoned_for,
            lineage=process.lineage.describe(),
            reason=process.reason,
        )


@runtime_checkable
class RuntimeClient(Protocol):
    """The calls every runtime answers (see the module docstring)."""

    url: str

    def create(
        self,
        card: TeamCard,
        *,
        team_id: TeamId | None = None,
        user_id: str = "cli",
        metadata: SerializableBaseModel | None = None,
    ) -> UUID:
        """Place a new team built from ``card``; returns its id once it runs.

        ``metadata`` must be an instance of the card's ``metadata_type``.
        """
        ...

    def list_teams(
        self,
        *,
        status: TeamStatus | None = None,
        user_id: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[TeamSummary]:
        """Stored teams matching every filter, oldest first (as ``EventStore.list_teams``)."""
        ...

    def send(
        self, team_id: TeamId, content: str, *, key: str | None = None, timeout: float = 60.0
    ) -> Ack:
        """Deliver ``content`` to the team's supervisors; a stopped team is placed again."""
        ...

    def events(
        self,
        team_id: TeamId,
        *,
        from_sequence: int = 1,
        follow: bool = False,
        idle_timeout: float | None = None,
    ) -> Generator[PersistedEvent, None, None]:
        """Stored events from ``from_sequence``, then (``follow``) live durable ones.

        With ``follow`` the iterator ends after ``idle_timeout`` seconds
        without an event (``None``: never; close the iterator to stop).
        """
        ...

    def where(self, team_id: TeamId) -> Placement:
        """Where the team runs now (``worker=None`` and its stored status when not placed)."""
        ...

    def stop(self, team_id: TeamId) -> None:
        """Stop the team (recorded as stopped; a later ``send`` places it again)."""
        ...

    def resume(self, team_id: TeamId) -> Placement:
        """Place a stopped team again and return where it runs."""
        ...

    def delete(self, team_id: TeamId) -> None:
        """Delete a team (stopped first when it runs)."""
        ...

    def close(self) -> None:
        """Release the client's connections (teams keep running where they are)."""
        ...
