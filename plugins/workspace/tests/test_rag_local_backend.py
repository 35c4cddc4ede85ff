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


# Each child opens the database named on each stdin line and answers "ok" or the error.
_OPENER = """
import sys
from pathlib import Path
from akgentic_workspace.rag.local_backend import _Database

print("ready", flush=True)
for line in sys.stdin:
    try:
        _Database(Path(line.strip())).conn.close()
        print("ok", flush=True)
    except Exception as error:
        print(f"{type(error).__name__}: {error}", flush=True)
"""


def test_processes_opening_a_new_database_at_the_same_moment_all_succeed(tmp_path: Path) -> None:
    """Several processes create one new ``rows.sqlite3`` at once, many times over.

    Each round is a start line: every child is blocked on its stdin and the path of a
    fresh database is written to all of them back to back, so they reach the first-time
    setup together. In rollback-journal mode SQLite refuses one of two writers that
    both hold a read lock at once (its deadlock rule skips the busy timeout), so a
    setup that is not serialised fails some rounds with "database is locked".
    """
    import subprocess
    import sys
    from contextlib import ExitStack

    with ExitStack() as stack:  # each Popen's exit closes its pipes
        children = [
            stack.enter_context(
                subprocess.Popen(
                    [sys.executable, "-c", _OPENER],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
            for _ in range(4)
        ]
        try:
            for child in children:
                assert child.stdout is not None and child.stdout.readline().strip() == "ready"
            failures = []
            for round_ in range(40):
                path = tmp_path / f"r{round_}" / "index" / "c" / "rows.sqlite3"
                for child in children:
                    assert child.stdin is not None
                    child.stdin.write(f"{path}\n")
                    child.stdin.flush()
                answers = [child.stdout.readline().strip() for child in children if child.stdout]
                failures += [a for a in answers if a != "ok"]
            assert failures == []
        finally:
            for child in children:
                if child.stdin is not None:
                    child.stdin.close()
                child.wait(timeout=60)
