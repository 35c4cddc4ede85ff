"""BaseState observation and the automatic checkpoints of Akgent."""

from __future__ import annotations

from typing import Any

from akgentic.core import ActorSystem, BaseConfig, BaseState
from akgentic.core.actor_address import ActorAddress, ActorAddressProxy
from akgentic.core.agent import Akgent
from akgentic.core.messages import (
    ErrorMessage,
    ProcessedMessage,
    StateChangedMessage,
    StopMessage,
    UserMessage,
)


class Notes(BaseState):
    items: list[str] = []
    tags: dict[str, int] = {}
    friend: ActorAddress | None = None


class CountingObserver:
    def __init__(self) -> None:
        self.states: list[BaseState] = []

    def notify_state_change(self, state: BaseState) -> None:
        self.states.append(state)


class Counting(Notes):
    """Counts how often it is serialized."""

    def model_dump_json(self, *args: Any, **kwargs: Any) -> str:
        DUMPS.append(1)
        return super().model_dump_json(*args, **kwargs)


DUMPS: list[int] = []


def test_attaching_an_observer_notifies_once() -> None:
    observer = CountingObserver()
    state = Notes().observer(observer)
    assert len(observer.states) == 1
    assert state.notify_if_changed() is False
    assert len(observer.states) == 1


def test_in_place_mutations_are_detected() -> None:
    observer = CountingObserver()
    state = Notes().observer(observer)
    state.items.append("a")
    assert state.notify_if_changed() is True
    state.tags["k"] = 1
    assert state.notify_if_changed() is True
    assert state.notify_if_changed() is False
    assert len(observer.states) == 3


def test_no_observer_means_no_serialization() -> None:
    DUMPS.clear()
    state = Counting()
    state.items.append("x")
    assert state.notify_if_changed() is False
    state.observer(None)
    assert DUMPS == []


def test_the_baseline_and_observer_are_never_serialized() -> None:
    state = Notes().observer(CountingObserver())
    dumped = state.model_dump()
    assert "_observer" not in dumped and "_last_serialized" not in dumped
    assert state.serializable_copy().get_observer() is None


class Keeper(Akgent[BaseConfig, Notes]):
    def on_start(self) -> None:
        self.state = Notes().observer(self)

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        if message.content == "noop":
            return
        self.state.items.append(message.content)
        if message.content == "boom":
            raise ValueError("after mutating")

    def touch_outside_a_turn(self, item: str) -> None:
        self.state.items.append(item)

    def remember(self, friend: ActorAddress) -> None:
        self.state.friend = friend
        self.state.notify_if_changed()


def _changes(team: Any) -> list[StateChangedMessage]:
    return [m for m in team.recorder.of_type(StateChangedMessage) if m.sender.name == "@K"]


def test_a_mutating_turn_checkpoints_with_the_causing_message_id(
    team: Any, wait_until: Any
) -> None:
    keeper = team.spawn(Keeper, "@K")
    wait_until(lambda: len(_changes(team)) == 1)  # the on_start attach
    message = UserMessage(content="a")
    team.system.tell(keeper, message)
    wait_until(lambda: len(_changes(team)) == 2)
    change = _changes(team)[1]
    assert change.parent_id == message.id
    assert change.state.items == ["a"]  # type: ignore[attr-defined]


def test_a_clean_turn_publishes_nothing(team: Any, wait_until: Any) -> None:
    keeper = team.spawn(Keeper, "@K")
    team.system.ask(keeper, UserMessage(content="noop"))
    wait_until(lambda: team.recorder.of_type(ProcessedMessage))
    assert len(_changes(team)) == 1


def test_a_raising_handler_checkpoints_before_the_error(team: Any, wait_until: Any) -> None:
    keeper = team.spawn(Keeper, "@K")
    team.system.tell(keeper, UserMessage(content="boom"))
    wait_until(lambda: team.recorder.of_type(ErrorMessage))
    names = team.recorder.names()
    assert names.index("StateChangedMessage", names.index("ReceivedMessage")) < names.index(
        "ErrorMessage"
    )
    assert _changes(team)[-1].state.items == ["boom"]  # type: ignore[attr-defined]


def test_state_touched_outside_a_turn_is_published_on_stop_once(team: Any, wait_until: Any) -> None:
    keeper = team.spawn(Keeper, "@K")
    proxy = team.system.proxy_ask(keeper, Keeper)
    proxy.touch_outside_a_turn("late")
    proxy.stop()
    wait_until(lambda: not keeper.is_alive())
    wait_until(lambda: team.recorder.of_type(StopMessage))
    changes = _changes(team)
    assert len(changes) == 2 and changes[-1].state.items == ["late"]  # type: ignore[attr-defined]


def test_init_state_keeps_the_observer_and_always_notifies(team: Any, wait_until: Any) -> None:
    keeper = team.spawn(Keeper, "@K")
    proxy = team.system.proxy_ask(keeper, Keeper)
    proxy.init_state(Notes(items=["restored"]))
    wait_until(lambda: len(_changes(team)) == 2)
    team.system.ask(keeper, UserMessage(content="noop"))
    assert len(_changes(team)) == 2
    assert proxy.state.items == ["restored"]


def test_update_state_failure_is_reported_as_an_error_message(team: Any, wait_until: Any) -> None:
    keeper = team.spawn(Keeper, "@K")
    team.system.proxy_ask(keeper, Keeper).update_state({"items": 42})
    wait_until(lambda: team.recorder.of_type(ErrorMessage))
    error = team.recorder.of_type(ErrorMessage)[0]
    assert error.content_type == "ValidationError" and error.traceback


def test_update_state_merges_and_publishes(team: Any, wait_until: Any) -> None:
    keeper = team.spawn(Keeper, "@K")
    team.system.proxy_ask(keeper, Keeper).update_state({"tags": {"x": 1}})
    wait_until(lambda: len(_changes(team)) == 2)
    assert _changes(team)[-1].state.tags == {"x": 1}  # type: ignore[attr-defined]


def test_a_state_holding_an_actor_address_saves_and_restores(team: Any, wait_until: Any) -> None:
    keeper = team.spawn(Keeper, "@K")
    other = team.spawn(Keeper, "@Other")
    team.system.proxy_ask(keeper, Keeper).remember(other)
    wait_until(lambda: len(_changes(team)) == 2)
    assert not team.recorder.of_type(ErrorMessage)
    published = _changes(team)[-1].state
    dumped = published.model_dump_json()
    restored = Notes.model_validate_json(dumped)
    assert isinstance(restored.friend, ActorAddressProxy)
    assert restored.friend.agent_id == other.agent_id and restored.friend.name == "@Other"
    # Through update_state the address resolves to the live member again.
    proxy = team.system.proxy_ask(keeper, Keeper)
    proxy.update_state({"friend": other.serialize()})
    assert proxy.state.friend == other


def test_an_unobserved_agent_never_serializes_its_state(system: ActorSystem) -> None:
    class Quiet(Akgent[BaseConfig, Counting]):
        def on_start(self) -> None:
            self.state = Counting()

        def receiveMsg_UserMessage(self, message: UserMessage) -> None:
            self.state.items.append(message.content)

    DUMPS.clear()
    actor = system.createActor(Quiet)
    for i in range(3):
        system.ask(actor, UserMessage(content=str(i)))
    system.proxy_ask(actor, Quiet).stop()
    assert DUMPS == []
