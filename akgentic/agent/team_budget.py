"""How the members of a team live with the team budget: check, charge, warn, ask, wait.

Every :class:`~akgentic.agent.BaseAgent` mounts a
:class:`~akgentic.agent.budget_guard.BudgetGuard` on its
ReactAgent. When the team's card has a ``budget:`` block the guard:

- before each model request, reads the team budget's ``blocked`` flag (no lock, no
  message: the check costs well under a microsecond of the agent's time);
- after each response, charges the budget with the response's tokens, estimated cost,
  tool calls and duration, and records a :class:`~akgentic.llm.budget_events.BudgetCharged`
  event; the first charge that crosses ``warn_at`` records a ``BudgetWarned`` event and
  tells the lead and the human, once;
- when a limit has run out, pauses the run before its request: the first member to find
  it asks the human, as a request the console and the CLI list as an open question, to
  raise the budget or stop (a ``BudgetExhausted`` event), and every member waits. The run
  stays where it is, nothing in flight is lost; a human's ``/budget raise ...`` (typed to
  any member, or answering the question) lets every waiting member go on, ``/budget stop``
  ends their turns.

``/budget`` (:func:`budget_command`) shows the budget to anyone allowed to run commands;
changing it is for humans only (a user proxy), whatever ``command_senders`` says.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from akgentic.agent.messages import AgentMessage
from akgentic.llm.budget_events import BudgetCharged, BudgetExhausted, BudgetWarned
from akgentic.llm.team_budget import BUDGET_SERVICE, TeamBudget, parse_limit_changes

if TYPE_CHECKING:
    from akgentic.agent.agent import BaseAgent
    from akgentic.core.actor_address import ActorAddress
    from akgentic.core.agent import Akgent

__all__ = [
    "budget_command",
    "budget_question",
    "record_charge",
    "team_budget_of",
    "warning_text",
]

logger = logging.getLogger(__name__)

_USAGE = (
    "Use /budget to see it, /budget raise NAME=VALUE... (e.g. usd=5 or requests=+100), "
    "/budget set NAME=VALUE... (may lower it; none lifts a limit) or /budget stop."
)


def team_budget_of(actor: Akgent[Any, Any]) -> TeamBudget | None:
    """The budget of ``actor``'s team, or None (no budget on the card, or no team)."""
    if actor.orchestrator is None:
        return None
    found: Any = actor.orchestrator_proxy_ask.team_service(BUDGET_SERVICE)
    return found if isinstance(found, TeamBudget) else None


def _figure(name: str, value: float) -> str:
    if name == "usd":
        return f"${value:.4f}"
    if name == "wall_time_s":
        return f"{value:.1f} s"
    return f"{int(value):,}"


def budget_question(exhausted: BudgetExhausted) -> str:
    """The question the human is asked when the team budget ran out."""
    limit = exhausted.limit
    return (
        f"The team budget is used up: {limit} {_figure(limit, exhausted.used)} of "
        f"{_figure(limit, exhausted.cap)}. Every member is paused before its next model "
        "request; nothing in flight is lost. Answer /budget raise NAME=VALUE (e.g. "
        f"/budget raise {limit}={_suggest(limit, exhausted.cap)}) to go on, or /budget stop "
        "to end the work."
    )


def _suggest(name: str, cap: float) -> str:
    doubled = cap * 2
    return f"{doubled:g}" if name in ("usd", "wall_time_s") else str(int(doubled))


def warning_text(warned: BudgetWarned) -> str:
    """What the lead and the human are told when the team crosses ``warn_at``."""
    limit = warned.limit
    return (
        f"The team has used {warned.used / warned.cap:.0%} of its budget "
        f"({limit}: {_figure(limit, warned.used)} of {_figure(limit, warned.cap)}). "
        "Finish the work in hand and avoid starting new work or hiring."
    )


def budget_command(agent: BaseAgent, text: str, sender: ActorAddress | None) -> str:
    """Run ``/budget TEXT`` for ``sender`` on ``agent``'s team; the reply.

    ``show`` (or nothing) reports the budget; ``raise``, ``set`` and ``stop`` change it
    and are refused unless ``sender`` is a human (a user proxy).
    """
    budget = team_budget_of(agent)
    if budget is None:
        return "This team has no budget (its card has no budget: block)."
    words = text.split()
    action = words[0].lower() if words else "show"
    if action == "show":
        return budget.report()
    if action not in ("raise", "set", "stop"):
        return f"Unknown /budget action {words[0]!r}. {_USAGE}"
    if sender is None or not sender.is_user_proxy:
        who = sender.name if sender is not None else "this caller"
        return f"Refused: only a human can change the team budget, not {who}."
    if action == "stop":
        stopped = budget.stop(sender.name)
        agent.notify_event(stopped)
        return (
            "The team budget is stopped: members waiting for it end their turns, and no "
            "member starts another model request until a human raises it."
        )
    try:
        caps = parse_limit_changes(words[1:], budget.limits, raising=action == "raise")
        changed = budget.change(caps, sender.name)
    except ValueError as exc:
        return f"The budget was not changed: {exc}. {_USAGE}"
    agent.notify_event(changed)
    over = budget.exhausted()
    if over is not None:
        name, used, cap = over
        return (
            f"The budget is now below what the team already spent ({name}: "
            f"{_figure(name, used)} of {_figure(name, cap)}): no member starts another "
            "model request until a human raises it.\n" + budget.report()
        )
    return "The budget was changed.\n" + budget.report()


def record_charge(actor: Akgent[Any, Any], budget: TeamBudget, charge: BudgetCharged) -> str | None:
    """Charge ``budget``, record the charge in the log, and warn once at ``warn_at``.

    What a member that is not a ``BaseAgent`` (a remote A2A member) calls after each
    call it made, on its own thread. The warning goes to the human and to the lead as
    notifications; when ``actor`` is the lead itself, no message is sent to it and the
    warning's text is returned for it to take in (None otherwise).
    """
    warned = budget.charge(charge)
    actor.notify_event(charge)
    if warned is None:
        return None
    actor.notify_event(warned)
    text = warning_text(warned)
    team = actor.get_team()
    human = next((m for m in team if m.is_user_proxy), None)
    if human is not None:
        actor.send(human, AgentMessage(content=text, type="notification"))
    if budget.lead == actor.config.name:
        return text
    lead = next((m for m in team if m.name == budget.lead and not m.is_user_proxy), None)
    if lead is not None:
        actor.send(lead, AgentMessage(content=text, type="notification"))
    return None
