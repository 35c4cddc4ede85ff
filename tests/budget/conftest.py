"""Fixtures of the team budget tests: real teams, a real store, the scripted model server.

The team (``@Human`` enters; ``@Lead`` is the first supervisor, so the one warned;
``@Worker``; ``headcount`` more ``@Hammer_<i>`` workers; the ``Helper`` profile can be
hired) runs on one :class:`ScriptedLLMServer` whose rule-based model answers by model
name and by the latest message the member received. Every reply reports 100 input and
10 output tokens.

- any member, told a ``notification``: no message (a silent acknowledgement);
- after a tool call: tell ``@Human`` what the tool said;
- ``@Lead``: ``ping`` -> ``pong``; ``delegate`` -> ask ``@Worker``; ``via helper`` -> a
  request to the role ``Helper`` (routing hires one); ``hire`` -> the ``hire_members``
  tool; ``relay`` -> pass the rest of the text to ``@Worker`` as a request; a response
  -> ``all done: <it>`` to ``@Human``;
- ``@Worker``: ``ask the lead: X`` -> a request with content ``X`` to ``@Lead``;
- workers and helpers: ``hammer`` -> the ``team_activity`` tool again and again (each
  reply 20 ms late, so the members' requests overlap); anything else -> ``done``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer, ScriptStep
from akgentic.testing.scripted import last_received
from akgentic.testing.waiting import wait_until

LEAD_MODEL = "lead-model"
#: A model the price table knows: the lead runs it when a test wants real dollars.
PRICED_MODEL = "gpt-4o-mini"
WORKER_MODEL = "worker-model"
HELPER_MODEL = "helper-model"
USAGE = (100, 10)
TIMEOUT = 60.0


def _out(*requests: tuple[str, str, str]) -> ScriptStep:
    from akgentic.agent.output_models import Request, StructuredOutput
    from akgentic.llm.scripted_server import structured

    messages = [Request(recipient=r, message_type=t, message=m) for r, t, m in requests]
    return structured(StructuredOutput(messages=messages), usage=USAGE)


def _latest(body: dict[str, Any]) -> tuple[str, str, str] | None:
    """The latest message the member received (notes added after it do not hide it)."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    for message in reversed(users):
        found = last_received({"messages": [message]})
        if found is not None:
            return found
    return None


def rules(body: dict[str, Any]) -> ScriptStep:
    """The model of every member (see the module docstring)."""
    from akgentic.llm.scripted_server import delayed, tool_call

    model = body.get("model")
    messages = body.get("messages") or [{}]
    last = messages[-1]
    latest = _latest(body)
    lead = model in (LEAD_MODEL, PRICED_MODEL)
    hammering = latest is not None and "hammer" in latest[2] and not lead
    if last.get("role") == "tool":
        if hammering:
            return delayed(0.02, tool_call("team_activity", {}, usage=USAGE))
        return _out(("@Human", "response", f"tool said: {last.get('content')}"))
    if latest is None:
        return _out()
    intent, sender, content = latest
    if intent == "notification":
        return _out()
    if lead:
        if "ping" in content:
            return _out((sender, "response", "pong"))
        if "delegate" in content:
            return _out(("@Worker", "request", "do it"))
        if "via helper" in content:
            return _out(("Helper", "request", "help"))
        if "hire" in content:
            return tool_call("hire_members", {"roles": ["Helper"]}, usage=USAGE)
        if content.startswith("relay "):
            return _out(("@Worker", "request", content.removeprefix("relay ")))
        if intent == "response":
            return _out(("@Human", "response", f"all done: {content}"))
        return _out((sender, "response", "echo"))
    if content.startswith("ask the lead: "):
        return _out(("@Lead", "request", content.removeprefix("ask the lead: ")))
    if hammering:
        return delayed(0.02, tool_call("team_activity", {}, usage=USAGE))
    return _out((sender, "response", "done"))


def card_yaml(
    server: ScriptedLLMServer, budget: str, hammers: int = 0, lead_model: str = LEAD_MODEL
) -> str:
    """The test team's card, with ``budget`` (YAML lines under ``budget:``)."""

    def card(name: str, role: str, model: str, extra: str = "", indent: str = "  ") -> str:
        return (
            f"{indent}agent_class: akgentic.agent.BaseAgent\n"
            f"{indent}description: {role}\n"
            f"{indent}config:\n"
            f'{indent}  name: "{name}"\n'
            f"{indent}  role: {role}\n"
            f'{indent}  prompt: {{template: "You are the {role.lower()}."}}\n'
            f"{indent}  model_cfg: {{provider: openai-chat, model: {model}, "
            f"base_url: '{server.base_url}', api_key: scripted}}\n" + extra
        )

    lead_extra = '        command_senders: ["@Worker"]\n'
    hammer = (
        f"  - headcount: {hammers}\n    card:\n"
        + card("@Hammer", "Hammer", WORKER_MODEL, indent="      ")
        if hammers
        else ""
    )
    budget_lines = "".join(f"  {line}\n" for line in budget.strip().splitlines())
    return (
        "name: budget-team\n"
        "description: A lead, a worker, and helpers to hire\n"
        "entry_point:\n"
        "  card:\n"
        "    agent_class: akgentic.agent.HumanProxy\n"
        "    description: The person\n"
        '    config: {name: "@Human", role: Human}\n'
        "members:\n"
        "  - card:\n"
        + card("@Lead", "Lead", lead_model, lead_extra, indent="      ")
        + "  - card:\n"
        + card("@Worker", "Worker", WORKER_MODEL, indent="      ")
        + hammer
        + "agent_profiles:\n  - "
        + card("@Helper", "Helper", HELPER_MODEL, indent="    ").lstrip()
        + "message_types:\n  - akgentic.agent.AgentMessage\n"
        + "budget:\n"
        + budget_lines
    )


class Recorder:
    """Keeps every message the team's orchestrator publishes (thread-safe)."""

    def __init__(self) -> None:
        self._messages: list[Any] = []
        self._lock = threading.Lock()

    def on_message(self, msg: Any) -> None:
        with self._lock:
            self._messages.append(msg)

    def set_restoring(self, team_id: Any, restoring: bool) -> None:
        """Replayed messages count as well: they are the team's history."""

    def on_stop_request(self, team_id: Any) -> None:
        """Nothing to do."""

    def on_stop(self, team_id: Any) -> None:
        """Nothing to do."""

    def messages(self) -> list[Any]:
        with self._lock:
            return list(self._messages)


class BudgetTeam:
    """A running test team in a SQLite store, with what it recorded and small verbs."""

    def __init__(self, store_url: str, card: str | None, team_id: UUID | None = None) -> None:
        """Create a team from ``card``, or (``card`` None) resume ``team_id`` from the store.

        A team whose process died is first recorded as stopped, then resumed.
        """
        from akgentic.core import ActorSystem
        from akgentic.team import TeamCard, TeamManager
        from akgentic.team.urls import open_event_store

        self.store_url = store_url
        self.recorder = Recorder()
        self.system = ActorSystem()
        self.store = open_event_store(self.store_url)
        self.manager = TeamManager(self.system, self.store, subscribers=[self.recorder])
        if card is not None:
            self.runtime = self.manager.create_team(TeamCard.from_yaml(card))
        else:
            assert team_id is not None
            self.manager.stop_team(team_id)
            self.runtime = self.manager.resume_team(team_id)

    # -- verbs ----------------------------------------------------------------
    def say(self, text: str, to: str = "@Lead") -> None:
        """The human sends ``text`` to ``to``."""
        from akgentic.agent.messages import AgentMessage

        self.runtime.send_to(to, AgentMessage(content=text, type="request"))

    def type_line(self, line: str) -> None:
        """The human types ``line`` as in the CLI (``/command`` goes to the lead)."""
        from akgentic.agent.session import route_line

        assert route_line(self.runtime, line) is None

    def answer(self, question_id: str, text: str) -> None:
        """Answer an open question as the console does."""
        from akgentic.core.messages.orchestrator import SentMessage

        for message in self.recorder.messages():
            if isinstance(message, SentMessage) and str(message.message.id) == question_id:
                asked = message.message.model_copy(update={"recipient": message.recipient})
                self.runtime.process_human_input(text, asked)
                return
        raise AssertionError(f"no question {question_id}")

    def resume(self) -> None:
        """Stop the team and resume it from its log."""
        team_id = self.runtime.id
        self.manager.stop_team(team_id)
        self.runtime = self.manager.resume_team(team_id)

    def close(self) -> None:
        try:
            self.manager.stop_all()
        finally:
            self.system.shutdown(timeout=10)
            self.store.close()

    # -- reading --------------------------------------------------------------
    def budget(self) -> Any:
        """The live TeamBudget of the running team."""
        from akgentic.core.proxy import ProxyWrapper

        return ProxyWrapper(self.runtime.orchestrator_addr, timeout=10).team_service("budget")

    def events(self, cls: type) -> list[Any]:
        from akgentic.core.messages.orchestrator import EventMessage

        return [
            m.event
            for m in self.recorder.messages()
            if isinstance(m, EventMessage) and isinstance(m.event, cls)
        ]

    def said(self, to: str) -> list[tuple[str, str, str]]:
        """``(sender, intent, content)`` of every AgentMessage sent to ``to``."""
        from akgentic.agent.messages import AgentMessage
        from akgentic.core.messages.orchestrator import SentMessage

        return [
            (m.sender.name if m.sender else "?", m.message.type, m.message.content)
            for m in self.recorder.messages()
            if isinstance(m, SentMessage)
            and m.recipient.name == to
            and isinstance(m.message, AgentMessage)
        ]

    def questions(self) -> list[dict[str, Any]]:
        from akgentic.console.views import pending_questions

        return pending_questions(list(enumerate(self.recorder.messages())))

    def stored(self) -> list[Any]:
        """The team's stored log, once what is queued is written."""
        persistence = self.manager.get_persistence(self.runtime.id)
        assert persistence is not None
        persistence.flush(TIMEOUT)
        return [e.event for e in self.store.load_events(self.runtime.id)]

    def wait(self, predicate: Callable[[], object], timeout: float = TIMEOUT) -> None:
        wait_until(predicate, timeout=timeout)


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(fallback=rules) as server:
        yield server


@pytest.fixture
def budget_card(llm: ScriptedLLMServer) -> Callable[..., str]:
    """``budget_card(budget, hammers=0)``: the test team's card text on ``llm``."""

    def make(budget: str, hammers: int = 0) -> str:
        return card_yaml(llm, budget, hammers)

    return make


@pytest.fixture
def make_team(tmp_path: Path, llm: ScriptedLLMServer) -> Iterator[Callable[..., BudgetTeam]]:
    """``make_team(budget, hammers=0)`` creates a team; ``make_team(store_url=, team_id=)``
    resumes one. Every team made is stopped at the end of the test."""
    teams: list[BudgetTeam] = []

    def make(
        budget: str = "",
        hammers: int = 0,
        *,
        store_url: str = "",
        team_id: UUID | None = None,
        lead_model: str = LEAD_MODEL,
    ) -> BudgetTeam:
        if team_id is not None:
            team = BudgetTeam(store_url, None, team_id)
        else:
            url = store_url or f"sqlite:///{tmp_path}/akgentic.db"
            team = BudgetTeam(url, card_yaml(llm, budget, hammers, lead_model))
        teams.append(team)
        return team

    yield make
    for team in teams:
        team.close()
