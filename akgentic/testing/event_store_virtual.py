"""The virtual-teams half of the event store contract: passivation and activation on demand.

:class:`VirtualTeamsContract` is mixed into
:class:`~akgentic.testing.EventStoreContract`, so every store runs it: a real
team (an actor system and a :class:`~akgentic.team.TeamManager` over the store
under test) is passivated when idle and brought back by a message; many
threads sending to a passivated team share one activation and one claim; a
second manager on the same storage cannot run it while the first does (one
owner at a time, the epoch moving once per activation); a team whose log
cannot be replayed is recorded ``broken`` with its reason and not tried again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar
from uuid import UUID, uuid4

from pydantic import Field

from akgentic.core.agent import Akgent
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.messages.message import UserMessage
from akgentic.team.store import EventStore
from akgentic.testing.waiting import wait_until

__all__ = ["ContractEcho", "VirtualTeamsContract", "virtual_contract_card"]


class ContractEchoState(BaseState):
    """What a :class:`ContractEcho` has received (persisted, so it survives passivation)."""

    seen: list[str] = Field(default_factory=list)


class ContractEcho(Akgent[BaseConfig, ContractEchoState]):
    """Keeps every UserMessage text in its state; ``seen()`` returns them."""

    def on_start(self) -> None:
        self.state = ContractEchoState().observer(self)

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        self.state.seen.append(message.content)

    def seen(self) -> list[str]:
        return list(self.state.seen)


def virtual_contract_card(passivate_after: float | None = None) -> Any:
    """``@Entry`` and ``@Echo``, both :class:`ContractEcho`; UserMessage for plain text."""
    from akgentic.core import AgentCard
    from akgentic.team import TeamCard, TeamCardMember

    def member(name: str) -> TeamCardMember:
        return TeamCardMember(
            card=AgentCard(
                description=name,
                agent_class=ContractEcho,
                config=BaseConfig(name=name, role=name.strip("@")),
            )
        )

    return TeamCard(
        name="virtual-contract",
        entry_point=member("@Entry"),
        members=[member("@Echo")],
        message_types=[UserMessage],
        passivate_after=passivate_after,
    )


class VirtualTeamsContract:
    """Passivation and activation cases of the event store contract."""

    #: Idle seconds before the contract's teams passivate.
    passivate_after: ClassVar[float] = 0.2
    #: Seconds any single wait of these cases may take.
    virtual_timeout: ClassVar[float] = 30.0
    #: Threads sending to one passivated team at once.
    activation_callers: ClassVar[int] = 16

    open_store: Callable[[str], EventStore]

    @contextmanager
    def _manager(self, store: EventStore, **settings: Any) -> Iterator[Any]:
        from akgentic.core import ActorSystem
        from akgentic.team import TeamManager

        system = ActorSystem()
        manager = TeamManager(system, store, passivate_after=self.passivate_after, **settings)
        try:
            yield manager
        finally:
            manager.stop_all()
            system.shutdown(timeout=10)

    @staticmethod
    def _stay_awake(manager: Any) -> None:
        """Teams this manager activates from now on are not passivated again.

        The cases read a woken team's actors after its work is done; with a
        countdown of ``passivate_after`` the team could go back to sleep between
        ``wait_idle`` and that read on a loaded machine.
        """
        manager.passivate_after = None

    def _passivated(self, manager: Any, team_id: UUID) -> None:
        from akgentic.team import TeamStatus

        def done() -> bool:
            record = manager.get_team(team_id)
            return (
                record is not None
                and record.status == TeamStatus.PASSIVATED
                and manager.get_runtime(team_id) is None
            )

        wait_until(done, timeout=self.virtual_timeout)

    @staticmethod
    def _seen(runtime: Any) -> list[str]:
        from akgentic.core.proxy import ProxyWrapper

        seen: list[str] = ProxyWrapper(runtime.addrs["@Echo"], ask=True, timeout=10).seen()
        return seen

    @staticmethod
    def _gap_free(store: EventStore, team_id: UUID) -> int:
        sequences = [e.sequence for e in store.load_events(team_id)]
        assert sequences == list(range(1, len(sequences) + 1)), "the log has a gap"
        return len(sequences)

    def test_an_idle_team_passivates_and_a_message_activates_it(self, store: EventStore) -> None:
        from akgentic.team import TeamStatus

        with self._manager(store) as manager:
            runtime = manager.create_team(virtual_contract_card())
            runtime.send("one")
            assert runtime.wait_idle(self.virtual_timeout)
            self._passivated(manager, runtime.id)
            stored = self._gap_free(store, runtime.id)
            listed = manager.list_teams(status=TeamStatus.PASSIVATED)
            assert [p.team_id for p in listed] == [runtime.id]
            self._stay_awake(manager)
            woken = manager.send(runtime.id, "two")
            assert woken.wait_idle(self.virtual_timeout)
            assert self._seen(woken) == ["one", "two"]
            manager.get_persistence(runtime.id).flush(self.virtual_timeout)
            assert self._gap_free(store, runtime.id) > stored
            assert manager.get_team(runtime.id).status == TeamStatus.RUNNING

    def test_concurrent_messages_share_one_activation_and_one_claim(
        self, store: EventStore
    ) -> None:
        with self._manager(store) as manager:
            runtime = manager.create_team(virtual_contract_card())
            self._passivated(manager, runtime.id)
            epoch = manager.get_team(runtime.id).epoch
            self._stay_awake(manager)
            start = threading.Barrier(self.activation_callers)
            woken: list[Any] = []
            errors: list[BaseException] = []

            def call(i: int) -> None:
                start.wait(self.virtual_timeout)
                try:
                    woken.append(manager.send(runtime.id, f"m{i}"))
                except BaseException as exc:  # reported below
                    errors.append(exc)

            threads = [
                threading.Thread(target=call, args=(i,)) for i in range(self.activation_callers)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(self.virtual_timeout)
            assert errors == []
            assert len({id(r) for r in woken}) == 1, "callers got different activations"
            assert manager.get_team(runtime.id).epoch == epoch + 1, "more than one claim"
            assert woken[0].wait_idle(self.virtual_timeout)
            expected = sorted(f"m{i}" for i in range(self.activation_callers))
            assert sorted(self._seen(woken[0])) == expected

    def test_one_owner_at_a_time_across_managers(self, store: EventStore, store_url: str) -> None:
        from akgentic.team import TeamOwnedError

        other_store = self.open_store(store_url)
        try:
            with self._manager(store) as first, self._manager(other_store) as second:
                runtime = first.create_team(virtual_contract_card())
                self._passivated(first, runtime.id)
                epoch = first.get_team(runtime.id).epoch
                self._stay_awake(second)  # else it may let go before first tries
                woken = second.send(runtime.id, "here")
                assert woken.wait_idle(self.virtual_timeout)
                try:
                    first.activate(runtime.id)
                except TeamOwnedError:
                    pass
                else:
                    raise AssertionError("two managers ran the team at once")
                assert first.get_runtime(runtime.id) is None
                assert second.get_team(runtime.id).epoch == epoch + 1
        finally:
            other_store.close()

    def test_a_team_that_cannot_activate_is_broken_and_not_retried(self, store: EventStore) -> None:
        from akgentic.team import Process, TeamActivationError, TeamStatus

        team_id = uuid4()
        # A passivated record with no log at all: nothing to rebuild the team from.
        store.save_team(
            Process(team_id=team_id, team_card=virtual_contract_card(), status="passivated")
        )
        with self._manager(store) as manager:
            try:
                manager.send(team_id, "hello")
            except TeamActivationError as exc:
                reason = exc.reason
            else:
                raise AssertionError("a team with an empty log was activated")
            record = manager.get_team(team_id)
            assert record.status == TeamStatus.BROKEN
            assert record.reason == reason and "empty event log" in reason
            epoch = record.epoch
            try:
                manager.activate(team_id)
            except TeamActivationError as again:
                assert again.reason == reason
            else:
                raise AssertionError("a broken team was activated by a message")
            assert manager.get_team(team_id).epoch == epoch, "a broken team was claimed again"
            listed = manager.list_teams(status=TeamStatus.BROKEN)
            assert [p.team_id for p in listed] == [team_id]
