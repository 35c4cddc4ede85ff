"""What every front end does with a running team: the CLI, the console and scripts alike.

A person types a line (:func:`route_line`), a front end lists a team's metadata
(:func:`team_metadata`), checks that a card's models can be built before anything
starts (:func:`model_problem`), and stops everything it started (:func:`shut_down`).
These live here, below the front ends, so that no front end borrows another's helpers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from akgentic.core.actor_system import ActorSystem
    from akgentic.core.messages.message import Message
    from akgentic.team.card import TeamCard
    from akgentic.team.manager import TeamManager
    from akgentic.team.models import Process
    from akgentic.team.runtime import TeamRuntime
    from akgentic.team.store import EventStore

__all__ = ["model_problem", "route_line", "shut_down", "team_metadata", "wrap_text"]


def team_metadata(process: Process) -> Any:
    """A team's metadata as plain JSON data without its class marker (None without any)."""
    from akgentic.team.stores.codec import plain

    if process.metadata is None:
        return None
    metadata = plain(process.metadata.model_dump(mode="json", exclude={"__model__"}))
    if isinstance(metadata, dict):
        metadata.pop("__model__", None)
    return metadata


def model_problem(team_card: TeamCard) -> str | None:
    """Build every member's model once, before any actor starts; the problem, if any.

    A missing API key or provider SDK would otherwise surface as a traceback from
    the agent's start-up, after the team already exists. The answer is one line per
    distinct problem, each naming the members that have it, or None when every model
    builds.
    """
    from akgentic.llm.config import ModelConfig
    from akgentic.llm.providers import create_model

    problems: dict[str, list[str]] = {}
    profiles = {f"profile {card.role}": card for card in team_card.agent_profiles}
    for name, card in {**team_card.agent_cards, **profiles}.items():
        model_cfg = getattr(card.config, "model_cfg", None)
        if not isinstance(model_cfg, ModelConfig):
            continue
        try:
            create_model(model_cfg)
        except (ValueError, ImportError) as exc:
            problems.setdefault(str(exc), []).append(name)
    lines = [f"{', '.join(names)}: {problem}" for problem, names in problems.items()]
    if len(lines) == 1:
        return f"cannot build the team's model: {lines[0]}"
    if lines:
        return "cannot build the team's models:\n  " + "\n  ".join(lines)
    return None


def shut_down(manager: TeamManager, system: ActorSystem, store: EventStore) -> None:
    """Stop every team ``manager`` runs, then the actor system, then close ``store``.

    Each step runs even when the one before it raised, so a failing stop never
    leaves actor threads running or the store open.
    """
    try:
        manager.stop_all()
    finally:
        system.shutdown(timeout=30)
        store.close()


def wrap_text(runtime: TeamRuntime, text: str) -> str | Message:
    """``text`` as the team's default message type, or an ``AgentMessage`` when it has none."""
    if runtime.team.default_message_type is not None:
        return text
    from akgentic.agent.messages import AgentMessage

    return AgentMessage(content=text)


def route_line(runtime: TeamRuntime, line: str) -> str | None:
    """Deliver one line typed by a person; returns an error text when it cannot be delivered.

    - ``@Name text``: to that member only (``text`` may be a ``/command``);
    - ``/command args``: to the lead (the first supervisor), whose command registry runs it;
    - anything else: to every supervisor, as :meth:`TeamRuntime.send` does.
    """
    text = line.strip()
    if not text:
        return None
    if text.startswith("@"):
        name, _, rest = text.partition(" ")
        if not rest.strip():
            return f"nothing to send to {name}"
        try:
            runtime.send_to(name, wrap_text(runtime, rest.strip()))
        except ValueError as exc:
            return str(exc)
        return None
    if text.startswith("/"):
        lead = next(iter(runtime.supervisor_addrs), None)
        if lead is None:
            return "this team has no member to run commands"
        runtime.send_to(lead, wrap_text(runtime, text))
        return None
    runtime.send(wrap_text(runtime, text))
    return None
