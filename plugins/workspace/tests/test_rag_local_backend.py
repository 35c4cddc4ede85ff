"""The ``local`` backend passes the vector contract kit and is seen across instances."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace.rag.local_backend import LocalBackend, make_local_backend

from akgentic.testing.vector_contract import VectorBackendContract, unit_vector
from akgentic.vector.param import VectorStoreParam
from akgentic.vector.protocol import VectorEntry
from akgentic.vector.registry import BackendContext


class TestLocalBackend(VectorBackendContract):
    @pytest.fixture
    def make_backend(self, tmp_path: Path) -> Any:
        return lambda team_id, tenant=None: LocalBackend(str(tmp_path), team_id, tenant)


def test_no_root_is_refused() -> None:
    with pytest.raises(ValueError, match="needs a root"):
        make_local_backend(BackendContext(VectorStoreParam(backend="local"), team_id="t"))


def test_rows_survive_a_fresh_process_cache(tmp_path: Path) -> None:
    import akgentic_workspace.rag.local_backend as module

    param = VectorStoreParam(backend="local", dimension=8)
    first = LocalBackend(str(tmp_path), "team")
    first.create_collection("workspace_chunks", param)
    first.add(
        "workspace_chunks",
        [VectorEntry(ref_type="c", ref_id="r1", text="t", vector=unit_vector(1), scope="s")],
    )
    module._databases.clear()  # what another process would start from
    second = LocalBackend(str(tmp_path), "other-team")
    second.create_collection("workspace_chunks", param)
    hits = second.search("workspace_chunks", unit_vector(1), 3, scope="s").hits
    assert [h.ref_id for h in hits] == ["r1"]
    assert (tmp_path / "index" / "workspace_chunks" / "rows.sqlite3").is_file()
    assert second.list_collections() == ["workspace_chunks"]
