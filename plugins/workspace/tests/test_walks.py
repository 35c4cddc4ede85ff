"""Walking the tree: the console viewer, listings and the journal against hostile trees.

The listing probes every workspace card must pass are in the WorkspaceContract kit
(test_workspace_contract.py); these are the plugin's own: the console's viewer and
pane, the journal through exec, the walk itself. A race is made deterministic by the
kit's ``swap_after_look``: the swap happens right after the code under test looked at
the name for the k-th time (a stat, an open, a realpath...); every k must be safe.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from akgentic_workspace import console_pane, treewalk
from akgentic_workspace import files as workspace_files
from akgentic_workspace.params import WorkspaceAttached

from akgentic.console.panes import PaneSource
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.plugins import PluginInfo
from akgentic.testing.workspace_contract import DEEP, make_deep, remove_deep, swap_after_look

Make = Callable[..., Any]


@pytest.fixture(autouse=True)
def _no_deep_leftovers(tmp_path: Path) -> Iterator[None]:
    """Deep trees removed after each test: pytest's own cleanup of old runs recurses."""
    yield
    remove_deep(tmp_path)


def _to_link(path: Path, target: Path) -> Callable[[], None]:
    def swap() -> None:
        os.rename(path, path.with_name(path.name + ".moved"))
        os.symlink(target, path)

    return swap


def _to_fifo(path: Path) -> Callable[[], None]:
    def swap() -> None:
        os.rename(path, path.with_name(path.name + ".moved"))
        os.mkfifo(path)

    return swap


# ---------------------------------------------------------------- the console viewer


@pytest.fixture
def bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, PaneSource]:
    """A tree bound to a team by its event, a host secret beside the root."""
    root = tmp_path / "workspaces"
    monkeypatch.setenv("AKGENTIC_WORKSPACES_ROOT", str(root))
    tree = root / "anonymous" / "_team" / "t1"
    tree.mkdir(parents=True)
    (tree / "a.txt").write_text("tree text\n")
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST SECRET\n")
    event = EventMessage(
        event=WorkspaceAttached(agent_id=uuid4(), workspace_path="anonymous/_team/t1")
    )
    return tree, secret, PaneSource(team_id=uuid4(), events=[event])


def _open_bounded(source: PaneSource, key: str, fifo: Path | None) -> Any:
    """``open_workspace_item`` on a thread; a call blocked on a FIFO fails the test."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(console_pane.open_workspace_item(source, key))
        except (ValueError, LookupError) as error:
            outcome.append(error)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=20)
    if worker.is_alive():
        assert fifo is not None
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # lets the blocked open return
        worker.join(timeout=20)
        pytest.fail("the viewer blocked on a FIFO swapped in for the file")
    return outcome[0]


@pytest.mark.parametrize("look", [1, 2, 3, 4])
def test_the_viewer_shows_no_host_file_when_the_file_is_swapped_for_a_link(
    bound: tuple[Path, Path, PaneSource], monkeypatch: pytest.MonkeyPatch, look: int
) -> None:
    tree, secret, source = bound
    swap_after_look(monkeypatch, "a.txt", look, _to_link(tree / "a.txt", secret))
    shown = _open_bounded(source, "0:a.txt", None)
    assert "HOST SECRET" not in repr(shown)
    if not isinstance(shown, Exception):
        assert shown[1]["text"] == "tree text\n"


@pytest.mark.parametrize("look", [1, 2, 3, 4])
def test_the_viewer_never_blocks_on_a_fifo_swapped_in_for_the_file(
    bound: tuple[Path, Path, PaneSource], monkeypatch: pytest.MonkeyPatch, look: int
) -> None:
    tree, _secret, source = bound
    swap_after_look(monkeypatch, "a.txt", look, _to_fifo(tree / "a.txt"))
    shown = _open_bounded(source, "0:a.txt", tree / "a.txt")
    if not isinstance(shown, Exception):
        assert shown[1]["text"] == "tree text\n"


def test_the_viewer_refuses_links_anywhere_on_the_path_and_non_regular_files(
    bound: tuple[Path, Path, PaneSource],
) -> None:
    tree, secret, source = bound
    (tree / "src").mkdir()
    (tree / "src" / "m.py").write_text("x = 1\n")
    os.symlink(tree / "src", tree / "alias")  # stays inside, still a link
    os.symlink(secret.parent, tree / "up")
    os.symlink(secret, tree / "leak.txt")
    os.mkfifo(tree / "pipe")
    for key in ("0:alias/m.py", f"0:up/{secret.name}", "0:leak.txt", "0:pipe"):
        with pytest.raises(ValueError):
            console_pane.open_workspace_item(source, key)
    assert console_pane.open_workspace_item(source, "0:src/m.py")[1]["text"] == "x = 1\n"


def test_the_pane_shows_unusual_names_escaped_and_lists_a_deep_tree(
    bound: tuple[Path, Path, PaneSource],
) -> None:
    tree, _secret, source = bound
    (tree / "evil\nfake.txt").write_text("")
    (tree / "gpj.\u202eexe").write_text("")
    os.close(os.open(os.fsencode(tree) + b"/raw-\xff.bin", os.O_CREAT | os.O_WRONLY, 0o600))
    make_deep(tree)
    blocks = console_pane.render_workspace_pane(source)
    items = next(b for b in blocks if b["kind"] == "tree")["items"]
    labels = [item["label"] for item in items]
    assert '"evil\\nfake.txt"' in labels
    assert '"gpj.\\u202eexe"' in labels
    assert '"raw-\\xff.bin"' in labels
    assert not any("\n" in label or "\u202e" in label for label in labels)
    raw = next(item for item in items if item["label"] == '"raw-\\xff.bin"')
    assert raw["openable"] is False  # the key could not come back from a browser intact


# ---------------------------------------------------------------- workspace_list


@pytest.fixture
def tree(workspaces_root: Path) -> Path:
    return workspaces_root / "alice" / "_id" / "p"


def test_list_of_a_deep_tree_and_recursive_rmdir_need_no_recursion(
    make_agent: Make, tree: Path
) -> None:
    a = make_agent()
    a.mkdir("top")
    make_deep(tree / "top")
    entries, offset = 0, 0
    while True:  # the indentation alone is megabytes: it takes many pages
        page = a.list("top", depth=0, offset=offset)
        assert len(page) < 60_000
        entries += page.count("d/")
        if "offset=" not in page:
            break
        offset = int(page.rsplit("offset=", 1)[1].split()[0])
    assert entries == DEEP
    a.rmdir("top", recursive=True, force=True)
    assert not (tree / "top").exists()


# ---------------------------------------------------------------- the journal


def _subjects(tree: Path) -> list[str]:
    out = subprocess.run(
        ["git", f"--git-dir={tree.with_name('p.git')}", "log", "--format=%s", "master"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return out.splitlines()


def test_a_deep_directory_does_not_blind_the_journal(make_agent: Make, tree: Path) -> None:
    a = make_agent(git_journal=True)
    deep = make_deep(tree)
    fd = os.open(tree / deep, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.close(os.open("bottom.txt", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    assert a.write("later.txt", "x\n") == "Written: later.txt"
    assert _subjects(tree)[:2] == [
        "write: later.txt",
        "out-of-band: changes from outside the tools",
    ]
    a.read(f"{deep}/bottom.txt")
    assert a.write(f"{deep}/bottom.txt", "deeper\n") == f"Written: {deep}/bottom.txt"
    assert _subjects(tree)[0] == f"write: {deep}/bottom.txt"


def test_after_an_exec_makes_a_deep_tree_later_runs_still_reach_the_journal(
    make_agent: Make, tree: Path, register_plugin: Callable[..., PluginInfo]
) -> None:
    from akgentic_workspace import plugin

    register_plugin(plugin, "workspace")
    register_plugin(importlib.import_module("akgentic_bwrap.plugin"), "bwrap")
    a = make_agent(workspace_exec=True, git_journal=True)
    deep = "/".join(["d"] * DEEP)
    made = a.exec(f"bash -c 'mkdir -p {deep} && echo deep > {deep}/bottom.txt'")
    assert "exit_code: 0 (OK)" in made and "journal" not in made
    later = a.exec("bash -c 'echo late > late.txt'")
    assert "exit_code: 0 (OK)" in later and "journal" not in later
    assert _subjects(tree)[:2] == ["exec: late.txt", f"exec: {deep}/bottom.txt"]


def test_a_failed_journal_commit_is_said_in_the_tool_answer(make_agent: Make, tree: Path) -> None:
    a = make_agent(git_journal=True)
    lock = tree.with_name("p.git") / "refs" / "heads" / "master.lock"
    lock.write_text("")  # another git holds the branch
    answer = a.write("x.txt", "x\n")
    assert answer.startswith("Written: x.txt")
    assert "[journal: commit failed" in answer
    lock.unlink()
    assert a.write("y.txt", "y\n") == "Written: y.txt"
    assert _subjects(tree)[:2] == ["write: y.txt", "out-of-band: changes from outside the tools"]


# ---------------------------------------------------------------- the walk itself


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_the_walk_holds_a_bounded_number_of_descriptors(tmp_path: Path) -> None:
    make_deep(tmp_path, 301)
    before = _open_fds()
    peak, depths = 0, []
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for visit in treewalk.descend(fd, leave=True):
            peak = max(peak, _open_fds())
            depths.append(visit.depth)
    finally:
        os.close(fd)
    assert max(depths) == 301
    assert peak <= before + treewalk.MAX_OPEN_DIRS + 4
    assert _open_fds() == before


def test_the_walk_stops_when_a_directory_it_closed_is_moved(tmp_path: Path) -> None:
    make_deep(tmp_path / "t", treewalk.MAX_OPEN_DIRS + 5)
    files = workspace_files.TreeFiles(tmp_path / "t")
    walk = files.walk()
    with contextlib.closing(walk), pytest.raises(treewalk.TreeMoved):
        for key, _entries in walk:
            if key.count("/") == treewalk.MAX_OPEN_DIRS + 3:
                # The top's descriptor is closed by now: move it away, put another in its place.
                os.rename(tmp_path / "t" / "d", tmp_path / "elsewhere")
                (tmp_path / "t" / "d").mkdir()
    assert stat.S_ISDIR(os.lstat(tmp_path / "elsewhere").st_mode)
