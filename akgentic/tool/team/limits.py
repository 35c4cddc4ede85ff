"""The hiring caps of TeamTool: who counts toward the team size, and the refusals.

Counting the team and starting the new member happen under one lock per team, so
agents of a team hiring at the same moment cannot each see room for the same seat.
The lock is per process: the local runtime and a NATS worker both keep a team's
agents in one process.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from akgentic.core.orchestrator import TOOL_ACTOR_PREFIX
from akgentic.tool.errors import RetriableError

if TYPE_CHECKING:
    from uuid import UUID

    from akgentic.core.actor_address import ActorAddress
    from akgentic.tool.team.params import HireTeamMember

__all__ = ["check_batch", "counted", "full_team", "hiring"]


class _Gate:
    """A team's hiring lock (a class, so the registry below can hold it weakly)."""

    __slots__ = ("__weakref__", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()


_gates: weakref.WeakValueDictionary[UUID, _Gate] = weakref.WeakValueDictionary()
_gates_lock = threading.Lock()


@contextmanager
def hiring(team_key: UUID) -> Iterator[None]:
    """Hold the hiring lock of the team whose orchestrator's id is ``team_key``.

    The gate lives while someone hires (this frame holds it); a team nobody is hiring
    in has none, and its next hire makes a fresh one.
    """
    with _gates_lock:
        gate = _gates.get(team_key)
        if gate is None:
            gate = _gates[team_key] = _Gate()
    with gate.lock:
        yield


def counted(members: Iterable[ActorAddress]) -> int:
    """Members that count toward the team size: agents, not humans nor tool actors."""
    return sum(
        1 for m in members if not m.is_user_proxy and not m.name.startswith(TOOL_ACTOR_PREFIX)
    )


def _room(param: HireTeamMember, size: int) -> str:
    remaining = max(param.max_team_size - size, 0)
    return (
        f"The team may have at most {param.max_team_size} members (agents; humans are not "
        f"counted) and has {size}, so you may still hire {remaining}."
    )


def full_team(param: HireTeamMember, size: int) -> RetriableError:
    """The refusal of one more hire into a team that has reached its cap."""
    return RetriableError(f"Nobody was hired: the team is full. {_room(param, size)}")


def check_batch(param: HireTeamMember, wanted: int, size: int) -> None:
    """Refuse a ``hire_members`` call of ``wanted`` roles that a cap does not allow.

    Raises:
        RetriableError: Over the per-call cap, or more than the team has room for.
    """
    if wanted > param.max_per_call:
        raise RetriableError(
            f"Nobody was hired: hire_members takes at most {param.max_per_call} per call "
            f"(you asked for {wanted}). {_room(param, size)}"
        )
    if size + wanted > param.max_team_size:
        raise RetriableError(
            f"Nobody was hired: that is more than the team has room for (you asked for "
            f"{wanted}). {_room(param, size)}"
        )
