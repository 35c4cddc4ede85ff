"""The agent-class contract kit reports a class whose ``on_start`` raises.

Such an actor stops (as a pykka actor does), so the kit's "stopped while
starting" failure is reached, with the start's error report in its text.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from akgentic.core import ActorSystem, BaseConfig, BaseState, Orchestrator
from akgentic.core.agent import Akgent
from akgentic.testing.agent_class_contract import (
    PEER_NAME,
    AgentClassContract,
    ContractPeer,
    ContractRecorder,
    ContractTeam,
)


class NeedsADatabase(Akgent[BaseConfig, BaseState]):
    def on_start(self) -> None:
        raise ConnectionError("database unreachable")


class StartsFine(Akgent[BaseConfig, BaseState]):
    pass


@pytest.fixture
def contract_team() -> Iterator[ContractTeam]:
    # The kit's own fixture, built by hand: fixtures cannot be called directly.
    system = ActorSystem()
    try:
        address = system.createActor(
            Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
        )
        orchestrator = system.proxy_ask(address, Orchestrator, 10)
        recorder = ContractRecorder()
        orchestrator.subscribe(recorder)
        peer = orchestrator.createActor(
            ContractPeer, config=BaseConfig(name=PEER_NAME, role="ContractPeer")
        )
        yield ContractTeam(system, address, orchestrator, recorder, peer, 10)
    finally:
        system.shutdown(timeout=10)


def test_a_class_whose_on_start_raises_fails_the_kit_as_stopped_while_starting(
    contract_team: ContractTeam,
) -> None:
    kit = AgentClassContract()
    config = BaseConfig(name="@Db", role="Db")
    with pytest.raises(pytest.fail.Exception, match="stopped while starting") as failure:
        kit._started(contract_team, NeedsADatabase, config)
    assert "ConnectionError: database unreachable" in str(failure.value)


def test_a_class_that_starts_passes_the_same_check(contract_team: ContractTeam) -> None:
    address = AgentClassContract()._started(
        contract_team, StartsFine, BaseConfig(name="@Fine", role="Fine")
    )
    assert address.is_alive()
