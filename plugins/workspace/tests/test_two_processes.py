"""Two interpreters over one tree, each its own team: the flock-based gate orders them.

Each child binds a card to a recording observer with its own team id (no LLM: the
ordering under test is in the files of the tree's index, not in any actor).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from akgentic.testing.waiting import poll_until

CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from akgentic.testing.waiting import poll_until
    from akgentic.tool.core.factory import ToolFactory
    from akgentic.tool.errors import RetriableError
    from akgentic.tool.testing import RecordingObserver
    from akgentic_workspace import WorkspaceTool

    mode, name, sync = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    observer = RecordingObserver(name=name, user_id="alice")
    card = WorkspaceTool(workspace_id="p")
    ToolFactory([card], observer=observer)
    tools = {t.__name__: t for t in card.get_tools()}
    out = []

    def barrier():
        (sync / f"ready-{name}").touch()
        if not poll_until((sync / "go").exists, 60):
            raise SystemExit("no go signal")

    if mode == "write":
        tools["workspace_read"]("f.txt")
        barrier()
        try:
            out.append(tools["workspace_write"]("f.txt", f"written by {name}\\n"))
        except RetriableError as error:
            out.append("REFUSED " + str(error))
    else:
        barrier()
        for i in range(50):
            while True:
                tools["workspace_read"]("x.txt")
                tools["workspace_read"]("y.txt")
                try:
                    new = f"start\\n{name}-{i}\\n"
                    result = tools["workspace_multi_edit"]([
                        {"path": "x.txt", "old_string": "start\\n", "new_string": new},
                        {"path": "y.txt", "old_string": "start\\n", "new_string": new},
                    ])
                except RetriableError:
                    continue
                out.append(result)
                break
    print(json.dumps(out))
    """
)


def run_children(tmp_path: Path, workspaces_root: Path, mode: str) -> list[list[str]]:
    sync = tmp_path / "sync"
    sync.mkdir()
    env = {**os.environ, "AKGENTIC_WORKSPACES_ROOT": str(workspaces_root)}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, mode, name, str(sync)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("@P1", "@P2")
    ]

    def ready() -> bool:
        assert all(c.poll() is None for c in children), [c.communicate() for c in children]
        return len(list(sync.glob("ready-*"))) >= 2

    assert poll_until(ready, 60), "children never reached the barrier"
    (sync / "go").touch()
    results = []
    for child in children:
        stdout, stderr = child.communicate(timeout=120)
        assert child.returncode == 0, stderr
        results.append(json.loads(stdout.strip().splitlines()[-1]))
    return results


def test_two_processes_writing_from_one_read_lose_no_update(
    tmp_path: Path, workspaces_root: Path
) -> None:
    tree = workspaces_root / "alice" / "_id" / "p"
    tree.mkdir(parents=True)
    (tree / "f.txt").write_text("original\n")
    (first,), (second,) = run_children(tmp_path, workspaces_root, "write")
    written = [o for o in (first, second) if o == "Written: f.txt"]
    refused = [o for o in (first, second) if o.startswith("REFUSED")]
    assert len(written) == 1 and len(refused) == 1
    assert "it changed since you read it" in refused[0]
    winner = "@P1" if first == "Written: f.txt" else "@P2"
    assert (tree / "f.txt").read_text() == f"written by {winner}\n"


def test_two_processes_of_multi_edits_land_every_accepted_pair_together(
    tmp_path: Path, workspaces_root: Path
) -> None:
    tree = workspaces_root / "alice" / "_id" / "p"
    tree.mkdir(parents=True)
    (tree / "x.txt").write_text("start\n")
    (tree / "y.txt").write_text("start\n")
    results = run_children(tmp_path, workspaces_root, "multi")
    assert all(len(r) == 50 and all(not o.startswith("[ERROR]") for o in r) for r in results)
    x = (tree / "x.txt").read_text().splitlines()
    y = (tree / "y.txt").read_text().splitlines()
    assert x == y
    assert sorted(x[1:]) == sorted(f"@P{p}-{i}" for p in (1, 2) for i in range(50))
