"""WorkspaceContract: what a workspace card's file tools must keep against a hostile tree.

Code running in the sandbox shapes the tree: it swaps directories for links while the
host lists them, nests directories thousands deep, creates tens of thousands of files
and names them with newlines, right-to-left overrides or bytes that are not UTF-8. A
workspace card proves its tools stay safe and bounded by subclassing this class::

    class TestMyWorkspaceBehaviour(WorkspaceContract):
        @pytest.fixture
        def workspace(self) -> WorkspaceUnderTest:
            card = MyWorkspaceCard(git_journal=True)
            ...bind it to an observer...
            return WorkspaceUnderTest(tree=..., tools={t.__name__: t for t in card.get_tools()})

The tools are called as the model calls them: ``workspace_list(path, depth, offset)``
and ``workspace_write(path, content)``. Races are made deterministic with
:func:`swap_after_look`, which performs a swap right after the code under test looked
at a name for the k-th time, whatever the implementation looks with.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "DEEP",
    "WorkspaceContract",
    "WorkspaceUnderTest",
    "make_deep",
    "remove_deep",
    "swap_after_look",
]

#: How deep the deep-tree probes nest directories (past Python's recursion limit).
DEEP = 1200

_LOOKS: dict[Any, tuple[str, ...]] = {
    os: ("stat", "lstat", "open", "scandir", "readlink", "listdir"),
    os.path: ("realpath", "isfile", "isdir", "exists"),
}


@dataclass
class WorkspaceUnderTest:
    """A bound workspace card: the directory its tools see, and its tools by name."""

    tree: Path
    tools: Mapping[str, Callable[..., Any]]
    #: The journal's commit subjects, newest first (None: the card keeps no journal).
    history: Callable[[], list[str]] | None = None


def _named(argument: object) -> str | None:
    if isinstance(argument, (str, bytes, os.PathLike)):
        return os.path.basename(os.fsdecode(argument).rstrip("/"))
    return None


def swap_after_look(
    monkeypatch: pytest.MonkeyPatch, name: str, look: int, swap: Callable[[], None]
) -> Callable[[], None]:
    """Run ``swap`` once, right after the ``look``-th call naming ``name`` returns.

    Returns a function that disarms the hook (call it once the code under test returned).

    The calls watched are the ways to look at a path by name: ``os.stat``, ``os.lstat``,
    ``os.open``, ``os.scandir``, ``os.readlink``, ``os.listdir`` and ``os.path``'s
    ``realpath``, ``isfile``, ``isdir``, ``exists``.
    """
    seen = [0]

    def wrap(module: Any, attribute: str) -> None:
        real = getattr(module, attribute)

        def hooked(*args: Any, **kwargs: Any) -> Any:
            try:
                return real(*args, **kwargs)
            finally:
                if args and seen[0] < look and _named(args[0]) == name:
                    seen[0] += 1
                    if seen[0] == look:
                        swap()

        monkeypatch.setattr(module, attribute, hooked)

    for module, attributes in _LOOKS.items():
        for attribute in attributes:
            wrap(module, attribute)

    def disarm() -> None:
        seen[0] = max(seen[0], look)

    return disarm


def make_deep(base: Path, depth: int = DEEP) -> str:
    """``depth`` nested directories ``d`` under ``base``, made without recursion; their key."""
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


def remove_deep(base: Path) -> None:
    """Empty ``base`` bottom up, one descriptor at a time, without recursion.

    pytest's own cleanup of old temporary directories recurses, and fails on a tree
    as deep as :data:`DEEP`: a probe that builds one removes it with this.
    """
    if not base.is_dir():
        return
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    current = os.open(base, flags)
    names: list[str] = []
    try:
        while True:
            child = None
            for entry in list(os.scandir(current)):
                if entry.is_dir(follow_symlinks=False):
                    child = child or entry.name
                else:
                    os.unlink(entry.name, dir_fd=current)
            if child is not None:
                inner = os.open(child, flags, dir_fd=current)
                os.close(current)
                current = inner
                names.append(child)
                continue
            if not names:
                break
            parent = os.open("..", flags, dir_fd=current)
            os.close(current)
            current = parent
            os.rmdir(names.pop(), dir_fd=current)
    finally:
        os.close(current)


class WorkspaceContract:
    """The workspace behaviour contract as pytest tests; subclass it (module docstring)."""

    @pytest.fixture
    def workspace(self) -> WorkspaceUnderTest:
        """The card under test, bound to a fresh tree: every subclass must override it."""
        raise NotImplementedError(
            f"{type(self).__name__} must define a `workspace` fixture returning a "
            "WorkspaceUnderTest"
        )

    @pytest.fixture(autouse=True)
    def _deep_trees_removed(self, workspace: WorkspaceUnderTest) -> Any:
        yield
        remove_deep(workspace.tree)

    @staticmethod
    def _tool(workspace: WorkspaceUnderTest, name: str) -> Callable[..., Any]:
        tool = workspace.tools.get(name)
        if tool is None:
            pytest.fail(f"the card under test serves no {name!r} tool")
        return tool

    # -- listings never leave the tree -------------------------------------
    @pytest.mark.parametrize("look", [1, 2, 3])
    @pytest.mark.parametrize(("path", "depth"), [("", 0), ("", 2), ("d", 1), ("d", 0)])
    def test_a_listing_never_shows_a_directory_swapped_for_a_link(
        self,
        workspace: WorkspaceUnderTest,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        look: int,
        path: str,
        depth: int,
    ) -> None:
        listing = self._tool(workspace, "workspace_list")
        (workspace.tree / "d").mkdir(parents=True)
        (workspace.tree / "d" / "inside.txt").write_text("x")
        host = tmp_path / "host-dir"
        host.mkdir()
        (host / "host-secret.txt").write_text("secret")
        moved = workspace.tree / "d.moved"

        def swap() -> None:
            os.rename(workspace.tree / "d", moved)
            os.symlink(host, workspace.tree / "d")

        disarm = swap_after_look(monkeypatch, "d", look, swap)
        try:
            shown = str(listing(path=path, depth=depth))
        except Exception as error:  # a refusal is fine; a host listing is not
            shown = str(error)
        finally:
            disarm()
        assert "host-secret" not in shown, (
            f"workspace_list({path!r}, depth={depth}) listed a host directory through a "
            f"link swapped in after look {look}: {shown!r}"
        )

    # -- listings are bounded and paged ------------------------------------
    def test_a_large_directory_is_listed_in_pages_with_the_next_offset(
        self, workspace: WorkspaceUnderTest
    ) -> None:
        listing = self._tool(workspace, "workspace_list")
        many = workspace.tree / "many"
        many.mkdir(parents=True)
        names = [f"file-{number:05d}.txt" for number in range(3000)]
        for name in names:
            (many / name).write_bytes(b"")
        seen: list[str] = []
        offset = 0
        for _ in range(len(names)):
            page = str(listing(path="many", depth=1, offset=offset))
            assert len(page) < 100_000, f"one listing page is {len(page)} characters"
            lines = page.splitlines()
            if "offset=" not in lines[-1]:
                seen += lines
                break
            seen += lines[:-1]
            offset = int(lines[-1].split("offset=")[1].split()[0])
            assert offset == len(seen), f"the next offset skips or repeats entries: {lines[-1]}"
        assert [line.split(" ")[0] for line in seen] == names

    # -- deep trees --------------------------------------------------------
    def test_a_deep_tree_is_listed_and_later_changes_reach_the_journal(
        self, workspace: WorkspaceUnderTest
    ) -> None:
        listing = self._tool(workspace, "workspace_list")
        write = self._tool(workspace, "workspace_write")
        deep = make_deep(workspace.tree)
        bottom = os.open(workspace.tree / deep, os.O_RDONLY | os.O_DIRECTORY)
        try:  # git records files, not empty directories
            os.close(os.open("bottom.txt", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=bottom))
        finally:
            os.close(bottom)
        first = str(listing(path="", depth=0))
        assert first.count("d/") > 10, first[:500]
        answer = str(write(path="after-deep.txt", content="x\n"))
        assert "journal" not in answer, f"the write after a deep tree said: {answer}"
        if workspace.history is not None:
            subjects = workspace.history()
            assert subjects[0] == "write: after-deep.txt", subjects[:3]
            assert any(subject.startswith("out-of-band") for subject in subjects[:2]), (
                f"the deep tree never reached the journal: {subjects[:3]}"
            )
        assert deep.count("/") == DEEP - 1

    # -- names are shown as data -------------------------------------------
    @pytest.mark.parametrize("depth", [1, 0])
    def test_unusual_names_are_listed_escaped_one_entry_per_line(
        self, workspace: WorkspaceUnderTest, depth: int
    ) -> None:
        listing = self._tool(workspace, "workspace_list")
        odd = workspace.tree / "odd"
        odd.mkdir(parents=True)
        hostile = ["evil\nfake.txt (9 bytes)", "gpj.\u202eexe", "zero\u200bwidth", "bell\x07"]
        for name in hostile:
            (odd / name).write_text("")
        raw = os.fsencode(odd) + b"/raw-\xff"
        os.close(os.open(raw, os.O_CREAT | os.O_WRONLY, 0o600))
        shown = str(listing(path="odd", depth=depth))
        lines = shown.splitlines()
        assert len(lines) == len(hostile) + 1 + (depth != 1), shown
        for char in ("\u202e", "\u200b", "\x07", "\udcff"):
            assert char not in shown, f"{char!r} reached the listing unescaped: {shown!r}"
        for escaped in ('"evil\\nfake.txt (9 bytes)"', '"gpj.\\u202eexe"', '"raw-\\xff"'):
            assert escaped in shown, f"{escaped} is not in {shown!r}"

    @pytest.mark.parametrize("tool", ["workspace_glob", "workspace_grep"])
    def test_unusual_names_found_by_glob_and_grep_are_escaped(
        self, workspace: WorkspaceUnderTest, tool: str
    ) -> None:
        search = self._tool(workspace, tool)
        odd = workspace.tree / "found"
        odd.mkdir(parents=True)
        for name in ("evil\nfake.txt", "gpj.\u202etxt"):
            (odd / name).write_text("needle\n")
        raw = os.fsencode(odd) + b"/raw-\xff.txt"
        with open(os.open(raw, os.O_CREAT | os.O_WRONLY, 0o600), "w") as handle:
            handle.write("needle\n")
        shown = str(search(pattern="**" if tool == "workspace_glob" else "needle", path="found"))
        assert len(shown.splitlines()) == 3, shown
        for char in ("\u202e", "\udcff"):
            assert char not in shown, f"{char!r} reached the {tool} answer unescaped: {shown!r}"
        escapes = ('"found/evil\\nfake.txt"', '"found/gpj.\\u202etxt"', '"found/raw-\\xff.txt"')
        for escaped in escapes:
            assert escaped in shown, shown
