"""The NATS runtime holds the runtime contract with a SQLite file or a YAML directory as fence.

The workers are subprocesses on one machine sharing the store file (or
directory), so the frozen-worker test only passes when a worker can take a team
over from a SIGSTOPped one that still holds the team's lock file: the store's
``take_over_team``. Fewer teams than the PostgreSQL run (the file stores
serialise writes); ``answer_timeout`` bounds every wait, no test measures speed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.cluster import connect
from akgentic.cluster.client import RuntimeClient
from akgentic.team.store import EventStore
from akgentic.team.urls import open_event_store
from akgentic.testing import RuntimeContract
from akgentic.testing.runtime_contract import Fleet


class _FileStoreContract(RuntimeContract):
    teams_per_worker = 8

    @pytest.fixture(scope="class")
    @classmethod
    def runtime(cls, cluster_url: str, worker_fleet: Fleet) -> Iterator[RuntimeClient]:
        worker_fleet.ensure(cls.workers)
        client = connect(cluster_url)
        yield client
        client.close()

    @pytest.fixture(scope="class")
    @classmethod
    def log_store(cls, store_url: str) -> Iterator[EventStore]:
        store = open_event_store(store_url)
        yield store
        store.close()

    @pytest.fixture(scope="class")
    @classmethod
    def fleet(cls, worker_fleet: Fleet) -> Fleet:
        return worker_fleet


@pytest.fixture(scope="module", params=["sqlite", "yaml"])
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """One SQLite file, then one YAML directory: the module's worker fleet is rebuilt per store."""
    if request.param == "sqlite":
        path: Path = tmp_path_factory.mktemp("sqlite-fence") / "teams.db"
        return f"sqlite:///{path}"
    return f"yaml:///{tmp_path_factory.mktemp('yaml-fence') / 'teams'}"


class TestNatsOnFileStores(_FileStoreContract):
    """Workers fenced by one SQLite file, then by one YAML store directory."""
