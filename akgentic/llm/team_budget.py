"""The team-wide budget: the card's ``budget:`` block and the counter every member charges.

A team card may carry a ``budget:`` block (:class:`BudgetLimits`): caps on input and
output tokens, model requests, tool calls, estimated USD and wall time (seconds spent
in model requests and remote calls, summed over members), counted across every member
of the team, hired members and remote members included.

While the team runs, one :class:`TeamBudget` per team lives in the team's process
(the orchestrator holds it). Members check it before each model request (a few
attribute reads, no lock) and charge it after each response; every charge, warning,
question, change and stop is also written to the team's log
(:mod:`akgentic.llm.budget_events`), and :meth:`TeamBudget.rebuild` replays those to
get the same budget back after a stop, a crash or a failover.

The bound on overshoot: a member checks before a request and is charged after the
response, so requests already in flight when a limit runs out still complete and are
charged. The team never goes over its budget by more than one model request per
member in flight at that moment.

This module imports neither pydantic-ai nor the actor runtime.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from akgentic.llm.budget_events import (
    BudgetChanged,
    BudgetCharged,
    BudgetExhausted,
    BudgetStopped,
    BudgetWarned,
)
from akgentic.llm.budget_limits import LIMIT_NAMES, BudgetLimits
from akgentic.llm.errors import UsageLimitError

if TYPE_CHECKING:
    # A team with a budget imports this module when it starts: asyncio (with ssl and
    # subprocess, ~15 ms) is imported by the one coroutine that waits, when it runs.
    import asyncio

__all__ = [
    "BUDGET_SERVICE",
    "LIMIT_NAMES",
    "BudgetLimits",
    "Spent",
    "TeamBudget",
    "TeamBudgetError",
    "parse_limit_changes",
]

#: The name the orchestrator shares a team's :class:`TeamBudget` under (``team_service``).
BUDGET_SERVICE = "budget"
_INT_LIMITS = frozenset({"input_tokens", "output_tokens", "requests", "tool_calls"})


class TeamBudgetError(UsageLimitError):
    """The team budget refuses the work: it ran out and a human answered "stop"."""


@dataclass
class Spent:
    """What a team (or one member) has used so far."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0
    usd: float = 0.0
    wall_time_s: float = 0.0

    def add(self, charge: BudgetCharged) -> None:
        """Fold one charge in."""
        self.requests += charge.requests
        self.input_tokens += charge.input_tokens
        self.output_tokens += charge.output_tokens
        self.tool_calls += charge.tool_calls
        self.usd += charge.usd
        self.wall_time_s += charge.seconds

    def of(self, name: str) -> float:
        """The figure of limit ``name``."""
        value: float = getattr(self, name)
        return value

    def as_dict(self) -> dict[str, float]:
        """Every figure by limit name."""
        return {name: self.of(name) for name in LIMIT_NAMES}


def _figure(name: str, value: float | None) -> str:
    if value is None:
        return "unlimited"
    if name == "usd":
        return f"${value:.4f}"
    if name == "wall_time_s":
        return f"{value:.1f} s"
    return f"{int(value):,}"


def parse_limit_changes(
    words: Iterable[str], current: BudgetLimits, *, raising: bool
) -> dict[str, float | None]:
    """New caps from ``name=value`` words (``+value`` adds to the cap, ``none`` lifts it).

    With ``raising``, every new cap must be above the current one (a raise never
    lowers). Raises ``ValueError`` saying what is wrong.
    """
    changes: dict[str, float | None] = {}
    for word in words:
        name, sep, raw = word.partition("=")
        name = name.strip()
        if not sep or name not in LIMIT_NAMES:
            raise ValueError(
                f"{word!r} is not name=value with a limit name ({', '.join(LIMIT_NAMES)})"
            )
        raw = raw.strip()
        old = getattr(current, name)
        if raw.lower() in ("none", "unlimited"):
            changes[name] = None
            continue
        add = raw.startswith("+")
        try:
            value = float(raw[1:] if add else raw)
        except ValueError:
            raise ValueError(f"{name}: {raw!r} is not a number") from None
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name}: must be a number > 0, not {raw!r}")
        if add:
            value += old or 0
        if name in _INT_LIMITS:
            if value != int(value):
                raise ValueError(f"{name}: must be a whole number, not {raw!r}")
            value = int(value)
        if raising and old is not None and value <= old:
            raise ValueError(
                f"{name}: {raw} does not raise the limit ({_figure(name, old)}); "
                "use /budget set to lower it"
            )
        changes[name] = value
    if not changes:
        raise ValueError("name at least one limit, e.g. usd=5 or requests=+100")
    return changes


@dataclass
class _Waiter:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]


@dataclass
class _State:
    limits: BudgetLimits
    spent: Spent = field(default_factory=Spent)
    by_member: dict[str, Spent] = field(default_factory=dict)
    warned: bool = False
    #: The open question's id ("" while it is being asked); None: none open.
    question: str | None = None
    stopped: bool = False


class TeamBudget:
    """The live budget of one running team (see the module docstring).

    Thread-safe: members charge it from their own threads. :attr:`blocked` is the
    fast check a member makes before each model request.
    """

    def __init__(self, limits: BudgetLimits, lead: str | None = None) -> None:
        #: The member warned when the team nears its limits (the card's lead).
        self.lead = lead
        self._lock = threading.Lock()
        self._state = _State(limits)
        self._waiters: list[_Waiter] = []
        self._generation = 0
        #: Why no new request may start (a limit name, or "stopped"); None: go on.
        self.blocked: str | None = None

    # ---------------------------------------------------------------- reading

    @property
    def limits(self) -> BudgetLimits:
        """The limits in force (the card's, or the last change's)."""
        return self._state.limits

    @property
    def stopped(self) -> bool:
        """A human answered "stop" and nobody raised the budget since."""
        return self._state.stopped

    @property
    def question(self) -> str | None:
        """The id of the open budget question ("" while being asked), or None."""
        return self._state.question

    @property
    def warned(self) -> bool:
        """The lead was warned since the last change."""
        return self._state.warned

    @property
    def generation(self) -> int:
        """Counts changes, stops and wake-ups: a waiter looks again when it moves."""
        return self._generation

    def spent(self) -> Spent:
        """A copy of the team's totals."""
        with self._lock:
            return replace(self._state.spent)

    def by_member(self) -> dict[str, Spent]:
        """A copy of each member's totals."""
        with self._lock:
            return {name: replace(spent) for name, spent in self._state.by_member.items()}

    def _over(self) -> tuple[str, float, float] | None:
        spent = self._state.spent
        for name, cap in self._state.limits.caps().items():
            if cap is not None and spent.of(name) >= cap:
                return name, spent.of(name), cap
        return None

    def _fractions(self) -> list[tuple[str, float, float]]:
        spent = self._state.spent
        return [
            (name, spent.of(name), cap)
            for name, cap in self._state.limits.caps().items()
            if cap is not None
        ]

    def _refresh(self) -> None:
        over = self._over()
        if self._state.stopped:
            self.blocked = "stopped"
        else:
            self.blocked = over[0] if over is not None else None

    def exhausted(self) -> tuple[str, float, float] | None:
        """``(limit, used, cap)`` of the first limit used up, or None."""
        with self._lock:
            return self._over()

    def hire_refusal(self) -> str | None:
        """Why hiring is refused now (below the card's floor), or None."""
        with self._lock:
            limits = self._state.limits
            if self.blocked is not None:
                return "The team budget is used up: nobody can be hired until a human raises it."
            spent = self._state.spent
            if limits.hire_floor_usd is not None and limits.usd is not None:
                left = limits.usd - spent.usd
                if left < limits.hire_floor_usd:
                    return (
                        f"Hiring is refused: the team budget has ${left:.4f} left, below its "
                        f"hiring floor of ${limits.hire_floor_usd:.4f}."
                    )
            if limits.hire_floor is not None:
                for name, used, cap in self._fractions():
                    left = 1 - used / cap
                    if left < limits.hire_floor:
                        return (
                            f"Hiring is refused: the team budget has {max(left, 0):.0%} of its "
                            f"{name} left, below its hiring floor of {limits.hire_floor:.0%}."
                        )
        return None

    # ---------------------------------------------------------------- changing

    def charge(self, charge: BudgetCharged) -> BudgetWarned | None:
        """Count ``charge``; the warning to record when it crossed ``warn_at`` first."""
        with self._lock:
            self._add(charge)
            state = self._state
            if state.warned:
                return None
            threshold = state.limits.warn_at
            for name, used, cap in self._fractions():
                if used >= cap * threshold:
                    state.warned = True
                    return BudgetWarned(limit=name, used=used, cap=cap, threshold=threshold)
        return None

    def _add(self, charge: BudgetCharged) -> None:
        state = self._state
        state.spent.add(charge)
        member = state.by_member.get(charge.member)
        if member is None:
            member = state.by_member[charge.member] = Spent()
        member.add(charge)
        self._refresh()

    def claim_question(self, member: str) -> BudgetExhausted | None:
        """The exhaustion to ask the human about, for the first member to find it.

        Returns None when the budget is not exhausted, is stopped, or a question is
        already open (or being asked): the human is asked once per exhaustion.
        """
        with self._lock:
            state = self._state
            over = self._over()
            if over is None or state.stopped or state.question is not None:
                return None
            state.question = ""
            name, used, cap = over
            return BudgetExhausted(limit=name, used=used, cap=cap, member=member)

    def asked(self, question_id: str) -> None:
        """Record the id of the question just sent to the human."""
        with self._lock:
            self._state.question = question_id

    def change(self, caps: Mapping[str, float | None], by: str) -> BudgetChanged:
        """Set the given caps (the others stay); the event to record.

        Raises ``ValueError`` when the result is not a valid budget.
        """
        with self._lock:
            current = self._state.limits
            try:
                limits = BudgetLimits.model_validate({**current.model_dump(), **caps})
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'budget'}: "
                    f"{str(e['msg']).removeprefix('Value error, ')}"
                    for e in exc.errors(include_url=False)
                )
                raise ValueError(problems) from None
            event = BudgetChanged(
                input_tokens=limits.input_tokens,
                output_tokens=limits.output_tokens,
                requests=limits.requests,
                tool_calls=limits.tool_calls,
                usd=limits.usd,
                wall_time_s=limits.wall_time_s,
                by=by,
                question_id=self._state.question or "",
            )
            self._apply_change(event)
        self.wake()
        return event

    def stop(self, by: str) -> BudgetStopped:
        """Stop the work: waiting members end their turns; the event to record."""
        with self._lock:
            event = BudgetStopped(by=by, question_id=self._state.question or "")
            self._apply_stop()
        self.wake()
        return event

    def _apply_change(self, event: BudgetChanged) -> None:
        state = self._state
        caps = {name: getattr(event, name) for name in LIMIT_NAMES}
        state.limits = state.limits.model_copy(update=caps)
        state.question = None
        state.stopped = False
        threshold = state.limits.warn_at
        # Still over the threshold after the change: that crossing was already told.
        state.warned = any(used >= cap * threshold for _n, used, cap in self._fractions())
        self._refresh()

    def _apply_stop(self) -> None:
        self._state.stopped = True
        self._state.question = None
        self._refresh()

    # ------------------------------------------------------------------ replay

    def apply(self, event: object) -> None:
        """Replay one logged budget event (anything else is ignored)."""
        with self._lock:
            if isinstance(event, BudgetCharged):
                self._add(event)
            elif isinstance(event, BudgetWarned):
                self._state.warned = True
            elif isinstance(event, BudgetExhausted):
                self._state.question = event.question_id
            elif isinstance(event, BudgetChanged):
                self._apply_change(event)
            elif isinstance(event, BudgetStopped):
                self._apply_stop()

    @classmethod
    def rebuild(
        cls, limits: BudgetLimits, events: Iterable[Any], lead: str | None = None
    ) -> TeamBudget:
        """The budget as the log left it: ``limits``, then every budget event in order.

        ``events`` may hold the events or wrappers with ``.event`` (orchestrator
        ``EventMessage``\\ s, whole logs included: other messages are skipped).
        """
        budget = cls(limits, lead)
        for item in events:
            budget.apply(getattr(item, "event", item))
        return budget

    # ----------------------------------------------------------------- waiting

    def wake(self) -> None:
        """Make every waiter look again (after a change, a stop, or a command arrived)."""
        with self._lock:
            self._generation += 1
            waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: its run is gone
                waiter.loop.call_soon_threadsafe(_resolve, waiter.future)

    async def wait(self, seen: int, timeout: float) -> None:
        """Return when :attr:`generation` moved past ``seen``, or after ``timeout`` s."""
        import asyncio

        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        waiter = _Waiter(loop, future)
        with self._lock:
            if self._generation != seen:
                return
            self._waiters.append(waiter)
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            pass
        finally:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    # ---------------------------------------------------------------- showing

    def status(self) -> dict[str, Any]:
        """The budget as plain data: limits, spent, state, and each member's totals."""
        with self._lock:
            state = self._state
            return {
                "limits": state.limits.caps(),
                "spent": state.spent.as_dict(),
                "blocked": self.blocked,
                "stopped": state.stopped,
                "warned": state.warned,
                "question": state.question,
                "warn_at": state.limits.warn_at,
                "hire_floor": state.limits.hire_floor,
                "hire_floor_usd": state.limits.hire_floor_usd,
                "members": {name: s.as_dict() for name, s in state.by_member.items()},
            }

    def report(self) -> str:
        """The budget in a few lines, as ``/budget`` shows it."""
        status = self.status()
        lines = ["Team budget:"]
        for name in LIMIT_NAMES:
            cap = status["limits"][name]
            used = status["spent"][name]
            if cap is None:
                lines.append(f"  {name}: {_figure(name, used)} used (no limit)")
            else:
                lines.append(
                    f"  {name}: {_figure(name, used)} of {_figure(name, cap)} ({used / cap:.0%})"
                )
        blocked = status["blocked"]
        if blocked == "stopped":
            lines.append("State: stopped by a human; /budget raise ... to go on.")
        elif blocked is not None:
            lines.append(
                f"State: {blocked} used up; members wait before their next model request "
                "(/budget raise ... or /budget stop)."
            )
        else:
            lines.append("State: open.")
        return "\n".join(lines)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
