"""Both built-in event stores run the shared EventStoreContract."""

from __future__ import annotations

from pathlib import Path

import pytest

from akgentic.testing.event_store_contract import EventStoreContract


class TestSqliteEventStoreContract(EventStoreContract):
    opener = "akgentic.team.stores.sqlite:SqliteEventStore.from_url"
    native_paging = True
    supports_takeover = True

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path}/store/akgentic.db"


class TestYamlEventStoreContract(EventStoreContract):
    opener = "akgentic.team.stores.yaml:YamlEventStore.from_url"
    native_paging = True
    supports_takeover = True

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"yaml:///{tmp_path}/teams"
