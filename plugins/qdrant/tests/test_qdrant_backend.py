"""The ``qdrant`` backend runs the contract kit on real qdrant-client local engines.

``:memory:`` and a directory (path mode) are both real Qdrant local engines: the
same filter objects and upsert paths as a server, evaluated by qdrant-client itself.
A server is not started here; point ``AKGENTIC_QDRANT_URL`` at one to use it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from akgentic_qdrant.backend import QdrantBackend
from qdrant_client import QdrantClient

from akgentic.testing import VectorBackendContract


class TestQdrantInMemory(VectorBackendContract):
    param = VectorBackendContract.param.model_copy(update={"backend": "qdrant"})

    @pytest.fixture
    def make_backend(self) -> Any:
        client = QdrantClient(location=":memory:")
        lock = threading.RLock()

        def make(team_id: str | None, tenant: str | None = None) -> QdrantBackend:
            return QdrantBackend(client, team_id, tenant, lock=lock)

        yield make
        client.close()


class TestQdrantPath(VectorBackendContract):
    param = VectorBackendContract.param.model_copy(update={"backend": "qdrant"})

    @pytest.fixture
    def make_backend(self, tmp_path: Path) -> Any:
        client = QdrantClient(path=str(tmp_path / "qdrant"))
        lock = threading.RLock()

        def make(team_id: str | None, tenant: str | None = None) -> QdrantBackend:
            return QdrantBackend(client, team_id, tenant, lock=lock)

        yield make
        client.close()
