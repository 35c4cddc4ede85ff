"""A team budget holds across a failover: the team's next worker rebuilds it from the log.

A team with ``budget: {requests: 3}`` on a fleet of two workers answers three pings;
the fourth finds the budget used up and asks the human. The worker holding the team
is SIGKILLed; the next message places the team on the other worker, whose budget,
rebuilt from the log, is still used up with the same question open (not asked again),
until a human's ``/budget raise`` lets the team go on.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any
from uuid import UUID

import pytest

from akgentic.cluster import connect
from akgentic.console.views import pending_questions
from akgentic.core.messages.orchestrator import EventMessage, SentMessage
from akgentic.llm.budget_events import (
    BudgetChanged,
    BudgetCharged,
    BudgetExhausted,
    BudgetWarned,
)
from akgentic.llm.scripted_server import ScriptedLLMServer, ScriptStep
from akgentic.team import TeamCard
from akgentic.team.store import EventStore
from akgentic.testing import wait_until
from akgentic.testing.runtime_contract import Fleet
from akgentic.testing.scripted import last_received

TIMEOUT = 120.0


def rules(body: dict[str, Any]) -> ScriptStep:
    """``ping`` -> ``pong`` to the sender; anything else (a notification) -> silence."""
    from akgentic.agent.output_models import Request, StructuredOutput
    from akgentic.llm.scripted_server import structured

    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    latest = None
    for message in reversed(users):
        latest = last_received({"messages": [message]})
        if latest is not None:
            break
    requests = []
    if latest is not None and latest[0] == "request" and "ping" in latest[2]:
        requests.append(Request(recipient=latest[1], message_type="response", message="pong"))
    return structured(StructuredOutput(messages=requests), usage=(100, 10))


def card(server: ScriptedLLMServer) -> TeamCard:
    return TeamCard.from_yaml(
        "name: budget-failover\n"
        "entry_point:\n"
        "  card:\n"
        "    agent_class: akgentic.agent.HumanProxy\n"
        "    description: The person\n"
        '    config: {name: "@Human", role: Human}\n'
        "members:\n"
        "  - card:\n"
        "      agent_class: akgentic.agent.BaseAgent\n"
        "      description: Lead\n"
        "      config:\n"
        '        name: "@Lead"\n'
        "        role: Lead\n"
        "        model_cfg: {provider: openai-chat, model: lead-model, "
        f"base_url: '{server.base_url}', api_key: scripted}}\n"
        "message_types:\n  - akgentic.agent.AgentMessage\n"
        "budget:\n  requests: 3\n"
    )


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(fallback=rules) as server:
        yield server


@pytest.fixture
def log_store(store_url: str) -> Iterator[EventStore]:
    from akgentic.team.urls import open_event_store

    store = open_event_store(store_url)
    yield store
    store.close()


def _log(store: EventStore, team_id: UUID) -> list[Any]:
    return [e.event for e in store.load_events(team_id)]


def _events(log: list[Any], cls: type) -> list[Any]:
    return [m.event for m in log if isinstance(m, EventMessage) and isinstance(m.event, cls)]


def _to_human(log: list[Any]) -> list[str]:
    return [
        str(getattr(m.message, "content", ""))
        for m in log
        if isinstance(m, SentMessage) and m.recipient.is_user_proxy
    ]


def _pongs_are(store: EventStore, team_id: UUID, count: int) -> bool:
    return _to_human(_log(store, team_id)).count("pong") == count


def test_a_team_budget_holds_across_a_failover(
    cluster_url: str,
    worker_fleet: Fleet,
    log_store: EventStore,
    llm: ScriptedLLMServer,
) -> None:
    worker_fleet.ensure(2)
    client = connect(cluster_url)
    try:
        team_id = client.create(card(llm))
        for index in range(3):
            client.send(team_id, "ping", key=f"ping-{index}", timeout=TIMEOUT)
            wait_until(partial(_pongs_are, log_store, team_id, index + 1), timeout=TIMEOUT)
        client.send(team_id, "ping", key="ping-3", timeout=TIMEOUT)
        wait_until(
            lambda: pending_questions(list(enumerate(_log(log_store, team_id)))),
            timeout=TIMEOUT,
        )
        assert llm.served == 3
        [question] = pending_questions(list(enumerate(_log(log_store, team_id))))

        holder = client.where(team_id).worker
        assert holder is not None
        worker_fleet.kill(holder)
        # The next message places the team on the other worker, which resumes it.
        ack = client.send(team_id, "/budget", key="show", timeout=TIMEOUT)
        assert ack.worker != holder
        wait_until(
            lambda: [c for c in _to_human(_log(log_store, team_id)) if "Team budget:" in c],
            timeout=TIMEOUT,
        )
        [report] = [c for c in _to_human(_log(log_store, team_id)) if "Team budget:" in c]
        assert "requests: 3 of 3" in report and "used up" in report
        assert llm.served == 3, "a request started on the new worker"
        log = _log(log_store, team_id)
        assert [q["id"] for q in pending_questions(list(enumerate(log)))] == [question["id"]]

        client.send(team_id, "/budget raise requests=10", key="raise", timeout=TIMEOUT)
        wait_until(lambda: _events(_log(log_store, team_id), BudgetChanged), timeout=TIMEOUT)
        client.send(team_id, "ping", key="ping-4", timeout=TIMEOUT)
        wait_until(lambda: _to_human(_log(log_store, team_id)).count("pong") >= 4, timeout=TIMEOUT)
        log = _log(log_store, team_id)
        assert len(_events(log, BudgetExhausted)) == 1, "asked again after the failover"
        assert len(_events(log, BudgetWarned)) == 1
        wait_until(
            lambda: (
                sum(c.requests for c in _events(_log(log_store, team_id), BudgetCharged))
                == llm.served
            ),
            timeout=TIMEOUT,
        )
        assert pending_questions(list(enumerate(_log(log_store, team_id)))) == []
    finally:
        client.close()
