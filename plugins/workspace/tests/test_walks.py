"""Walking the tree: the console viewer, listings and the journal against hostile trees.

A race is made deterministic by :func:`swap_after_look`: the swap happens right after
the code under test has looked at the name for the k-th time (a stat, an open, a
realpath...), whatever the implementation; every k must be safe.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from akgentic_workspace import console_pane
from akgentic_workspace import files as workspace_files
from akgentic_workspace.params import WorkspaceAttached

from akgentic.console.panes import PaneSource
from akgentic.core.messages.orchestrator import EventMessage

Make = Callable[..., Any]
DEEP = 1200

_LOOKS = {
    os: ("stat", "lstat", "open", "scandir", "readlink", "listdir"),
    os.path: ("realpath", "isfile", "isdir", "exists"),
}


@pytest.fixture(autouse=True)
def _no_deep_leftovers(tmp_path: Path) -> Iterator[None]:
    """Deep trees removed after each test: pytest's own cleanup of old runs recurses."""
    yield
    subprocess.run(["find", str(tmp_path), "-mindepth", "1", "-depth", "-delete"], check=False)


def _names(argument: object) -> str | None:
    if isinstance(argument, (str, bytes, os.PathLike)):
        return os.path.basename(os.fsdecode(argument).rstrip("/"))
    return None


def swap_after_look(
    monkeypatch: pytest.MonkeyPatch, name: str, look: int, swap: Callable[[], None]
) -> list[int]:
    """Run ``swap`` once, right after the ``look``-th call that names ``name`` returns."""
    seen = [0]

    def wrap(module: Any, attribute: str) -> None:
        real = getattr(module, attribute)

        def hooked(*args: Any, **kwargs: Any) -> Any:
            try:
                return real(*args, **kwargs)
            finally:
                if args and _names(args[0]) == name and seen[0] < look:
                    seen[0] += 1
                    if seen[0] == look:
                        swap()

        monkeypatch.setattr(module, attribute, hooked)

    for module, attributes in _LOOKS.items():
        for attribute in attributes:
            wrap(module, attribute)
    return seen


def make_deep(base: Path, depth: int = DEEP) -> str:
    """``depth`` nested directories ``d`` under ``base`` (no recursion); their key."""
    base.mkdir(parents=True, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    return "/".join(["d"] * depth)


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


@pytest.mark.parametrize("look", [1, 2, 3])
@pytest.mark.parametrize(("path", "depth"), [("", 0), ("", 2), ("d", 1), ("d", 0)])
def test_list_never_shows_a_host_directory_swapped_in_for_a_subdirectory(
    make_agent: Make,
    tree: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    look: int,
    path: str,
    depth: int,
) -> None:
    a = make_agent()
    a.write("d/inside.txt", "x")
    host = tmp_path / "host"
    host.mkdir()
    (host / "host-secret.txt").write_text("secret")
    swap_after_look(monkeypatch, "d", look, _to_link(tree / "d", host))
    try:
        listed = a.list(path, depth=depth)
    except Exception as error:  # a refusal is fine; a host listing is not
        listed = str(error)
    assert "host-secret" not in listed


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


def test_list_is_paged_with_the_offset_of_the_next_page(make_agent: Make, tree: Path) -> None:
    a = make_agent()
    a.mkdir("many")
    for number in range(1234):
        (tree / "many" / f"file-{number:05d}.txt").write_bytes(b"")
    seen: list[str] = []
    offset = 0
    for _ in range(10):
        page = a.list("many", offset=offset)
        assert len(page) < 60_000
        lines = page.splitlines()
        if "offset=" not in lines[-1]:
            seen += lines
            break
        assert "narrower path" in lines[-1]
        seen += lines[:-1]
        offset = int(lines[-1].split("offset=")[1].split()[0])
        assert offset == len(seen)
    assert seen == [f"file-{n:05d}.txt (0 bytes)" for n in range(1234)]
    tree_page = a.list("", depth=0).splitlines()
    assert len(tree_page) <= 502 and "offset=500" in tree_page[-1]


def test_list_shows_unusual_names_escaped_one_entry_per_line(make_agent: Make, tree: Path) -> None:
    a = make_agent()
    a.mkdir("odd")
    (tree / "odd" / "evil\nfake.txt (9 bytes)").write_text("")
    (tree / "odd" / "gpj.\u202eexe").write_text("")
    (tree / "odd" / '"quoted"').write_text("")
    os.close(os.open(os.fsencode(tree) + b"/odd/raw-\xff", os.O_CREAT | os.O_WRONLY, 0o600))
    for depth in (1, 0):
        lines = a.list("odd", depth=depth).splitlines()
        assert len(lines) == 4 + (depth == 0)
        text = "\n".join(lines)
        assert "\u202e" not in text and "\udcff" not in text
        assert '"evil\\nfake.txt (9 bytes)" (0 bytes)' in text
        assert '"gpj.\\u202eexe" (0 bytes)' in text
        assert '"raw-\\xff" (0 bytes)' in text
        assert '"\\"quoted\\"" (0 bytes)' in text


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
        for visit in workspace_files.descend(fd, leave=True):
            peak = max(peak, _open_fds())
            depths.append(visit.depth)
    finally:
        os.close(fd)
    assert max(depths) == 301
    assert peak <= before + workspace_files.MAX_OPEN_DIRS + 4
    assert _open_fds() == before


def test_the_walk_stops_when_a_directory_it_closed_is_moved(tmp_path: Path) -> None:
    make_deep(tmp_path / "t", workspace_files.MAX_OPEN_DIRS + 5)
    files = workspace_files.TreeFiles(tmp_path / "t")
    walk = files.walk()
    with contextlib.closing(walk), pytest.raises(workspace_files.TreeMoved):
        for key, _entries in walk:
            if key.count("/") == workspace_files.MAX_OPEN_DIRS + 3:
                # The top's descriptor is closed by now: move it away, put another in its place.
                os.rename(tmp_path / "t" / "d", tmp_path / "elsewhere")
                (tmp_path / "t" / "d").mkdir()
    assert stat.S_ISDIR(os.lstat(tmp_path / "elsewhere").st_mode)
