"""Elastic actors: an idle SeamActor gives its thread up and the next message brings one back.

The actor stays a pykka ThreadingActor (one thread at a time runs it, its
mailbox is FIFO); only the thread is released while nothing comes in.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pykka
import pytest

from akgentic.core._pykka_seam import (
    LINGER_ENV_VAR,
    SeamActor,
    _linger_from_env,
    actor_of,
    thread_of,
)
from akgentic.core.mailbox import Inbox
from akgentic.testing import wait_until


class Recorder(SeamActor):
    """Notes each message, the thread that handled it and its starts."""

    linger: ClassVar[float | None] = 0.05

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []
        self.threads: set[str] = set()
        self.starts = 0
        self.running = 0
        self.overlap = False

    def on_start(self) -> None:
        self.starts += 1

    def on_receive(self, message: Any) -> Any:
        self.running += 1
        if self.running > 1:
            self.overlap = True
        self.threads.add(threading.current_thread().name)
        self.seen.append(message)
        self.running -= 1
        return message


class Sticky(Recorder):
    linger: ClassVar[float | None] = None


@pytest.fixture
def recorder() -> Iterator[pykka.ActorRef[Recorder]]:
    ref = Recorder.start()
    yield ref
    ref.stop(timeout=10)


def _inbox(ref: pykka.ActorRef[Any]) -> Inbox:
    inbox = ref.actor_inbox
    assert isinstance(inbox, Inbox)
    return inbox


def test_an_idle_actor_parks_and_a_message_brings_it_back(
    recorder: pykka.ActorRef[Recorder],
) -> None:
    inbox = _inbox(recorder)
    assert recorder.ask("one", timeout=10) == "one"
    wait_until(lambda: inbox.parked, timeout=10)
    names = [t.name for t in threading.enumerate()]
    assert not any(name.startswith("Recorder-") for name in names), names
    assert recorder.is_alive()
    assert recorder.ask("two", timeout=10) == "two"
    actor = actor_of(recorder)
    assert actor.seen == ["one", "two"]
    assert actor.starts == 1  # a restart is not a second on_start
    assert len(actor.threads) == 2  # thread names: an ident may be reused


def test_a_parked_actor_owns_no_thread_ident(recorder: pykka.ActorRef[Recorder]) -> None:
    # Thread idents are reused: a parked actor that kept its last one would pass
    # the next thread given that ident for its own (a direct call, not a message).
    inbox = _inbox(recorder)
    assert recorder.ask("one", timeout=10) == "one"
    wait_until(lambda: inbox.parked, timeout=10)
    assert thread_of(recorder) is None
    assert recorder.ask("two", timeout=10) == "two"  # and it still comes back


def test_an_actor_without_linger_keeps_its_thread() -> None:
    ref = Sticky.start()
    try:
        assert ref.ask("one", timeout=10) == "one"
        assert not _inbox(ref).elastic
        assert not _inbox(ref).park()
        assert any(t.name.startswith("Sticky-") for t in threading.enumerate())
    finally:
        ref.stop(timeout=10)


def test_mail_from_many_threads_across_parks_is_handled_once_in_order_per_sender(
    recorder: pykka.ActorRef[Recorder],
) -> None:
    # Rounds of eight concurrent senders, the actor parked before each round: the
    # first mail of a round races eight producers to restart it. No message may
    # be lost, doubled, reordered per sender, or handled concurrently.
    senders, per_round, rounds = 8, 25, 4
    inbox = _inbox(recorder)
    actor = actor_of(recorder)

    def send(sender: int, round_: int) -> None:
        for i in range(per_round):
            recorder.tell((sender, round_ * per_round + i))

    for round_ in range(rounds):
        wait_until(lambda: inbox.parked, timeout=10)
        threads = [threading.Thread(target=send, args=(n, round_)) for n in range(senders)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        expected = senders * per_round * (round_ + 1)
        wait_until(lambda: len(actor.seen) == expected, timeout=20)  # noqa: B023 - waited on in this round
    seen = actor.seen
    assert len(seen) == len(set(seen)) == senders * per_round * rounds
    for sender in range(senders):
        assert [i for s, i in seen if s == sender] == list(range(per_round * rounds))
    assert not actor.overlap
    assert len(actor.threads) >= rounds  # each round ran on a thread of its own


def test_a_parked_actor_stops_on_request_and_answers_waiting_asks() -> None:
    ref = Recorder.start()
    inbox = _inbox(ref)
    wait_until(lambda: inbox.parked, timeout=10)
    ref.stop(timeout=10)
    assert not ref.is_alive()
    with pytest.raises(pykka.ActorDeadError):
        ref.ask("late", timeout=1)


def test_the_linger_setting_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LINGER_ENV_VAR, "off")
    assert _linger_from_env() is None
    monkeypatch.setenv(LINGER_ENV_VAR, "0.5")
    assert _linger_from_env() == 0.5
    for bad in ("soon", "-1", "0"):
        monkeypatch.setenv(LINGER_ENV_VAR, bad)
        with pytest.raises(ValueError, match=LINGER_ENV_VAR):
            _linger_from_env()
