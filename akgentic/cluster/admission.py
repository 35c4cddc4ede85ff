"""Admission of team cards from untrusted sources: no host processes unless allowed.

A tool card that would start a program on the host, outside any sandbox (a stdio
MCP server, say), says so through :meth:`akgentic.tool.ToolCard.host_processes`.
A card that reaches a runtime from elsewhere than the operator's own command
line (the web console, a fleet worker taking placements over the network) is
checked here: :func:`check_host_processes` refuses it, naming each such card and
the setting that would allow it, unless the operator allowed host processes
(``akgentic serve --allow-host-processes``, or ``AKGENTIC_ALLOW_HOST_PROCESSES=1``
in the serving process's environment).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from pydantic import BaseModel

from akgentic.core.agent_card import AgentCard
from akgentic.team.card import TeamCard
from akgentic.team.errors import TeamCardError
from akgentic.tool.core.card import ToolCard

__all__ = [
    "ALLOW_HOST_PROCESSES_ENV_VAR",
    "HostProcess",
    "HostProcessesRefusedError",
    "check_host_processes",
    "host_processes",
    "host_processes_allowed",
]

ALLOW_HOST_PROCESSES_ENV_VAR = "AKGENTIC_ALLOW_HOST_PROCESSES"
_TRUE = frozenset({"1", "true", "yes", "on"})


@dataclass(frozen=True)
class HostProcess:
    """One host process a team card would start: which agent, which card, what."""

    agent: str
    card: str
    process: str

    def __str__(self) -> str:
        return f"{self.agent}: card {self.card!r} would start {self.process}"


class HostProcessesRefusedError(TeamCardError):
    """A card from an untrusted source would start host processes; not allowed here."""


def host_processes_allowed(env: Mapping[str, str]) -> bool:
    """Whether ``$AKGENTIC_ALLOW_HOST_PROCESSES`` is set to a true value (1, true, yes, on)."""
    return env.get(ALLOW_HOST_PROCESSES_ENV_VAR, "").strip().lower() in _TRUE


def _tool_cards(value: object, depth: int = 0) -> Iterator[ToolCard]:
    """Every tool card inside ``value``: fields of models, items of lists and mappings."""
    if depth > 64:  # a card tree is shallow; a deeper one is not a team card
        raise TeamCardError("the team card is nested too deeply to be checked")
    if isinstance(value, ToolCard):
        yield value
    if isinstance(value, BaseModel):
        for item in value.__dict__.values():
            yield from _tool_cards(item, depth + 1)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _tool_cards(item, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tool_cards(item, depth + 1)


def _agents(card: TeamCard) -> Iterator[AgentCard]:
    for root in (card.entry_point, *card.members):
        for node, _parent in root.walk():
            yield node.card
    yield from card.agent_profiles


def host_processes(card: TeamCard) -> list[HostProcess]:
    """The host processes every tool card of ``card`` would start (members and profiles)."""
    found: list[HostProcess] = []
    for agent in _agents(card):
        name = agent.config.name or agent.role or "an agent"
        for tool in _tool_cards(agent.config):
            label = tool.card or type(tool).__name__
            found.extend(HostProcess(name, label, p) for p in tool.host_processes())
    return found


def check_host_processes(card: TeamCard, *, allowed: bool, source: str) -> None:
    """Refuse ``card`` (from ``source``) when it would start host processes and none are allowed.

    Raises:
        HostProcessesRefusedError: naming every such card and the settings that allow them.
    """
    if allowed:
        return
    found = host_processes(card)
    if not found:
        return
    listed = "; ".join(str(p) for p in found)
    raise HostProcessesRefusedError(
        f"{source} may not start host processes outside a sandbox ({listed}). The operator "
        "can allow it with 'akgentic serve --allow-host-processes' or "
        f"{ALLOW_HOST_PROCESSES_ENV_VAR}=1 in the serving process's environment."
    )
