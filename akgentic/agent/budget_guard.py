"""The run hook that holds an agent's model requests to the team budget.

See :mod:`akgentic.agent.team_budget` for what it does; this module imports
pydantic-ai (through the run hooks), so the agent loads it in ``on_start`` only.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from akgentic.agent.messages import AgentMessage
from akgentic.agent.team_budget import (
    budget_command,
    budget_question,
    record_charge,
    team_budget_of,
)
from akgentic.llm.budget_events import BudgetCharged, BudgetExhausted
from akgentic.llm.events import LlmUsageEvent, ToolCallEvent
from akgentic.llm.run_hooks import RunHook, RunView
from akgentic.llm.team_budget import TeamBudget, TeamBudgetError

if TYPE_CHECKING:
    from akgentic.agent.agent import BaseAgent

__all__ = ["WAIT_POLL_S", "BudgetGuard"]

logger = logging.getLogger(__name__)

#: Longest pause between two looks at the inbox while a member waits for a raise
#: (a human's ``/budget`` line wakes it at once; an answer without the ``/`` waits this).
WAIT_POLL_S = 0.5


def _budget_line(message: AgentMessage, question: str | None) -> str | None:
    """The ``/budget`` arguments a human's message carries, or None when it is not one.

    A ``/budget ...`` line counts wherever it was typed; a reply to the open budget
    question counts with or without the ``/budget`` prefix (``raise usd=5``, ``stop``).
    """
    content = message.content.strip()
    if content.startswith("/budget"):
        rest = content[len("/budget") :]
        if not rest or rest[0].isspace():
            return rest.strip()
    if question and message.parent_id is not None and str(message.parent_id) == question:
        return content.removeprefix("/").strip()
    return None


class BudgetGuard(RunHook):
    """Checks, charges and waits on the team budget for one agent (see module docstring).

    Also the agent's context observer: it sees the ``ToolCallEvent``\\ s and the
    ``LlmUsageEvent`` of each response as they are recorded, and charges them.
    """

    def __init__(self, agent: BaseAgent, budget: TeamBudget | None = None) -> None:
        self._agent = agent
        self._budget: TeamBudget | None = budget
        #: ``budget`` given: no need to ask the orchestrator for it.
        self._resolved = budget is not None
        self._started: float | None = None
        self._tool_calls = 0
        self._note: str | None = None

    # -------------------------------------------------------------- budget

    def budget(self) -> TeamBudget | None:
        """The team budget (asked of the orchestrator once, then kept)."""
        if not self._resolved:
            try:
                self._budget = team_budget_of(self._agent)
            except Exception:  # the orchestrator is stopping: ask again next time
                logger.debug("%s: no answer about the team budget", self._agent.name, exc_info=True)
                return None
            self._resolved = True
        return self._budget

    def answer_line(self, message: AgentMessage) -> str | None:
        """The budget arguments of ``message`` when it answers the open budget question."""
        budget = self.budget()
        if budget is None or not budget.question or message.parent_id is None:
            return None
        if str(message.parent_id) != budget.question:
            return None
        return message.content.strip().removeprefix("/").strip()

    def wake(self) -> None:
        """A human's ``/budget`` line was queued: a waiting run looks at it now (any thread)."""
        budget = self._budget
        if budget is not None:
            budget.wake()

    # ---------------------------------------------------------------- check

    async def before_model_request(self, view: RunView) -> None:
        budget = self.budget()
        if budget is None:
            return
        note, self._note = self._note, None
        if note is not None:
            view.enqueue(note)
        if budget.blocked is not None:
            await self._wait(budget, view)
        self._started = time.perf_counter()

    async def _wait(self, budget: TeamBudget, view: RunView) -> None:
        agent = self._agent
        while True:
            seen = budget.generation
            self._take_commands(budget, view)
            blocked = budget.blocked
            if blocked is None:
                return
            if blocked == "stopped":
                raise TeamBudgetError(
                    "the team budget ran out and a human said stop; /budget raise ... to go on"
                )
            exhausted = budget.claim_question(agent.name)
            if exhausted is not None:
                self._ask(budget, exhausted)
            await budget.wait(seen, WAIT_POLL_S)

    def _ask(self, budget: TeamBudget, exhausted: BudgetExhausted) -> None:
        agent = self._agent
        human = agent.human_address()
        question_id = ""
        if human is None:
            logger.warning("%s: the team budget ran out and there is no human to ask", agent.name)
        else:
            asked = agent.send(
                human, AgentMessage(content=budget_question(exhausted), type="request")
            )
            question_id = str(asked.id)
        budget.asked(question_id)
        agent.notify_event(
            BudgetExhausted(
                limit=exhausted.limit,
                used=exhausted.used,
                cap=exhausted.cap,
                member=exhausted.member,
                question_id=question_id,
            )
        )

    def _take_commands(self, budget: TeamBudget, view: RunView) -> None:
        """Run the humans' budget lines waiting in the inbox (the run cannot end to take them)."""
        from akgentic.agent.agent import operator_action_note

        agent = self._agent
        for message in agent.get_mailbox():
            if not isinstance(message, AgentMessage):
                continue
            sender = message.sender
            if sender is None or not sender.is_user_proxy:
                continue
            line = _budget_line(message, budget.question)
            if line is None:
                continue
            agent.consume_mailbox([message.id])
            result = budget_command(agent, line, sender)
            agent.send(sender, AgentMessage(content=result, type="notification"))
            view.enqueue(operator_action_note(f"/budget {line}".strip(), result))

    # --------------------------------------------------------------- charge

    def notify_event(self, event: object) -> None:
        """Charge each response's usage (a context observer; the agent's own thread)."""
        budget = self._budget
        if budget is None:
            return
        if isinstance(event, ToolCallEvent):
            if not event.tool_name.startswith("final_result"):
                self._tool_calls += 1
        elif isinstance(event, LlmUsageEvent):
            started, self._started = self._started, None
            tool_calls, self._tool_calls = self._tool_calls, 0
            charge = BudgetCharged(
                member=self._agent.name,
                run_id=event.run_id,
                model=f"{event.provider_name}:{event.model_name}",
                requests=event.requests,
                input_tokens=event.input_tokens,
                output_tokens=event.output_tokens,
                tool_calls=tool_calls,
                usd=event.estimated_cost_usd,
                seconds=time.perf_counter() - started if started is not None else 0.0,
            )
            note = record_charge(self._agent, budget, charge)
            if note is not None:  # this agent is the lead: it reads it with its next request
                self._note = note
