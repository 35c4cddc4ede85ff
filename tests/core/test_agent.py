"""Akgent: dispatch, telemetry, failures, children and proxies."""

from __future__ import annotations

import logging
import threading
from typing import Any
from uuid import UUID, uuid4

import pykka
import pytest

from akgentic.core import ActorSystem, BaseConfig, BaseState
from akgentic.core._pykka_seam import actor_of
from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent import Akgent, WarningError
from akgentic.core.messages import (
    ErrorMessage,
    Message,
    NotificationMessage,
    ProcessedMessage,
    ReceivedMessage,
    ResultMessage,
    SentMessage,
    StartMessage,
    StopMessage,
    StopRecursively,
    UserMessage,
    WarningMessage,
)


class Loud(UserMessage):
    pass


class Base(Akgent[BaseConfig, BaseState]):
    def on_start(self) -> None:
        self.log: list[str] = []

    def receiveMsg_UserMessage(self, message: UserMessage) -> Any:
        self.log.append(f"base:{message.content}")
        return "base"

    def get_log(self) -> list[str]:
        return list(self.log)


class Child(Base):
    def receiveMsg_UserMessage(  # type: ignore[override]
        self, message: UserMessage, sender: ActorAddress
    ) -> Any:
        self.log.append(f"child:{sender.name if sender else None}")
        return self.SUPER if message.content == "pass" else "child"


class GrandChild(Child):
    """Inherits without overriding: the child handler must not run twice."""


class LoudHandler(Base):
    def receiveMsg_Loud(self, message: Loud) -> Any:
        self.log.append("loud")
        return self.SUPER


class Echo(Akgent[BaseConfig, BaseState]):
    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress) -> None:
        self.send(sender, ResultMessage(content=msg.content.upper()))


class Failing(Akgent[BaseConfig, BaseState]):
    def receiveMsg_UserMessage(self, message: UserMessage) -> str:
        if message.content == "warn":
            raise WarningError("just so you know")
        if message.content == "fail":
            raise ValueError("broken handler")
        return "ok"


class Parent(Akgent[BaseConfig, BaseState]):
    def spawn(self, name: str, squad_id: UUID | None = None) -> ActorAddress:
        config = BaseConfig(name=name, role="Kid", squad_id=squad_id)
        return self.createActor(Base, config=config)

    def children(self) -> list[ActorAddress]:
        return list(self._children)


def test_handler_is_chosen_by_message_class_name(system: ActorSystem) -> None:
    actor = system.createActor(Base)
    assert system.ask(actor, UserMessage(content="hi")) == "base"


def test_most_derived_handler_runs_and_super_falls_through(system: ActorSystem) -> None:
    actor = system.createActor(Child)
    assert system.ask(actor, UserMessage(content="stop here")) == "child"
    assert system.ask(actor, UserMessage(content="pass")) == "base"
    log = system.proxy_ask(actor, Child).get_log()
    assert log == ["child:@ActorSystem", "child:@ActorSystem", "base:pass"]


def test_inherited_handler_is_not_run_twice(system: ActorSystem) -> None:
    actor = system.createActor(GrandChild)
    assert system.ask(actor, UserMessage(content="pass")) == "base"
    assert system.proxy_ask(actor, GrandChild).get_log() == ["child:@ActorSystem", "base:pass"]


def test_message_subclass_reaches_base_class_handler_after_super(system: ActorSystem) -> None:
    actor = system.createActor(LoudHandler)
    assert system.ask(actor, Loud(content="x")) == "base"
    assert system.proxy_ask(actor, LoudHandler).get_log() == ["loud", "base:x"]


def test_unknown_message_is_ignored_with_a_warning(
    system: ActorSystem, caplog: pytest.LogCaptureFixture
) -> None:
    actor = system.createActor(Base)
    with caplog.at_level(logging.WARNING):
        assert system.ask(actor, ResultMessage(content="?")) is None
    assert "Unknown message ResultMessage" in caplog.text


def test_plain_objects_dispatch_too(system: ActorSystem) -> None:
    actor = system.createActor(Base)
    system.tell(actor, StopRecursively())
    ref = actor.actor_ref  # type: ignore[attr-defined]
    assert ref.actor_stopped.wait(5)


def test_name_and_role_default_to_actor_ref_and_class_name(system: ActorSystem) -> None:
    actor = system.createActor(Base)
    assert actor.role == "Base"
    assert actor.name.startswith("Base (urn:uuid:")


def test_kwargs_set_ids_and_a_fresh_squad(system: ActorSystem) -> None:
    from uuid import uuid4

    agent_id, team_id = uuid4(), uuid4()
    config = BaseConfig(name="@X", role="X")
    actor = system.createActor(Base, agent_id=str(agent_id), team_id=team_id, config=config)
    assert actor.agent_id == agent_id and actor.team_id == team_id
    assert config.squad_id is not None and actor.squad_id == config.squad_id


def test_children_inherit_team_and_squad_unless_set(system: ActorSystem) -> None:
    team_id = uuid4()
    parent = system.createActor(Parent, team_id=team_id, config=BaseConfig(name="@P", role="P"))
    assert parent.team_id == team_id and parent.squad_id is not None
    proxy = system.proxy_ask(parent, Parent)
    kid = proxy.spawn("@K")
    assert kid.team_id == team_id
    assert kid.squad_id == parent.squad_id
    own_squad = uuid4()
    loner = proxy.spawn("@L", squad_id=own_squad)
    assert loner.team_id == team_id
    assert loner.squad_id == own_squad != parent.squad_id


def test_stop_stops_children_before_the_parent(system: ActorSystem, wait_until: Any) -> None:
    parent = system.createActor(Parent, config=BaseConfig(name="@P", role="P"))
    proxy = system.proxy_ask(parent, Parent)
    kids = [proxy.spawn("@K1"), proxy.spawn("@K2")]
    proxy.stop()
    wait_until(lambda: not parent.is_alive())
    assert all(not k.is_alive() for k in kids)


def test_a_failing_tell_is_reported_and_the_actor_survives(team: Any, wait_until: Any) -> None:
    actor = team.spawn(Failing, "@F")
    team.system.tell(actor, UserMessage(content="fail"))
    wait_until(lambda: team.recorder.of_type(ErrorMessage))
    error = team.recorder.of_type(ErrorMessage)[0]
    assert error.content_type == "ValueError" and error.content == "broken handler"
    assert "Traceback" in (error.traceback or "")
    assert error.current_message.content == "fail"
    assert team.system.ask(actor, UserMessage(content="again")) == "ok"
    failed_id = error.current_message.id
    processed = [m.message_id for m in team.recorder.of_type(ProcessedMessage)]
    assert processed.count(failed_id) == 1
    # The report comes before the turn closes: whoever waits for idle (and then stops the
    # team) has seen it, so it never lands in the log after the team's stop.
    closes = [
        i
        for i, m in enumerate(team.recorder.messages)
        if isinstance(m, ProcessedMessage) and m.message_id == failed_id
    ]
    assert team.recorder.messages.index(error) < closes[0]


def test_warning_error_is_reported_as_a_warning_not_an_error(team: Any, wait_until: Any) -> None:
    actor = team.spawn(Failing, "@F")
    team.system.tell(actor, UserMessage(content="warn"))
    wait_until(lambda: team.recorder.of_type(WarningMessage))
    assert not team.recorder.of_type(ErrorMessage)
    warning = team.recorder.of_type(WarningMessage)[0]
    assert warning.content == "just so you know" and warning.content_type == "WarningError"
    assert isinstance(warning, NotificationMessage)


def test_a_failing_ask_raises_to_the_caller_without_an_error_report(
    team: Any, wait_until: Any
) -> None:
    actor = team.spawn(Failing, "@F")
    with pytest.raises(ValueError, match="broken handler"):
        team.system.ask(actor, UserMessage(content="fail"))
    team.system.ask(actor, UserMessage(content="fine"))
    wait_until(lambda: len(team.recorder.of_type(ProcessedMessage)) >= 1)
    assert not team.recorder.of_type(ErrorMessage)


def test_every_turn_is_wrapped_in_received_and_processed(team: Any, wait_until: Any) -> None:
    actor = team.spawn(Base, "@B")
    for i in range(5):
        team.system.tell(actor, UserMessage(content=str(i)))
    wait_until(lambda: len(team.recorder.of_type(ProcessedMessage)) == 5)
    names = [n for n in team.recorder.names() if n in ("ReceivedMessage", "ProcessedMessage")]
    assert names == ["ReceivedMessage", "ProcessedMessage"] * 5
    received = team.recorder.of_type(ReceivedMessage)
    assert all(r.parent_id == r.message_id for r in received)


def test_send_stamps_the_message_and_reports_it(team: Any, wait_until: Any) -> None:
    echo = team.spawn(Echo, "@Echo")
    team.system.tell(echo, UserMessage(content="hello"))
    reply = team.system.listen(timeout=5)
    assert isinstance(reply, ResultMessage) and reply.content == "HELLO"
    assert reply.sender == echo
    wait_until(lambda: team.recorder.of_type(SentMessage))
    sent = team.recorder.of_type(SentMessage)[0]
    assert sent.message.content == "HELLO"
    assert sent.recipient.name == "@ActorSystem"
    assert reply.parent_id is not None and reply.team_id == echo.team_id


def test_start_and_stop_are_reported_with_config_and_parent(team: Any, wait_until: Any) -> None:
    actor = team.spawn(Base, "@B")
    wait_until(lambda: team.recorder.of_type(StartMessage))
    start = team.recorder.of_type(StartMessage)[0]
    assert start.config.name == "@B" and start.parent.name == "@Orchestrator"
    team.system.proxy_ask(actor, Base).stop()
    wait_until(lambda: team.recorder.of_type(StopMessage))
    assert team.recorder.of_type(StopMessage)[0].sender.agent_id == actor.agent_id


def test_proxy_tell_returns_immediately_and_proxy_ask_resolves(system: ActorSystem) -> None:
    actor = system.createActor(Base)
    ask = system.proxy_ask(actor, Base)
    assert system.proxy_tell(actor, Base).get_log() is None
    assert ask.get_log() == []
    assert ask.config.name == actor.name


class Absorber(Akgent[BaseConfig, BaseState]):
    def on_start(self) -> None:
        self.absorbed: list[str] = []
        self.turns: list[str] = []

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        self.turns.append(message.content)
        if message.content == "first":
            self.gate.wait(5)
            queued = self.get_mailbox()
            wanted = [m.id for m in queued if getattr(m, "content", None) == "absorb-me"]
            self.absorbed = [getattr(m, "content", "") for m in self.consume_mailbox(wanted)]

    def set_gate(self, gate: threading.Event) -> None:
        self.gate = gate

    def report(self) -> tuple[list[str], list[str]]:
        return self.turns, self.absorbed


def test_consume_mailbox_absorbs_queued_messages_and_reports_them(
    team: Any, wait_until: Any
) -> None:
    actor = team.spawn(Absorber, "@Abs")
    gate = threading.Event()
    team.system.proxy_ask(actor, Absorber).set_gate(gate)
    team.system.tell(actor, UserMessage(content="first"))
    team.system.tell(actor, UserMessage(content="absorb-me"))
    team.system.tell(actor, UserMessage(content="keep"))
    gate.set()
    wait_until(lambda: len(team.recorder.of_type(ProcessedMessage)) == 2)
    turns, absorbed = team.system.proxy_ask(actor, Absorber).report()
    assert turns == ["first", "keep"] and absorbed == ["absorb-me"]
    from akgentic.core.messages import HandledMessage

    assert len(team.recorder.of_type(HandledMessage)) == 1


def test_consume_mailbox_refuses_other_threads(system: ActorSystem) -> None:
    actor = system.createActor(Absorber)
    instance = actor_of(actor.actor_ref)  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="own thread"):
        instance.consume_mailbox([])


def test_sending_to_a_snapshot_address_fails_clearly(system: ActorSystem) -> None:
    actor = system.createActor(Base)
    snapshot = actor._snapshot()
    with pytest.raises(RuntimeError, match="cannot deliver"):
        snapshot.tell(UserMessage(content="x"))
    ref = actor.actor_ref  # type: ignore[attr-defined]
    ref.stop()
    with pytest.raises(pykka.ActorDeadError):
        actor.tell(Message())


def test_init_llm_context_is_a_no_op_hook(system: ActorSystem) -> None:
    actor = system.createActor(Base)
    proxy: Any = system.proxy_ask(actor, Base)
    assert proxy.init_llm_context([]) is None
    assert proxy.get_log() == []


def test_read_only_fields_are_flagged_in_the_json_schema() -> None:
    from akgentic.core.agent_config import ReadOnlyField

    class Config(BaseConfig):
        version: int = ReadOnlyField(1, description="set by the system")

    schema = Config.model_json_schema()
    assert schema["properties"]["version"]["readOnly"] is True
