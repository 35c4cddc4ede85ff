"""The local runtime holds the runtime and virtual-team contracts; connect() picks it by scheme."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.cluster import connect
from akgentic.cluster.client import RuntimeClient
from akgentic.cluster.local import LocalRuntime
from akgentic.plugins import UnknownPluginNameError
from akgentic.team.store import EventStore
from akgentic.testing import RuntimeContract, VirtualRuntimeContract


class TestLocalRuntimeContract(RuntimeContract):
    """The same client code as on a fleet, with every team in this process."""

    @pytest.fixture(scope="class")
    @classmethod
    def runtime(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RuntimeClient]:
        path = tmp_path_factory.mktemp("local-runtime") / "teams.db"
        client = connect("local:", store=f"sqlite:///{path}")
        yield client
        client.close()

    @pytest.fixture(scope="class")
    @classmethod
    def log_store(cls, runtime: RuntimeClient) -> EventStore:
        assert isinstance(runtime, LocalRuntime)
        return runtime.manager.event_store


def test_connect_defaults_to_the_local_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AKGENTIC_CLUSTER", raising=False)
    client = connect(store=f"sqlite:///{tmp_path / 'a.db'}")
    try:
        assert isinstance(client, LocalRuntime) and client.url == "local:"
    finally:
        client.close()


def test_an_unknown_cluster_scheme_names_what_is_installed() -> None:
    with pytest.raises(UnknownPluginNameError, match="local"):
        connect("ray://head:10001")


def test_only_the_local_runtime_runs_teams_in_process_and_the_flag_is_checked() -> None:
    from akgentic.cluster.local import connect_local
    from akgentic.plugins import RuntimeSpec, current_registry

    assert current_registry().runtime_for_scheme("local").in_process is True
    assert RuntimeSpec(name="fleet", schemes=("fleet",), connect=connect_local).in_process is False
    lying = RuntimeSpec(name="liar", schemes=("liar",), connect=connect_local, in_process="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="in_process must be a bool"):
        lying.check()


class TestLocalVirtualRuntime(VirtualRuntimeContract):
    """Passivation and activation on demand through the local runtime's client."""

    @pytest.fixture(scope="class")
    @classmethod
    def virtual_runtime(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RuntimeClient]:
        from akgentic.team.urls import open_event_store

        path = tmp_path_factory.mktemp("local-virtual") / "teams.db"
        client = LocalRuntime(
            "local:", open_event_store(f"sqlite:///{path}"), passivate_after=cls.passivate_after
        )
        yield client
        client.close()

    @pytest.fixture(scope="class")
    @classmethod
    def log_store(cls, virtual_runtime: RuntimeClient) -> EventStore:
        assert isinstance(virtual_runtime, LocalRuntime)
        return virtual_runtime.manager.event_store
