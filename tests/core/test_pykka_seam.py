"""The pykka seam: the canary for pykka's internals, and the failure policy built on them.

The canary tests fail on any pykka release other than the one the seam was
checked against, and on any change of shape of an internal the seam uses: that
is where a pykka upgrade must start.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import subprocess
import threading
import weakref
from pathlib import Path
from typing import Any

import pykka
import pytest
from pykka._envelope import Envelope

from akgentic.core import ActorSystem, BaseConfig, BaseState
from akgentic.core._pykka_seam import PYKKA_VERSION, SeamActor, actor_of, is_running
from akgentic.core.agent import Akgent
from akgentic.core.mailbox import Inbox
from akgentic.core.messages import ErrorMessage, StartMessage, StopMessage, UserMessage

REPO = Path(__file__).resolve().parents[2]


# -- canary -------------------------------------------------------------------


def test_the_installed_pykka_is_the_release_the_seam_was_checked_against() -> None:
    assert importlib.metadata.version("pykka") == PYKKA_VERSION


def test_envelope_is_a_two_slot_message_and_reply_future() -> None:
    assert Envelope.__slots__ == ["message", "reply_to"]
    params = list(inspect.signature(Envelope.__init__).parameters)
    assert params == ["self", "message", "reply_to"]
    envelope = Envelope("m")
    assert (envelope.message, envelope.reply_to) == ("m", None)


def test_an_actor_ref_holds_a_weak_reference_to_its_actor(system: ActorSystem) -> None:
    ref = pykka.ThreadingActor.start()
    try:
        assert isinstance(ref._actor_weakref, weakref.ref)
        assert isinstance(actor_of(ref), pykka.ThreadingActor)
        assert is_running(ref)
    finally:
        ref.stop()
    assert not is_running(ref)


def _names(function: Any) -> set[str]:
    return set(function.__code__.co_names)


@pytest.mark.parametrize(
    ("method", "parameters", "uses"),
    [
        ("_actor_loop", ["self"], {"_actor_loop_setup", "_actor_loop_running"}),
        ("_actor_loop_setup", ["self"], {"on_start", "_handle_failure"}),
        (
            "_actor_loop_running",
            ["self"],
            {
                "actor_stopped",
                "actor_inbox",
                "_handle_receive",
                "reply_to",
                "set_exception",
                "_handle_failure",
                "on_failure",
                "_stop",
                "stop_all",
            },
        ),
        ("_actor_loop_teardown", ["self"], {"actor_inbox", "reply_to", "ActorDeadError"}),
        (
            "_handle_failure",
            ["self", "exception_type", "exception_value", "traceback"],
            {"unregister", "actor_stopped"},
        ),
        (
            "_handle_receive",
            ["self", "message"],
            {"ProxyCall", "get_attr_directly", "on_receive", "_stop"},
        ),
        ("_stop", ["self"], {"unregister", "actor_stopped", "on_stop", "_handle_failure"}),
    ],
)
def test_each_overridden_actor_internal_keeps_its_shape(
    method: str, parameters: list[str], uses: set[str]
) -> None:
    # The seam replaces or wraps these; their signatures and what they call are
    # what its copies assume.
    function = getattr(pykka.Actor, method)
    assert list(inspect.signature(function).parameters) == parameters
    assert uses <= _names(function), (
        f"pykka.Actor.{method} no longer uses {uses - _names(function)}"
    )


def test_a_proxy_call_is_a_named_tuple_resolved_by_plain_getattr() -> None:
    # The seam's receive loop inlines pykka's ProxyCall branch (get_attr_directly,
    # then the call) and call_teller builds the tuple with tuple.__new__.
    from pykka import _introspection
    from pykka.messages import ProxyCall

    assert ProxyCall._fields == ("attr_path", "args", "kwargs")
    assert tuple.__new__(ProxyCall, (("a",), (), {})) == ProxyCall(("a",), (), {})
    assert _introspection.get_attr_directly.__code__.co_names == ("getattr",)
    assert list(inspect.signature(_introspection.get_attr_directly).parameters) == [
        "root",
        "attr_path",
    ]
    # The stop check comes before the ProxyCall one: a ProxyCall is never a stop.
    assert not issubclass(ProxyCall, pykka.messages._ActorStop)


def test_the_threading_actor_starts_its_loop_on_one_daemon_configurable_thread() -> None:
    # SeamActor replaces _start_actor_loop (to restart a parked actor's thread
    # with the same settings): the hook must still be the one pykka calls.
    function = pykka.ThreadingActor._start_actor_loop
    assert list(inspect.signature(function).parameters) == ["self"]
    assert {"Thread", "_actor_loop", "use_daemon_thread"} <= _names(function)
    assert "_start_actor_loop" in _names(inspect.unwrap(pykka.Actor.start))


def test_the_actor_inbox_is_created_by_an_overridable_static_hook() -> None:
    assert isinstance(inspect.getattr_static(pykka.Actor, "_create_actor_inbox"), staticmethod)
    assert "_create_actor_inbox" in _names(pykka.Actor.__init__)
    assert isinstance(SeamActor._create_actor_inbox(), Inbox)


def test_only_the_seam_module_touches_pykka_internals() -> None:
    found = subprocess.run(
        ["grep", "-rn", r"pykka\._\|_actor_loop\|_handle_failure\|_actor_weakref", "akgentic"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.splitlines()
    assert found, "the grep found nothing at all: the pattern or the tree is wrong"
    outside = [line for line in found if not line.startswith("akgentic/core/_pykka_seam.py:")]
    assert outside == []


# -- failure policy -----------------------------------------------------------


class FailsToStart(Akgent[BaseConfig, BaseState]):
    def on_start(self) -> None:
        raise RuntimeError("no database")

    def receiveMsg_UserMessage(self, message: UserMessage) -> str:
        return "answered"


class FailsOnce(Akgent[BaseConfig, BaseState]):
    def receiveMsg_UserMessage(self, message: UserMessage) -> str:
        if message.content == "boom":
            raise ValueError("bad turn")
        return message.content


def test_an_actor_whose_on_start_raises_stops_and_refuses_asks(system: ActorSystem) -> None:
    address = system.createActor(FailsToStart)
    ref = address.actor_ref  # type: ignore[attr-defined]
    assert ref.actor_stopped.wait(5), "the actor is still running after on_start raised"
    assert not address.is_alive()
    with pytest.raises(pykka.ActorDeadError):
        system.ask(address, UserMessage(content="hello?"), timeout=5)
    assert ref not in pykka.ActorRegistry.get_all()


def test_a_failed_start_is_reported_and_the_member_leaves_the_roster(
    team: Any, wait_until: Any
) -> None:
    address = team.spawn(FailsToStart, "@Broken")
    wait_until(lambda: team.recorder.of_type(StopMessage))
    (error,) = team.recorder.of_type(ErrorMessage)
    assert error.sender.agent_id == address.agent_id and "no database" in error.content
    starts = [m.sender.agent_id for m in team.recorder.of_type(StartMessage)]
    assert address.agent_id in starts
    assert all(m.agent_id != address.agent_id for m in team.orchestrator.get_team())


def test_a_failed_turn_is_reported_and_the_actor_carries_on(system: ActorSystem) -> None:
    address = system.createActor(FailsOnce)
    system.tell(address, UserMessage(content="boom"))
    assert system.ask(address, UserMessage(content="still here"), timeout=5) == "still here"


def test_asks_queued_behind_a_failing_start_fail_instead_of_hanging(system: ActorSystem) -> None:
    started = threading.Event()

    class SlowFailure(Akgent[BaseConfig, BaseState]):
        def on_start(self) -> None:
            started.wait(5)
            raise RuntimeError("late failure")

    address = system.createActor(SlowFailure)
    future = address.actor_ref.ask(UserMessage(content="queued"), block=False)  # type: ignore[attr-defined]
    started.set()
    with pytest.raises(pykka.ActorDeadError):
        future.get(timeout=5)
