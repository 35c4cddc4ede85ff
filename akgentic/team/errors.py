"""Errors raised by the team layer and its event stores.

Every error is a subclass of :class:`TeamError`; the ones that describe a bad
value supplied by a caller also subclass :class:`ValueError`, so code written
against the plain Python exceptions keeps working.
"""

from __future__ import annotations

from uuid import UUID

from akgentic.plugins.errors import UnknownPluginNameError

__all__ = [
    "DuplicateEventError",
    "EventLogUnreadableError",
    "EventStoreError",
    "InvalidStoreURLError",
    "TeamCardError",
    "TeamError",
    "TeamNotFoundError",
    "TeamRecordUnreadableError",
    "TeamStateError",
    "UnknownStoreSchemeError",
]


class TeamError(Exception):
    """Base class of every error raised by ``akgentic.team``."""


class TeamCardError(TeamError, ValueError):
    """A team card is inconsistent (duplicate names, bad headcount, unknown class...)."""


class EventStoreError(TeamError):
    """An event store could not perform an operation."""


class DuplicateEventError(EventStoreError, ValueError):
    """An event with the same ``(team_id, sequence)`` is already stored.

    The log is append-only: a sequence number is written once, never replaced.
    """

    def __init__(self, team_id: UUID, sequence: int) -> None:
        self.team_id = team_id
        self.sequence = sequence
        super().__init__(
            f"team {team_id} already has an event with sequence {sequence}; "
            "the event log is append-only and never overwrites a sequence"
        )


class EventLogUnreadableError(EventStoreError):
    """A stored event or agent state cannot be decoded (corrupt or unknown class)."""


class TeamRecordUnreadableError(EventStoreError):
    """A stored team record cannot be decoded."""


class InvalidStoreURLError(EventStoreError, ValueError):
    """A store URL is malformed or names options the store does not know."""


class UnknownStoreSchemeError(UnknownPluginNameError):
    """No installed event store answers to the scheme of a store URL."""

    def __init__(self, url: str, scheme: str, available: list[str], hint: str = "") -> None:
        self.url = url
        if not hint:
            hint = (
                "Install the plugin distribution that provides this store "
                "(for example: pip install akgentic-postgres for postgresql://), "
                "or check `akgentic plugins` for a disabled or failed store plugin"
            )
        super().__init__("event store URL scheme", scheme, available, hint)
        self.args = (f"cannot open store {url!r}: {self.args[0]}",)

    def __str__(self) -> str:
        return str(self.args[0])


class TeamNotFoundError(TeamError, ValueError):
    """No team with the given id is recorded in the store."""

    def __init__(self, team_id: UUID) -> None:
        self.team_id = team_id
        super().__init__(f"team {team_id} not found")


class TeamStateError(TeamError, ValueError):
    """A lifecycle operation is not allowed in the team's current status.

    ``status`` is the status the team was in (``running``, ``stopped``...).
    """

    def __init__(self, team_id: UUID, status: str, message: str) -> None:
        self.team_id = team_id
        self.status = status
        super().__init__(message)
