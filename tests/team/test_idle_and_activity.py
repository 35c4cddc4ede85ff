"""IdleStopSubscriber and ActivityMonitor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import uuid4

import pytest

from akgentic.core.messages.orchestrator import ProcessedMessage, ReceivedMessage
from akgentic.team import ActivityMonitor, IdleStopSubscriber, TeamCard, TeamManager, TeamStatus
from akgentic.team.subscriber import IdleStopSubscriber as SeedName

CardFactory = Callable[..., TeamCard]


def running(idle: IdleStopSubscriber) -> bool:
    return idle.timer.is_running


class Stopper:
    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[Any] = []
        self.error = error

    def stop_team(self, team_id: Any) -> None:
        self.calls.append(team_id)
        if self.error is not None:
            raise self.error


def test_an_idle_team_stops_itself_after_the_delay(
    actor_system: Any, any_store: Any, team_card: CardFactory
) -> None:
    manager = TeamManager(actor_system, any_store, idle_delay=0.2)
    runtime = manager.create_team(team_card())
    idle = manager._idle[runtime.id]
    assert idle.stopped.wait(10)
    process = manager.get_team(runtime.id)
    assert process is not None and process.status == TeamStatus.STOPPED
    assert not runtime.orchestrator_addr.is_alive()


def test_the_countdown_pauses_while_a_task_is_in_flight_and_never_counts_a_replay() -> None:
    stopper = Stopper()
    idle = IdleStopSubscriber(stopper, uuid4(), delay=30)
    try:
        idle.on_message(ReceivedMessage(message_id=uuid4()))
        assert not running(idle)
        idle.set_restoring(idle.team_id, True)
        idle.on_message(ProcessedMessage(message_id=uuid4()))
        assert idle.timer.active_tasks == 1
        idle.set_restoring(idle.team_id, False)
        idle.on_message(ProcessedMessage(message_id=uuid4()))
        assert running(idle)
        idle.on_stop_request(idle.team_id)
        idle.on_message(ReceivedMessage(message_id=uuid4()))
        idle.on_message(ProcessedMessage(message_id=uuid4()))
        assert idle.timer.closed and not running(idle)
    finally:
        idle.close()


def test_a_timeout_on_an_already_stopped_team_is_swallowed_and_dispatched_once() -> None:
    stopper = Stopper(ValueError("already stopped"))
    idle = IdleStopSubscriber(stopper, uuid4(), delay=0.05)
    assert idle.stopped.wait(10)
    idle._on_timeout()
    assert stopper.calls == [idle.team_id]


def test_a_non_numeric_delay_in_the_environment_fails_at_wiring(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ORCHESTRATOR_TIMEOUT_DELAY", "soon")
    with pytest.raises(ValueError, match="not a number"):
        IdleStopSubscriber(Stopper(), uuid4())
    monkeypatch.setenv("ORCHESTRATOR_TIMEOUT_DELAY", "12.5")
    idle = SeedName(Stopper(), uuid4())
    assert idle.delay == 12.5
    idle.close()


def test_wait_idle_returns_false_while_a_message_is_unprocessed() -> None:
    monitor = ActivityMonitor()
    assert monitor.wait_idle(0)
    from akgentic.core import ActorAddressProxy
    from akgentic.core.messages.message import UserMessage
    from akgentic.core.messages.orchestrator import SentMessage

    a = ActorAddressProxy({"agent_id": str(uuid4()), "name": "@A", "role": "A"})
    b = ActorAddressProxy({"agent_id": str(uuid4()), "name": "@B", "role": "B"})
    inner = UserMessage(content="x")
    monitor.on_message(SentMessage(message=inner, recipient=b, sender=a))
    assert not monitor.wait_idle(0.01)
    monitor.on_message(ProcessedMessage(message_id=inner.id, sender=b))
    assert monitor.wait_idle(0) and monitor.in_flight == 0
