"""The NATS runtime holds the runtime contract with a SQLite file or a YAML directory as fence.

The workers are subprocesses on one machine sharing the store file (or
directory), so the frozen-worker test only passes when a worker can take a team
over from a SIGSTOPped one that still holds the team's lock file: the store's
``take_over_team``. Fewer teams than the PostgreSQL run (the file stores
serialise writes); ``answer_timeout`` bounds every wait, no test measures speed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from akgentic.testing.runtime_contract import FleetRuntimeContract


class _FileStoreContract(FleetRuntimeContract):
    teams_per_worker = 8


@pytest.fixture(scope="module", params=["sqlite", "yaml"])
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """One SQLite file, then one YAML directory: the module's worker fleet is rebuilt per store."""
    if request.param == "sqlite":
        path: Path = tmp_path_factory.mktemp("sqlite-fence") / "teams.db"
        return f"sqlite:///{path}"
    return f"yaml:///{tmp_path_factory.mktemp('yaml-fence') / 'teams'}"


class TestNatsOnFileStores(_FileStoreContract):
    """Workers fenced by one SQLite file, then by one YAML store directory."""
