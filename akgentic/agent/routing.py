"""Who an agent can reach: the team directory and the resolution of a recipient string."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from akgentic.tool.errors import RetriableError

if TYPE_CHECKING:
    from akgentic.agent.agent import BaseAgent
    from akgentic.core.actor_address import ActorAddress

__all__ = ["TeamDirectory", "resolve_recipient"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TeamDirectory:
    """The names an agent may address: members (``@Name``) and hireable roles.

    ``members`` leaves out tool actors (``#`` names) and the agent itself.
    """

    members: tuple[str, ...]
    hireable_roles: tuple[str, ...]

    def reachable(self, recipient: str) -> bool:
        """True when ``recipient`` names a member or a hireable role."""
        name = recipient.strip()
        if name.startswith("@"):
            return name in self.members
        return name in self.hireable_roles

    def correction(self, unreachable: Sequence[str]) -> str:
        """The text that tells the model what went wrong and what it can use instead."""
        wrong = ", ".join(repr(r) for r in unreachable)
        members = ", ".join(self.members) or "none"
        roles = ", ".join(self.hireable_roles) or "none"
        return (
            f"Nothing was sent: {wrong} cannot be reached. Address a member with its @name "
            f"(members: {members}) or name a hireable role to hire someone new "
            f"(hireable roles: {roles}). Give your complete list of messages again with "
            "valid recipients."
        )


def resolve_recipient(agent: BaseAgent, recipient: str) -> ActorAddress | None:
    """The address to deliver to: ``@Name`` looks up a member, anything else hires that role.

    Returns None (and logs why) when the member is unknown or the hire fails.
    """
    name = recipient.strip()
    if name.startswith("@"):
        member = agent.get_team_member(name)
        if member is None:
            logger.warning("%s: no member %s; message skipped", agent.config.name, name)
        return member
    try:
        return agent.hire_member(name)
    except (RetriableError, RuntimeError) as error:
        logger.warning("%s: cannot hire %r (%s); message skipped", agent.config.name, name, error)
        return None
