"""NotificationTool and its actor in a real team: scheduling, ownership, caps, delivery."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Literal

import pytest
from akgentic_notification import NotificationTool, models
from akgentic_notification.actor import NotificationActor, tick_loop
from pydantic import ValidationError

from akgentic.agent import AgentConfig, BaseAgent, StructuredOutput
from akgentic.agent.messages import AgentMessage
from akgentic.core import ActorSystem, BaseConfig, Orchestrator
from akgentic.core.actor_address import ActorAddress
from akgentic.llm.scripted_server import ScriptedLLMServer, structured
from akgentic.testing.teams import ScriptedTeam
from akgentic.testing.waiting import wait_until
from akgentic.tool import RetriableError, ToolFactory
from akgentic.tool.testing import RecordingObserver


class MemberObserver(RecordingObserver):
    """Stands in for a team member: its address and orchestrator are the real ones."""

    def __init__(
        self,
        team: ScriptedTeam | None,
        address: ActorAddress,
        *,
        system: ActorSystem | None = None,
        orchestrator: ActorAddress | None = None,
    ) -> None:
        super().__init__(name=address.name)
        self._system = system if system is not None else team.system if team else None
        self._orchestrator = orchestrator or (team.orchestrator if team else None)
        self._member = address

    @property
    def myAddress(self) -> ActorAddress:
        return self._member

    @property
    def orchestrator(self) -> ActorAddress | None:
        return self._orchestrator

    def proxy_ask(self, actor: ActorAddress, actor_type: Any = None, timeout: Any = None) -> Any:
        assert self._system is not None, "a member observer needs an actor system"
        return self._system.proxy_ask(actor, actor_type, timeout=timeout)


@pytest.fixture
def team(llm_server: ScriptedLLMServer) -> Iterator[ScriptedTeam]:
    llm_server.fallback = structured(StructuredOutput())
    with ScriptedTeam(llm_server) as built:
        yield built


def tools_of(card: NotificationTool) -> dict[str, Any]:
    return {tool.__name__: tool for tool in card.get_tools()}


def notification_actors(team: ScriptedTeam | Any) -> list[ActorAddress]:
    """The team's notification actors (``team`` has an orchestrator ``proxy``)."""
    return [m for m in team.proxy.get_team() if m.name == models.NOTIFICATION_ACTOR_NAME]


def test_a_reminder_arrives_as_a_notification_from_the_tool_actor(
    team: ScriptedTeam, clock: Any
) -> None:
    member = team.spawn("@A", [])
    observer = MemberObserver(team, member)
    tools = tools_of(NotificationTool().observer(observer))
    assert tools["register_notification"]("ping", 1) == (
        "Notification 1 scheduled; it will arrive in 1 seconds."
    )
    clock.advance(1)
    wait_until(lambda: team.sent_to("@A"), timeout=30)
    (delivered,) = team.sent_to("@A")
    assert isinstance(delivered, AgentMessage)
    assert (delivered.content, delivered.type) == ("ping", "notification")
    assert delivered.sender is not None and delivered.sender.name == "#NotificationTool"
    assert tools["pending_notification"]() == "No pending notifications."


@pytest.mark.parametrize("delay", [0, -5, 301, 10**18])
def test_a_delay_outside_the_range_is_refused_and_nothing_is_stored(
    team: ScriptedTeam, delay: int
) -> None:
    observer = MemberObserver(team, team.spawn("@A", []))
    tools = tools_of(NotificationTool().observer(observer))
    with pytest.raises(RetriableError) as raised:
        tools["register_notification"]("ping", delay)
    assert str(raised.value) == (
        f"delay_seconds must be a whole number from 1 to 300; got {delay}."
    )
    assert tools["pending_notification"](all=True) == "No pending notifications."


def test_the_delay_cap_itself_is_range_checked() -> None:
    with pytest.raises(ValidationError):
        NotificationTool(max_delay_seconds=0)
    with pytest.raises(ValidationError):
        NotificationTool(max_delay_seconds=2_592_001)
    (register, *_rest) = NotificationTool(max_delay_seconds=600).get_tools()
    assert "from 1 to 600" in (register.__doc__ or "")


def test_two_carrying_agents_share_one_tool_actor_and_one_id_sequence(
    team: ScriptedTeam,
) -> None:
    observer_a = MemberObserver(team, team.spawn("@A", []))
    observer_b = MemberObserver(team, team.spawn("@B", []))
    tools_a = tools_of(NotificationTool().observer(observer_a))
    tools_b = tools_of(NotificationTool().observer(observer_b))
    assert tools_a["register_notification"]("a", 100).startswith("Notification 1 ")
    assert tools_b["register_notification"]("b", 100).startswith("Notification 2 ")
    (actor,) = notification_actors(team)
    assert actor.role == "ToolActor"


def test_listing_may_widen_but_cancelling_never_reaches_another_owner(
    team: ScriptedTeam,
) -> None:
    observer_a = MemberObserver(team, team.spawn("@A", []))
    observer_b = MemberObserver(team, team.spawn("@B", []))
    tools_a = tools_of(NotificationTool().observer(observer_a))
    tools_b = tools_of(NotificationTool().observer(observer_b))
    tools_a["register_notification"]("look at\nthe nightly build", 74)
    assert tools_b["pending_notification"]() == "No pending notifications."
    assert tools_b["pending_notification"](all=True) == (
        "Pending notifications:\n- @A id 1: look at the nightly build (in 74 seconds)"
    )
    assert tools_a["pending_notification"]() == (
        "Pending notifications:\n- id 1: look at the nightly build (in 74 seconds)"
    )
    with pytest.raises(RetriableError, match="You have no pending notification 1;"):
        tools_b["cancel_notification"](1)
    assert "id 1" in tools_a["pending_notification"]()
    with pytest.raises(RetriableError, match="no pending notification 999"):
        tools_a["cancel_notification"](999)
    assert tools_a["cancel_notification"](1) == "Notification 1 cancelled."
    assert tools_a["pending_notification"]() == "No pending notifications."


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "content must not be empty."),
        ("   ", "content must not be empty."),
        ("/fire_member @B", "content must not start with '/'"),
        ("  /stop", "content must not start with '/'"),
        ("x" * 4001, "content is 4001 characters long; the limit is 4000."),
    ],
)
def test_hostile_or_oversized_content_is_refused(
    team: ScriptedTeam, content: str, message: str
) -> None:
    observer = MemberObserver(team, team.spawn("@A", []))
    tools = tools_of(NotificationTool().observer(observer))
    with pytest.raises(RetriableError, match=message.replace("(", r"\(")):
        tools["register_notification"](content, 10)
    assert tools["pending_notification"]() == "No pending notifications."


def test_the_fifty_first_entry_of_one_owner_is_refused(team: ScriptedTeam) -> None:
    observer = MemberObserver(team, team.spawn("@A", []))
    tools = tools_of(NotificationTool().observer(observer))
    for index in range(50):
        tools["register_notification"](f"n{index}", 100)
    with pytest.raises(RetriableError, match="You already have 50 pending notifications"):
        tools["register_notification"]("one more", 100)
    assert tools["pending_notification"]().count("\n- id ") == 50


@pytest.mark.parametrize(
    "path",
    [
        "os.system",
        "builtins.object",
        "akgentic.core.messages.message.Message",
        "no.such.module.Cls",
        "akgentic_notification.models.PendingNotification",
    ],
)
def test_an_unusable_message_class_fails_at_wiring_and_creates_no_actor(
    team: ScriptedTeam, path: str
) -> None:
    observer = MemberObserver(team, team.spawn("@A", []))
    with pytest.raises(ValueError, match="message_class"):
        NotificationTool(message_class=path).observer(observer)
    assert notification_actors(team) == []


def test_a_message_class_that_is_not_a_dotted_path_is_refused_at_construction() -> None:
    with pytest.raises(ValidationError):
        NotificationTool(message_class="NoDots")


class RequestOnly(AgentMessage):
    """A message class that can never be a notification."""

    type: Literal["request"] = "request"


class Reminder(AgentMessage):
    """A custom delivery class."""


def test_a_class_refusing_the_notification_type_is_refused(team: ScriptedTeam) -> None:
    observer = MemberObserver(team, team.spawn("@A", []))
    with pytest.raises(ValueError, match="refuses a notification"):
        NotificationTool(message_class=f"{__name__}.RequestOnly").observer(observer)


def test_a_valid_custom_class_is_what_arrives(team: ScriptedTeam, clock: Any) -> None:
    observer = MemberObserver(team, team.spawn("@A", []))
    card = NotificationTool(message_class=f"{__name__}.Reminder").observer(observer)
    tools_of(card)["register_notification"]("custom", 1)
    clock.advance(2)
    wait_until(lambda: team.sent_to("@A"), timeout=30)
    assert type(team.sent_to("@A")[0]) is Reminder


def test_an_owner_off_the_roster_is_waited_for_then_dropped_after_the_grace(
    team: ScriptedTeam, clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    member = team.spawn("@A", [])
    observer = MemberObserver(team, member)
    tools = tools_of(NotificationTool().observer(observer))
    tools["register_notification"]("lost", 1)
    team.system.proxy_ask(member).stop()
    wait_until(lambda: all(m.name != "@A" for m in team.proxy.get_team()), timeout=30)
    clock.advance(10)
    (actor,) = notification_actors(team)
    tool_actor = team.system.proxy_ask(actor, NotificationActor, timeout=10)
    tool_actor.deliver_due()
    assert tools["pending_notification"]() == ("Pending notifications:\n- id 1: lost (due now)")
    clock.advance(models.DELIVERY_GRACE_S)
    tool_actor.deliver_due()
    assert tools["pending_notification"]() == "No pending notifications."
    assert any("dropped: its owner left the team" in r.message for r in caplog.records)


def test_the_tick_thread_ends_with_the_team_and_holds_only_event_and_address(
    llm_server: ScriptedLLMServer, clock: Any
) -> None:
    with ScriptedTeam(llm_server) as team:
        observer = MemberObserver(team, team.spawn("@A", []))
        NotificationTool().observer(observer)
        wait_until(
            lambda: any(t.name == "#NotificationTool-tick" for t in threading.enumerate()),
            timeout=30,
        )
        (ticker,) = [t for t in threading.enumerate() if t.name == "#NotificationTool-tick"]
        assert getattr(ticker, "_target", None) is tick_loop
        arguments: tuple[Any, ...] = getattr(ticker, "_args", ())
        stop, address = arguments
        assert isinstance(stop, threading.Event) and isinstance(address, ActorAddress)
    ticker.join(10)
    assert not ticker.is_alive()


def test_commands_schedule_list_and_cancel(team: ScriptedTeam) -> None:
    observer = MemberObserver(team, team.spawn("@A", []))
    registry = ToolFactory([NotificationTool()], observer=observer).get_command_registry()
    assert registry.dispatch('/register_notification "check CI" 120') == (
        "Notification 1 scheduled; it will arrive in 120 seconds."
    )
    listing = registry.dispatch("/pending_notification all=true")
    assert isinstance(listing, str) and listing.startswith("Pending notifications:\n- @A id 1:")
    assert registry.dispatch("/cancel_notification 1") == "Notification 1 cancelled."
    refused = registry.dispatch("/register_notification x 1.5")
    assert isinstance(refused, str) and refused.startswith(
        "Command 'register_notification' failed: "
    )


def test_without_a_team_every_call_says_notifications_are_unavailable() -> None:
    observer = RecordingObserver()
    tools = tools_of(NotificationTool().observer(observer))
    with pytest.raises(RetriableError, match="not part of a running team"):
        tools["register_notification"]("x", 5)


def test_nothing_is_delivered_while_the_team_is_restoring(
    llm_server: ScriptedLLMServer, clock: Any
) -> None:
    llm_server.fallback = structured(StructuredOutput())
    system = ActorSystem()
    try:
        address = system.createActor(
            Orchestrator, restoring=True, config=BaseConfig(name="@O", role="Orchestrator")
        )
        orchestrator = system.proxy_ask(address, Orchestrator)
        assert orchestrator.is_restoring() is True
        member = orchestrator.createActor(
            BaseAgent,
            config=AgentConfig(name="@A", role="Worker", model_cfg=llm_server.model_config()),
        )
        observer = MemberObserver(None, member, system=system, orchestrator=address)
        tools = tools_of(NotificationTool().observer(observer))
        tools["register_notification"]("after restore", 1)
        clock.advance(5)
        (actor,) = [m for m in orchestrator.get_team() if m.name == "#NotificationTool"]
        tool_actor = system.proxy_ask(actor, NotificationActor, timeout=10)
        tool_actor.deliver_due()
        assert "id 1: after restore (due now)" in tools["pending_notification"]()
        orchestrator.end_restoration()
        assert orchestrator.is_restoring() is False
        wait_until(
            lambda: tools["pending_notification"]() == "No pending notifications.", timeout=30
        )
    finally:
        system.shutdown(timeout=10)
