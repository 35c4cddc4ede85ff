"""``akgentic vector collections`` and ``reap`` on a real on-disk Qdrant engine, in subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from akgentic_qdrant.backend import QdrantBackend
from qdrant_client import QdrantClient

from akgentic.vector import VectorEntry, VectorStoreParam

PARAM = VectorStoreParam(backend="qdrant", dimension=4, embedding_provider="hashing")


def seed(path: Path) -> None:
    client = QdrantClient(path=str(path))
    lock = threading.RLock()
    for team, n in (("team-a", 3), ("team-b", 2)):
        backend = QdrantBackend(client, team, lock=lock)
        for name in ("planning", "workspace_chunks"):
            backend.create_collection(name, PARAM)
        rows = [
            VectorEntry(ref_type="task", ref_id=str(i), text="t", vector=[1.0, i, 0.5, 0.0])
            for i in range(n)
        ]
        backend.add("planning", rows)
        backend.add("workspace_chunks", [r.model_copy(update={"scope": "ws"}) for r in rows])
    client.close()


def cli(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AKGENTIC_QDRANT_URL": f"file://{path}"}
    return subprocess.run(
        [sys.executable, "-m", "akgentic.cli", "vector", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_collections_lists_the_cluster_and_reap_deletes_one_teams_rows(tmp_path: Path) -> None:
    path = tmp_path / "qdrant"
    seed(path)
    listed = cli(path, "collections", "--backend", "qdrant", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == {"backends": {"qdrant": ["planning", "workspace_chunks"]}}
    reaped = cli(path, "reap", "team-a")
    assert reaped.returncode == 0, reaped.stderr
    assert "qdrant/planning: 3 rows deleted" in reaped.stdout
    assert "qdrant/workspace_chunks: shared, skipped" in reaped.stdout
    client = QdrantClient(path=str(path))
    try:
        assert client.count("planning", exact=True).count == 2
        # Shared rows have no team in their id: both teams wrote ids 0..2, and none is reaped.
        assert client.count("workspace_chunks", exact=True).count == 3
    finally:
        client.close()


def test_reap_refuses_a_shared_collection_in_any_case(tmp_path: Path) -> None:
    path = tmp_path / "qdrant"
    seed(path)
    refused = cli(path, "reap", "team-a", "--collection", "Workspace_Chunks")
    assert refused.returncode == 2
    assert "shared across teams" in refused.stderr


def test_collections_and_reap_walk_a_qdrant_edge_directory_too(tmp_path: Path) -> None:
    from akgentic_qdrant.edge import EdgeBackend, EdgeStorage

    edge_root = tmp_path / "edge"
    storage = EdgeStorage(edge_root)
    edge_param = PARAM.model_copy(update={"backend": "qdrant-edge"})
    for team, n in (("team-a", 3), ("team-b", 2)):
        backend = EdgeBackend(storage, team)
        backend.create_collection("planning", edge_param)
        backend.add(
            "planning",
            [
                VectorEntry(ref_type="task", ref_id=str(i), text="t", vector=[1.0, i, 0.5, 0.0])
                for i in range(n)
            ],
        )
    storage.close()
    env = {
        **{k: v for k, v in os.environ.items() if k != "AKGENTIC_QDRANT_URL"},
        "AKGENTIC_QDRANT_EDGE_PATH": str(edge_root),
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "akgentic.cli", "vector", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    listed = run("collections", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == {"backends": {"qdrant-edge": ["planning"]}}
    reaped = run("reap", "team-a")
    assert reaped.returncode == 0, reaped.stderr
    assert "qdrant-edge/planning: 3 rows deleted" in reaped.stdout
    reopened = EdgeStorage(edge_root)
    try:
        team_b = EdgeBackend(reopened, "team-b")
        team_b.create_collection("planning", edge_param)
        assert team_b.count("planning") == 2
        assert EdgeBackend(reopened, None).list_collections() == ["planning"]
    finally:
        reopened.close()
