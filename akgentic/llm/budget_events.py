"""The events a team budget writes into the team's log.

These classes are persisted like the other LLM events: an agent wraps each one in an
orchestrator ``EventMessage`` and the store keeps its fields plus
``"__model__": "akgentic.llm.budget_events.<Class>"``. That dotted path is read back
forever, so this module and these class names must never move or be renamed.

The budget of a running team (:class:`~akgentic.llm.team_budget.TeamBudget`) is
rebuilt from exactly these events when the team is resumed, on this machine or on
another worker: the card's limits, then every change, charge, warning, question and
stop in log order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

__all__ = [
    "BudgetChanged",
    "BudgetCharged",
    "BudgetEvent",
    "BudgetExhausted",
    "BudgetStopped",
    "BudgetWarned",
]


@dataclass(frozen=True)
class BudgetCharged:
    """What one model request (or one call of a remote member) cost the team.

    ``member`` is the name of the member charged; ``model`` is ``provider:model`` for a
    model request and empty for a remote member; ``seconds`` is how long the request
    took (what ``wall_time_s`` counts).
    """

    member: str
    run_id: str = ""
    model: str = ""
    requests: int = 1
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0
    usd: float = 0.0
    seconds: float = 0.0


@dataclass(frozen=True)
class BudgetWarned:
    """The team crossed its warning threshold (``warn_at``): the lead was told once.

    ``limit`` names the first limit found over the threshold, ``used`` and ``cap``
    its figures at that moment.
    """

    limit: str
    used: float
    cap: float
    threshold: float = 0.8


@dataclass(frozen=True)
class BudgetExhausted:
    """A limit ran out: members pause before their next model request.

    ``question_id`` is the id of the request sent to the human (the durable
    question "raise the budget or stop"); empty when there was no human to ask.
    """

    limit: str
    used: float
    cap: float
    member: str = ""
    question_id: str = ""


@dataclass(frozen=True)
class BudgetChanged:
    """A human set new limits (``/budget raise`` or ``/budget set``).

    Every cap is given, as it is after the change (None: no limit). ``question_id``
    is the open budget question this change answers, if any.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    requests: int | None = None
    tool_calls: int | None = None
    usd: float | None = None
    wall_time_s: float | None = None
    by: str = ""
    question_id: str = ""


@dataclass(frozen=True)
class BudgetStopped:
    """A human answered "stop": waiting members end their turns, no new request starts."""

    by: str = ""
    question_id: str = ""


BudgetEvent: TypeAlias = (
    BudgetCharged | BudgetWarned | BudgetExhausted | BudgetChanged | BudgetStopped
)
