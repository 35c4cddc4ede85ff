"""The EventStore protocol: what every team store (built-in or plugin) implements.

A store keeps three things per team, all keyed by ``team_id``:

* the team record (:class:`~akgentic.team.models.Process`), upserted;
* the event log (:class:`~akgentic.team.models.PersistedEvent`), append-only,
  numbered by a per-team ``sequence``; a sequence is written once and a second
  write of the same ``(team_id, sequence)`` raises
  :class:`~akgentic.team.errors.DuplicateEventError`;
* the latest state of each agent
  (:class:`~akgentic.team.models.AgentStateSnapshot`), upserted per
  ``(team_id, agent_id)``.

Every write that returns is *acknowledged*: a process killed right after it (even
with SIGKILL) finds the write when the store is reopened, and the store is
never left unreadable. Stores must be safe to call from several threads at once
(a team manager shares one store across the orchestrator threads of many teams).

Store plugins prove they meet this contract by subclassing
:class:`akgentic.testing.EventStoreContract`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable
from uuid import UUID

from akgentic.team.models import AgentStateSnapshot, PersistedEvent, Process, TeamStatus

__all__ = ["BatchEventStore", "EventStore"]


@runtime_checkable
class EventStore(Protocol):
    """Storage of team records, event logs and agent state snapshots."""

    def save_event(self, event: PersistedEvent) -> None:
        """Append one event; a duplicate ``(team_id, sequence)`` raises ``DuplicateEventError``."""
        ...

    def load_events(self, team_id: UUID) -> list[PersistedEvent]:
        """Every event of a team, ordered by ascending sequence (``[]`` when none)."""
        ...

    def get_max_sequence(self, team_id: UUID) -> int:
        """The highest stored sequence of a team, ``0`` when its log is empty."""
        ...

    def save_team(self, process: Process) -> None:
        """Insert or replace the team record (its metadata index is derived again)."""
        ...

    def load_team(self, team_id: UUID) -> Process | None:
        """The team record, or ``None`` when the team is unknown."""
        ...

    def delete_team(self, team_id: UUID) -> None:
        """Remove the record, events and states of one team; other teams are untouched.

        Deleting an unknown team is not an error.
        """
        ...

    def save_agent_state(self, snapshot: AgentStateSnapshot) -> None:
        """Insert or replace the state snapshot of ``(team_id, agent_id)``."""
        ...

    def load_agent_states(self, team_id: UUID) -> list[AgentStateSnapshot]:
        """The state snapshots of a team's agents (``[]`` when none)."""
        ...

    def list_teams(
        self,
        user_id: str | None = None,
        status: TeamStatus | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[Process]:
        """Team records matching every given filter (AND), oldest first.

        ``None`` (and an empty ``metadata`` mapping) constrains nothing. Each
        metadata item must equal the rendered value of an indexed field; there
        is no pattern, prefix or range matching. A metadata filter only ever
        narrows the result: it never reaches teams outside ``user_id``.
        """
        ...

    def close(self) -> None:
        """Release connections and file handles; the store is unusable afterwards."""
        ...


@runtime_checkable
class BatchEventStore(EventStore, Protocol):
    """A store that can append several events in one durable write.

    Optional: :class:`~akgentic.team.subscribers.PersistenceSubscriber` uses it
    when the store offers it. The batch is atomic: either every event is
    stored or none is (a duplicate sequence rejects the whole batch).
    """

    def save_events(self, events: Sequence[PersistedEvent]) -> None:
        """Append ``events`` atomically, in order."""
        ...
