"""Errors raised by the team layer and its event stores.

Every error is a subclass of :class:`TeamError`; the ones that describe a bad
value supplied by a caller also subclass :class:`ValueError`, so code written
against the plain Python exceptions keeps working.
"""

from __future__ import annotations

from uuid import UUID

from akgentic.plugins.errors import UnknownPluginNameError

__all__ = [
    "ActivationTimeoutError",
    "DuplicateEventError",
    "EventLogUnreadableError",
    "EventStoreError",
    "ForkPointError",
    "ForkRefusedError",
    "InvalidStoreURLError",
    "StoreUnreadableError",
    "TeamActivationError",
    "TeamCardError",
    "TeamClaimLostError",
    "TeamError",
    "TeamNotFoundError",
    "TeamOwnedError",
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


class StoreUnreadableError(EventStoreError):
    """The storage a URL names cannot be opened or read as an event store.

    Raised for a damaged or foreign file (not a SQLite database, a zeroed
    header), a path that cannot hold a store (under an existing file, a file
    where a directory is needed) or a location the process may not write. The
    message says what is wrong and what to do; nothing was changed.
    """


class TeamClaimLostError(EventStoreError):
    """A write was refused because another process claimed the team since.

    Every write a team's owner makes carries the epoch of its claim; a store
    refuses it, in the same transaction, once the team record holds a newer
    epoch. The process that gets this error no longer owns the team: it must
    stop the team's actors without writing anything more.
    """

    def __init__(self, team_id: UUID, epoch: int, current: int | None) -> None:
        self.team_id = team_id
        self.epoch = epoch
        self.current = current
        now = "the team record is gone" if current is None else f"it is now at epoch {current}"
        super().__init__(
            f"team {team_id} was claimed by another process (this one held epoch {epoch}, "
            f"{now}); this process stopped the team without writing"
        )


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


class TeamOwnedError(TeamStateError):
    """The team is owned by another live process (or manager), so it cannot be claimed.

    ``owner`` describes the owner as recorded in the team record (``None``
    when the record names none).
    """

    def __init__(self, team_id: UUID, owner: str | None, message: str = "") -> None:
        self.owner = owner
        where = owner or "another process"
        super().__init__(
            team_id,
            "running",
            message
            or f"team {team_id} is running in {where}; stop it there (or with "
            f"`akgentic team stop {team_id}`) before resuming it",
        )


class ForkRefusedError(TeamError):
    """A team cannot be forked as asked: a card's state cannot be carried to the fork.

    ``card`` names the card (or plugin) that refused, ``reason`` says why in
    one line; nothing of the fork was created.
    """

    def __init__(self, card: str, reason: str) -> None:
        self.card = card
        self.reason = reason
        super().__init__(f"cannot fork: card {card!r} {reason}")


class ForkPointError(TeamError, ValueError):
    """The sequence a fork or rewind was asked at is not an event of the team's log."""


class TeamActivationError(TeamStateError):
    """A passivated team could not be brought back; it is recorded as ``broken``.

    ``reason`` says why (a corrupt log, an agent class that no longer imports...).
    A broken team is never activated again by a message: ``resume_team`` (after
    the cause is fixed) is the one way back.
    """

    def __init__(self, team_id: UUID, reason: str) -> None:
        self.reason = reason
        super().__init__(
            team_id,
            "broken",
            f"team {team_id} is broken: its activation failed: {reason} "
            f"(fix the cause, then `akgentic team resume {team_id}`)",
        )


class ActivationTimeoutError(TeamError, TimeoutError):
    """A caller waited longer than its timeout for a team's activation (it goes on)."""

    def __init__(self, team_id: UUID, timeout: float, queued: bool) -> None:
        self.team_id = team_id
        self.timeout = timeout
        where = "queued behind other activations" if queued else "still activating"
        super().__init__(f"team {team_id} was not activated within {timeout} s ({where})")
