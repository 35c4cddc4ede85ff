"""Observability bench: exporting a 10,000-event stored log as OpenTelemetry spans.

    python bench/observe.py [--events 10000] [--repeat 3] [--budget-requests 20000]

Writes a synthetic team log of ``--events`` stored events to a SQLite store (real
kernel messages, shaped as a real run records them: the human asks the manager, who
calls a tool, asks a researcher and answers; every model request with its usage),
then times ``akgentic team trace``'s path end to end, in process: read the log from
the store, map it to spans, send them over OTLP/HTTP to the in-process receiver of
``akgentic_otel.testing``, until the receiver has decoded every span. Prints one
JSON object:

- ``trace_export_s_10000``: the best of ``--repeat`` runs, in seconds (for another
  ``--events``, the key still names 10,000 and ``events`` says what was measured);
- ``spans``, ``events``, ``map_s`` (reading and mapping alone), ``repeat``;
- ``otel_overhead_pct`` (and ``otel_cpu_overhead_pct``, ``otel_overhead_pairs``,
  ``otel_spans_exported``): what live export adds to ``bench/agent_turn.py``'s round
  trip, measured by ``bench/otel_overhead.py`` (``--pairs``, default 5; 0 skips it);
- ``console_graph_ms_1000_members``: the console's team graph of a team of 1,000
  members and 1,997 messages, from the decoded log to the SVG document, in
  milliseconds (best of ``--repeat``; see :func:`console_graph_figure`).

- ``budget_check_us``: the team budget's own cost per model request, in microseconds:
what a member's :class:`~akgentic.agent.budget_guard.BudgetGuard` does around one
request (the check before it, and charging the response after it: building the
``BudgetCharged`` event, counting it under the budget's lock, handing the event on),
averaged over ``--budget-requests`` requests, best of ``--repeat``. Handing the event on
goes to a list here; posting it to the orchestrator costs what any other LLM event costs
(``bench/agent_turn.py`` measures that path).

Targets (issue #30): ``trace_export_s_10000`` <= 2 s, ``otel_overhead_pct`` <= 5,
``console_graph_ms_1000_members`` <= 200 ms, ``budget_check_us`` <= 50 us.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from akgentic_otel.export import export_otlp, team_resource
from akgentic_otel.mapping import trace_log
from akgentic_otel.testing import OTLPReceiver

KEYS = (
    "trace_export_s_10000",
    "spans",
    "events",
    "map_s",
    "repeat",
    "otel_overhead_pct",
    "otel_cpu_overhead_pct",
    "otel_overhead_pairs",
    "otel_spans_exported",
    "console_graph_ms_1000_members",
    "budget_check_us",
)


def _address(name: str, role: str, team_id: UUID, *, human: bool = False) -> Any:
    from akgentic.core.actor_address import ActorAddressProxy

    return ActorAddressProxy(
        {
            "__actor_address__": True,
            "__actor_type__": "akgentic.agent.BaseAgent",
            "agent_id": str(uuid4()),
            "name": name,
            "role": role,
            "team_id": str(team_id),
            "squad_id": str(team_id),
            "is_user_proxy": human,
        }
    )


class _Log:
    """Builds one team's log, a millisecond between events."""

    def __init__(self, team_id: UUID) -> None:
        self.team_id = team_id
        self.messages: list[Any] = []
        self.clock = datetime(2026, 1, 1, tzinfo=UTC)

    def add(self, message: Any, sender: Any, parent: UUID | None = None) -> Any:
        self.clock += timedelta(milliseconds=1)
        message.sender = sender
        message.team_id = self.team_id
        message.parent_id = parent
        message.timestamp = self.clock
        self.messages.append(message)
        return message

    def stored(self) -> list[Any]:
        from akgentic.team.models import PersistedEvent

        return [
            PersistedEvent(team_id=self.team_id, sequence=i, event=m, timestamp=m.timestamp)
            for i, m in enumerate(self.messages, start=1)
        ]


def _model_turn(log: _Log, agent: Any, current: UUID, model: str, tool: bool) -> None:
    """One agent's model requests of a turn (a tool call first when ``tool``)."""
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    from akgentic.core.messages.orchestrator import EventMessage
    from akgentic.llm.events import (
        LlmMessageEvent,
        LlmUsageEvent,
        ToolCallEvent,
        ToolReturnEvent,
    )

    run = str(uuid4())

    def event(value: Any) -> None:
        log.add(EventMessage(event=value), agent, current)

    def usage() -> None:
        event(LlmUsageEvent(run, model, "openai", 120, 30, estimated_cost_usd=0.0001))

    event(LlmMessageEvent(ModelRequest(parts=[UserPromptPart(content="You received...")])))
    if tool:
        call = f"call_{uuid4().hex[:8]}"
        event(LlmMessageEvent(ModelResponse(parts=[ToolCallPart("update_planning", "{}", call)])))
        event(ToolCallEvent(run, "update_planning", call, "{}"))
        usage()
        returned = ToolReturnPart("update_planning", "Done", call)
        event(LlmMessageEvent(ModelRequest(parts=[returned])))
        event(ToolReturnEvent(run, "update_planning", call))
    event(LlmMessageEvent(ModelResponse(parts=[TextPart("{}")], model_name=model)))
    usage()


def synthetic_log(events: int) -> tuple[UUID, list[Any]]:
    """A log of about ``events`` stored events: turns of a manager, a researcher, a human."""
    from akgentic.agent import AgentMessage
    from akgentic.core.messages.orchestrator import (
        ProcessedMessage,
        ReceivedMessage,
        SentMessage,
    )

    team_id = uuid4()
    log = _Log(team_id)
    human = _address("@Human", "Human", team_id, human=True)
    manager = _address("@Manager", "Manager", team_id)
    researcher = _address("@Researcher", "Researcher", team_id)

    def send(sender: Any, recipient: Any, parent: UUID | None, kind: str) -> UUID:
        inner = AgentMessage(content="text", type=kind)
        inner.parent_id, inner.sender = parent, sender
        log.add(SentMessage(message=inner, recipient=recipient), sender, parent)
        return inner.id

    def handle(agent: Any, message: UUID) -> None:
        log.add(ReceivedMessage(message_id=message), agent, message)

    def done(agent: Any, message: UUID) -> None:
        log.add(ProcessedMessage(message_id=message), agent, message)

    while len(log.messages) < events:
        asked = send(human, manager, None, "request")
        handle(manager, asked)
        _model_turn(log, manager, asked, "gpt-4.1-mini", tool=True)
        delegated = send(manager, researcher, asked, "request")
        done(manager, asked)
        handle(researcher, delegated)
        _model_turn(log, researcher, delegated, "gpt-4.1-mini", tool=False)
        found = send(researcher, manager, delegated, "response")
        done(researcher, delegated)
        handle(manager, found)
        _model_turn(log, manager, found, "gpt-4.1-mini", tool=False)
        answer = send(manager, human, found, "response")
        done(manager, found)
        handle(human, answer)
        done(human, answer)
    log.messages = log.messages[:events]
    return team_id, log.stored()


def _store(directory: Path, events: int) -> tuple[str, UUID]:
    from akgentic.team.card import TeamCard
    from akgentic.team.models import Process, TeamStatus
    from akgentic.team.store import BatchEventStore
    from akgentic.team.urls import open_event_store

    url = f"sqlite:///{directory}/bench.db"
    team_id, stored = synthetic_log(events)
    card = TeamCard.model_validate(
        {
            "name": "bench-team",
            "entry_point": {
                "card": {
                    "agent_class": "akgentic.agent.HumanProxy",
                    "description": "The human",
                    "config": {"name": "@Human", "role": "Human"},
                }
            },
            "members": [],
            "message_types": ["akgentic.agent.AgentMessage"],
        }
    )
    store = open_event_store(url)
    try:
        store.save_team(Process(team_id=team_id, team_card=card, status=TeamStatus.STOPPED))
        assert isinstance(store, BatchEventStore), "SQLite stores append batches"
        store.save_events(stored)
    finally:
        store.close()
    return url, team_id


def _export_once(url: str, team_id: UUID, receiver: OTLPReceiver) -> tuple[float, float, int]:
    from akgentic.team.urls import open_event_store

    receiver.clear()
    started = time.perf_counter()
    store = open_event_store(url)
    try:
        process = store.load_team(team_id)
        assert process is not None
        events = store.load_events(team_id)
    finally:
        store.close()
    name = process.team_card.name or ""
    records = trace_log(team_id, events, team_name=name)
    mapped = time.perf_counter()
    sent = export_otlp(records, team_resource(team_id, name), receiver.url)
    receiver.wait_for(lambda spans: len(spans) >= sent, timeout=60)
    return time.perf_counter() - started, mapped - started, sent


def _otel_overhead(pairs: int) -> dict[str, Any]:
    """``bench/otel_overhead.py``'s figures (null figures when ``pairs`` is 0)."""
    if pairs <= 0:
        return dict.fromkeys(KEYS[5:9])
    import importlib.util

    path = Path(__file__).with_name("otel_overhead.py")
    spec = importlib.util.spec_from_file_location("akgentic_bench_otel_overhead", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figures: dict[str, Any] = module.measure(pairs)
    return figures


def console_graph_figure(repeat: int) -> dict[str, float]:
    """``console_graph_ms_1000_members``: the graph picture of a 1,000-member team, in ms.

    The log is written with :class:`akgentic.testing.team_log.TeamLog`: ``@Human``
    asks ``@Lead``, and 998 hires join in a tree (each member hires up to three);
    every hire gets a request from its hirer and answers it, so the team has 1,000
    members and 1,997 messages. Timed, best of ``repeat``: from the decoded messages
    to the SVG document (the pass over the log, the layout, the drawing), which is
    what the console adds to reading the log for ``GET .../pictures/graph.svg``.
    """
    from akgentic.console.pictures import picture_svg
    from akgentic.testing.team_log import TeamLog

    log = TeamLog()
    human = log.member("@Human", human=True)
    members = [log.member("@Lead")]
    log.send(human, members[0], "build it")
    for index in range(1, 999):
        hirer = members[(index - 1) // 3]
        hire = log.member(f"@Member{index}", "Member", hired_by=hirer)
        members.append(hire)
        log.send(hirer, hire, "your part")
        log.send(hire, hirer, "done", "response")
    times = []
    for _ in range(max(repeat, 1)):
        started = time.perf_counter()
        svg = picture_svg("graph", log.messages)
        times.append(time.perf_counter() - started)
    assert svg.count('class="node ') == 1_000, "every member is drawn"
    return {"console_graph_ms_1000_members": round(min(times) * 1000, 1)}


class _Member:
    """The little of an agent a BudgetGuard touches while charging: a name and the log."""

    name = "@Worker"

    def __init__(self) -> None:
        from akgentic.core.agent_config import BaseConfig

        self.config = BaseConfig(name=self.name, role="Worker")
        self.events: list[object] = []

    def notify_event(self, event: object) -> None:
        self.events.append(event)


def budget_check_us(requests: int, repeat: int) -> float:
    """Microseconds the team budget costs one model request (best of ``repeat``)."""
    import asyncio
    from typing import cast

    from akgentic.agent.budget_guard import BudgetGuard
    from akgentic.llm.events import LlmUsageEvent
    from akgentic.llm.run_hooks import RunView
    from akgentic.llm.team_budget import BudgetLimits, TeamBudget

    usage = LlmUsageEvent(
        run_id="run",
        model_name="gpt-4.1-mini",
        provider_name="openai",
        input_tokens=1200,
        output_tokens=150,
        estimated_cost_usd=0.0007,
    )
    view = cast(RunView, None)  # the hook reads it only to add a note or to wait

    async def rounds(guard: BudgetGuard) -> float:
        started = time.perf_counter()
        for _ in range(requests):
            await guard.before_model_request(view)
            guard.notify_event(usage)
        return time.perf_counter() - started

    best = float("inf")
    loop = asyncio.new_event_loop()
    try:
        for _ in range(max(repeat, 1)):
            member = _Member()
            limits = BudgetLimits(requests=10 * requests, usd=1e6, tool_calls=10 * requests)
            guard = BudgetGuard(cast(Any, member), TeamBudget(limits, lead="@Lead"))
            elapsed = loop.run_until_complete(rounds(guard))
            assert len(member.events) == requests  # one BudgetCharged per request
            best = min(best, elapsed)
    finally:
        loop.close()
    return best / requests * 1e6


def main() -> None:
    """Run the bench and print its JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=5, help="otel overhead pairs (0: skip)")
    parser.add_argument("--budget-requests", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, OTLPReceiver() as receiver:
        url, team_id = _store(Path(tmp), args.events)
        runs = [_export_once(url, team_id, receiver) for _ in range(max(args.repeat, 1))]
    best = min(runs)
    result = {
        "trace_export_s_10000": round(best[0], 3),
        "spans": best[2],
        "events": args.events,
        "map_s": round(best[1], 3),
        "repeat": len(runs),
        **_otel_overhead(args.pairs),
        **console_graph_figure(args.repeat),
        "budget_check_us": round(budget_check_us(args.budget_requests, args.repeat), 2),
    }
    assert tuple(result) == KEYS
    print(json.dumps(result))


if __name__ == "__main__":
    main()
