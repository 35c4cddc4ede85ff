"""Two-phase, non-blocking team stop and ActorSystem shutdown."""

from __future__ import annotations

import threading
from typing import Any

import pykka

from akgentic.core import BaseConfig, BaseState, Orchestrator
from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent import Akgent
from akgentic.core.messages import EventMessage, StopMessage, TeamStoppingEvent, UserMessage


class Journal:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stops: list[str] = []

    def add(self, name: str) -> None:
        with self.lock:
            self.stops.append(name)


class Member(Akgent[BaseConfig, BaseState]):
    def __init__(self, *args: Any, journal: Journal | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.journal = journal

    def on_stop(self) -> None:
        if self.journal is not None:
            self.journal.add(self.config.name)
        super().on_stop()


class Tool(Member):
    def slow(self, entered: threading.Event, gate: threading.Event) -> str:
        entered.set()
        gate.wait(5)
        return "tool result"


class Caller(Member):
    def on_start(self) -> None:
        self.results: list[str] = []

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        tool = self.get_team_member("#Tool")
        assert tool is not None
        self.results.append(self.proxy_ask(tool, Tool).slow(self.entered, self.gate))
        self.done.set()

    def prepare(
        self, entered: threading.Event, gate: threading.Event, done: threading.Event
    ) -> None:
        self.entered, self.gate, self.done = entered, gate, done

    def get_results(self) -> list[str]:
        return list(self.results)


class Wedged(Member):
    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        self.gate.wait(10)

    def prepare(self, gate: threading.Event) -> None:
        self.gate = gate


def _tool(team: Any, journal: Journal, name: str = "#Tool") -> ActorAddress:
    address: ActorAddress = team.orchestrator.getChildrenOrCreate(
        Tool, BaseConfig(name=name, role="ToolActor"), journal=journal
    )
    return address


def test_stop_returns_at_once_and_a_memberless_team_finalizes(team: Any) -> None:
    event = team.orchestrator.stop()
    assert event.wait(5)
    assert not team.address.is_alive()
    stopping = [
        m for m in team.recorder.of_type(EventMessage) if isinstance(m.event, TeamStoppingEvent)
    ]
    assert len(stopping) == 1


def test_stop_is_idempotent_and_announces_teardown_once(team: Any, wait_until: Any) -> None:
    team.spawn(Member, "@A")
    first = team.orchestrator.stop()
    second = (
        team.system.proxy_ask(team.address, Orchestrator).stop()
        if team.address.is_alive()
        else first
    )
    assert first.wait(5)
    assert second is first or second.wait(5)
    stopping = [
        m for m in team.recorder.of_type(EventMessage) if isinstance(m.event, TeamStoppingEvent)
    ]
    assert len(stopping) == 1
    assert stopping[0].team_id == team.address.team_id
    assert stopping[0].sender.name == "@Orchestrator"
    assert [h for h, _ in team.recorder.hooks].count("on_stop_request") == 1


def test_announcement_precedes_hooks_and_member_stops_are_withheld(
    team: Any, wait_until: Any
) -> None:
    journal = Journal()
    team.spawn(Member, "@A", journal=journal)
    team.spawn(Member, "@B", journal=journal)
    wait_until(lambda: len(team.orchestrator.get_team()) == 2)
    assert team.orchestrator.stop().wait(5)
    timeline = team.recorder.timeline
    start = timeline.index("EventMessage")
    assert timeline[start:] == ["EventMessage", "on_stop_request", "on_stop"]
    assert not team.recorder.of_type(StopMessage)
    assert sorted(journal.stops) == ["@A", "@B"]


def test_tool_actors_stop_only_after_every_ordinary_member(team: Any, wait_until: Any) -> None:
    journal = Journal()
    _tool(team, journal, "#Store")
    team.spawn(Member, "@A", journal=journal)
    _tool(team, journal, "#Planner")
    team.spawn(Member, "@B", journal=journal)
    wait_until(lambda: len(team.orchestrator.get_team()) == 4)
    assert team.orchestrator.stop().wait(5)
    assert sorted(journal.stops[:2]) == ["@A", "@B"]
    assert sorted(journal.stops[2:]) == ["#Planner", "#Store"]


def test_a_tools_only_team_stops(team: Any) -> None:
    journal = Journal()
    _tool(team, journal)
    assert team.orchestrator.stop().wait(5)
    assert journal.stops == ["#Tool"]


def test_stopping_does_not_fail_a_call_into_a_tool_in_flight(team: Any, wait_until: Any) -> None:
    journal = Journal()
    _tool(team, journal)
    caller = team.spawn(Caller, "@Caller", journal=journal)
    wait_until(lambda: len(team.orchestrator.get_team()) == 2)
    entered, gate, done = threading.Event(), threading.Event(), threading.Event()
    team.system.proxy_ask(caller, Caller).prepare(entered, gate, done)
    team.system.tell(caller, UserMessage(content="use the tool"))
    assert entered.wait(5)
    event = team.orchestrator.stop()
    assert not event.is_set()
    gate.set()
    assert done.wait(5)
    assert event.wait(5)
    assert journal.stops == ["@Caller", "#Tool"]
    assert not [m for m in team.recorder.messages if type(m).__name__ == "ErrorMessage"]


def test_the_backstop_finalizes_a_team_with_a_wedged_member(team: Any, wait_until: Any) -> None:
    journal = Journal()
    _tool(team, journal)
    wedged = team.spawn(Wedged, "@Stuck", journal=journal)
    gate = threading.Event()
    try:
        team.system.proxy_ask(wedged, Wedged).prepare(gate)
        team.system.tell(wedged, UserMessage(content="block"))
        event = team.orchestrator.stop(grace_timeout=0.3)
        assert event.wait(5)
        # the backstop also released the pending tool actor
        wait_until(lambda: "#Tool" in journal.stops)
        assert "@Stuck" not in journal.stops
    finally:
        gate.set()


def test_shutdown_leaves_no_live_pykka_actor(system: Any, recorder_cls: Any) -> None:
    from akgentic.core import ActorSystem

    other = ActorSystem()
    for i in range(2):
        orch = other.createActor(
            Orchestrator, config=BaseConfig(name=f"@O{i}", role="Orchestrator")
        )
        proxy = other.proxy_ask(orch, Orchestrator)
        proxy.createActor(Member, config=BaseConfig(name="@A", role="A"))
        proxy.getChildrenOrCreate(Tool, BaseConfig(name="#T", role="ToolActor"))
    other.createActor(Member, config=BaseConfig(name="@Root", role="Root"))
    assert len(pykka.ActorRegistry.get_all()) >= 8
    system.shutdown(timeout=5)
    other.shutdown(timeout=5)
    assert pykka.ActorRegistry.get_all() == []


SCRIPT = """
from akgentic.core import ActorSystem, BaseConfig, BaseState, Orchestrator
from akgentic.core.agent import Akgent
from akgentic.core.messages.message import UserMessage


class Echo(Akgent[BaseConfig, BaseState]):
    def receiveMsg_UserMessage(self, message, sender):
        print(message.content, flush=True)


system = ActorSystem()
team = system.createActor(Orchestrator, config=BaseConfig(name="@O", role="Orchestrator"))
orchestrator = system.proxy_ask(team, Orchestrator)
echo = orchestrator.createActor(Echo, config=BaseConfig(name="@Echo", role="Echo"))
orchestrator.getChildrenOrCreate(Echo, BaseConfig(name="#Tool", role="ToolActor"))
system.ask(echo, UserMessage(content="ping"))
system.shutdown()
"""


def test_a_script_exits_by_itself_after_shutdown() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ping"
