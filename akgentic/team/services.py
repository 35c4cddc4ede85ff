"""ServiceRegistry: where a deployment with several processes records which one runs a team.

A single process needs none of it: :class:`TeamManager` uses
:class:`NullServiceRegistry` by default. A multi-instance deployment passes its
own implementation (backed by a database, Consul, ...) so that a request for a
team can be routed to the instance that holds its actors.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable
from uuid import UUID

__all__ = ["NullServiceRegistry", "ServiceRegistry"]


@runtime_checkable
class ServiceRegistry(Protocol):
    """Directory of running instances and of the teams each one hosts."""

    def register_instance(self, instance_id: UUID) -> None:
        """Announce a running instance."""
        ...

    def deregister_instance(self, instance_id: UUID) -> None:
        """Withdraw an instance (and, implicitly, its teams)."""
        ...

    def register_team(self, instance_id: UUID, team_id: UUID) -> None:
        """Record that ``instance_id`` now runs ``team_id``."""
        ...

    def deregister_team(self, instance_id: UUID, team_id: UUID) -> None:
        """Record that ``instance_id`` no longer runs ``team_id``."""
        ...

    def find_team(self, team_id: UUID) -> UUID | None:
        """The instance running ``team_id``, or ``None``."""
        ...

    def get_active_instances(self) -> list[UUID]:
        """Every registered instance."""
        ...


class NullServiceRegistry:
    """A registry that records nothing: the single-process default."""

    def register_instance(self, instance_id: UUID) -> None:
        """Do nothing."""

    def deregister_instance(self, instance_id: UUID) -> None:
        """Do nothing."""

    def register_team(self, instance_id: UUID, team_id: UUID) -> None:
        """Do nothing."""

    def deregister_team(self, instance_id: UUID, team_id: UUID) -> None:
        """Do nothing."""

    def find_team(self, team_id: UUID) -> UUID | None:
        """Always ``None``: no team is known to run anywhere."""
        return None

    def get_active_instances(self) -> list[UUID]:
        """Always a fresh empty list."""
        return []
