"""The ``qdrant-edge`` backend runs the contract kit on the real embedded engine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from akgentic.testing import VectorBackendContract
from akgentic.vector import VectorEntry, VectorStoreParam

edge = pytest.importorskip("akgentic_qdrant.edge", reason="qdrant-edge-py is not installed")
EdgeBackend, EdgeStorage = edge.EdgeBackend, edge.EdgeStorage


class TestQdrantEdge(VectorBackendContract):
    param = VectorBackendContract.param.model_copy(update={"backend": "qdrant-edge"})

    @pytest.fixture
    def make_backend(self, tmp_path: Path) -> Iterator[Any]:
        storage = EdgeStorage(tmp_path / "edge")
        yield lambda team_id, tenant=None: EdgeBackend(storage, team_id, tenant)
        storage.close()


PARAM = VectorStoreParam(backend="qdrant-edge", dimension=3, embedding_provider="hashing")


def test_rows_survive_closing_and_reopening_the_storage(tmp_path: Path) -> None:
    storage = EdgeStorage(tmp_path / "edge")
    backend = EdgeBackend(storage, "team-1")
    backend.create_collection("planning", PARAM)
    backend.add("planning", [VectorEntry(ref_type="t", ref_id="1", text="kept", vector=[1, 0, 0])])
    storage.close()
    reopened = EdgeBackend(EdgeStorage(tmp_path / "edge"), "team-1")
    reopened.create_collection("planning", PARAM)
    hits = reopened.search("planning", [1.0, 0.0, 0.0], 1).hits
    assert [(h.ref_id, h.text) for h in hits] == [("1", "kept")]
    reopened.storage.close()


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", "", "x" * 200, "/abs"])
def test_a_collection_name_cannot_leave_the_storage_root(tmp_path: Path, name: str) -> None:
    storage = EdgeStorage(tmp_path / "edge")
    with pytest.raises(ValueError, match="cannot name"):
        EdgeBackend(storage, "team-1").create_collection(name, PARAM)
    assert not (tmp_path / "escape").exists()
    storage.close()
