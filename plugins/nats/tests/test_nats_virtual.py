"""Virtual teams on the NATS cluster: a passivated team holds no worker; a message places it.

Workers run with ``--passivate-after 3`` (the conftest's ``passivating_fleet``,
matching the contract's ``passivate_after``) on a cluster of their own (so teams
other modules leave behind are not adopted here), PostgreSQL being the fence.
``VirtualRuntimeContract`` checks through the client what the store records.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from akgentic.cluster import connect
from akgentic.cluster.client import RuntimeClient
from akgentic.team.store import EventStore
from akgentic.testing import VirtualRuntimeContract
from akgentic.testing.runtime_contract import Fleet, store_at


class TestNatsVirtualRuntime(VirtualRuntimeContract):
    """Activation places the team on a worker; one owner at a time (the epoch fence)."""

    @pytest.fixture(scope="class")
    @classmethod
    def virtual_runtime(
        cls, virtual_cluster_url: str, passivating_fleet: Fleet
    ) -> Iterator[RuntimeClient]:
        client = connect(virtual_cluster_url)
        yield client
        client.close()

    @pytest.fixture(scope="class")
    @classmethod
    def log_store(cls, store_url: str) -> Iterator[EventStore]:
        yield from store_at(store_url)
