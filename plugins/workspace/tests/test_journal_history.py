"""The journal's commits are written in-process; git itself must agree with every one.

* Each commit's tree is exactly what ``git add -A`` would record from the tree at that
  moment (ignore files at every level, negations, links kept as links, the executable
  bit, a file turned into a directory), and ``git fsck --strict`` finds nothing.
* Two interpreters journaling one tree at once give one linear history with every
  change, each commit with at most one parent.
* After a ``git gc`` packed the objects, journaling goes on.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

Make = Callable[..., Any]


def git(tree: Path, *args: str, env: dict[str, str] | None = None) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    clean.update(env or {}, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(
        ["git", f"--git-dir={tree.with_name(tree.name + '.git')}", f"--work-tree={tree}", *args],
        capture_output=True, text=True, check=True, env=clean, cwd=tree,
    ).stdout  # fmt: skip


def what_git_would_commit(tree: Path, tmp: Path) -> str:
    index = {"GIT_INDEX_FILE": str(tmp / "probe.index")}
    git(tree, "add", "-A", env=index)
    return git(tree, "write-tree", env=index).strip()


def assert_head_is_what_git_sees(tree: Path, tmp: Path) -> None:
    head = git(tree, "rev-parse", "HEAD^{tree}").strip()
    assert head == what_git_would_commit(tree, tmp), git(tree, "log", "--stat", "-3")


def test_every_commit_is_what_git_add_would_record(
    make_agent: Make, workspaces_root: Path, tmp_path: Path
) -> None:
    a, b = make_agent("@A", git_journal=True), make_agent("@B", git_journal=True)
    tree = workspaces_root / "alice" / "_id" / "p"
    a.write("x.txt", "hello\n")
    a.write("d/e/f.txt", "deep\n")
    assert_head_is_what_git_sees(tree, tmp_path)
    b.read("x.txt")
    b.edit("x.txt", "hello", "bye")
    assert_head_is_what_git_sees(tree, tmp_path)
    # Behind the tools' back: ignored and re-included files, links, an executable.
    (tree / "node_modules").mkdir()
    (tree / "node_modules" / "m.js").write_text("ignored\n")
    (tree / ".sidecar.md").write_text("ignored by the seeded .*.md\n")
    (tree / "sub" / "only").mkdir(parents=True)
    (tree / "sub" / ".gitignore").write_text("*.log\n!keep.log\n/only/\n")
    (tree / "sub" / "a.log").write_text("ignored\n")
    (tree / "sub" / "keep.log").write_text("re-included\n")
    (tree / "sub" / "only" / "z").write_text("ignored with its directory\n")
    os.symlink("x.txt", tree / "inside-link")
    os.symlink("/etc/passwd", tree / "outside-link")
    (tree / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(tree / "run.sh", 0o755)
    a.write("y.txt", "y\n")
    assert_head_is_what_git_sees(tree, tmp_path)
    oob = git(tree, "show", "--name-only", "--format=%an", "HEAD~1").split()
    assert oob[0] == "out-of-band"
    assert sorted(oob[1:]) == [
        "inside-link", "outside-link", "run.sh", "sub/.gitignore", "sub/keep.log",
    ]  # fmt: skip
    assert git(tree, "cat-file", "-p", "HEAD:outside-link") == "/etc/passwd"  # a link, unfollowed
    a.delete("d/e/f.txt")
    assert_head_is_what_git_sees(tree, tmp_path)
    os.chmod(tree / "run.sh", 0o644)
    (tree / "x.txt").unlink()
    (tree / "x.txt").mkdir()
    (tree / "x.txt" / "inner").write_text("a file became a directory\n")
    a.write("z.txt", "z\n")
    assert_head_is_what_git_sees(tree, tmp_path)
    fsck = subprocess.run(
        ["git", f"--git-dir={tree.with_name('p.git')}", "fsck", "--strict", "--full"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert fsck.returncode == 0 and fsck.stdout == "" and fsck.stderr == "", fsck
    authors = git(tree, "log", "--format=%an <%ae>").splitlines()
    assert authors[-1] == "akgentic-journal <journal@akgentic>"
    assert any(line.startswith("@B <") and line.endswith("@akgentic>") for line in authors)


WRITER = textwrap.dedent(
    """
    import sys
    from akgentic.tool.core.factory import ToolFactory
    from akgentic.tool.testing import RecordingObserver
    from akgentic_workspace import WorkspaceTool

    name, count = sys.argv[1], int(sys.argv[2])
    observer = RecordingObserver(name=name, user_id="alice")
    card = WorkspaceTool(workspace_id="p", git_journal=True)
    ToolFactory([card], observer=observer)
    write = next(t for t in card.get_tools() if t.__name__ == "workspace_write")
    for i in range(count):
        write(f"{name}/{i}.txt", f"{name} {i}\\n")
    """
)


def test_two_processes_journal_one_linear_history(workspaces_root: Path, tmp_path: Path) -> None:
    env = {**os.environ, "AKGENTIC_WORKSPACES_ROOT": str(workspaces_root)}
    count = 15
    children = [
        subprocess.Popen([sys.executable, "-c", WRITER, name, str(count)], env=env)
        for name in ("one", "two")
    ]
    for child in children:
        assert child.wait(timeout=120) == 0
    tree = workspaces_root / "alice" / "_id" / "p"
    rows = git(tree, "log", "--format=%P|%an|%s").splitlines()
    assert all(len(parents.split()) <= 1 for parents, _, _ in (r.split("|") for r in rows))
    subjects = [r.split("|")[2] for r in rows]
    for name in ("one", "two"):
        assert sorted(s for s in subjects if s.startswith(f"write: {name}/")) == sorted(
            f"write: {name}/{i}.txt" for i in range(count)
        )
    assert subjects[-1] == "init: .gitignore" and len(subjects) == 2 * count + 1
    assert_head_is_what_git_sees(tree, tmp_path)


def test_journaling_goes_on_after_git_gc_packed_the_objects(
    make_agent: Make, workspaces_root: Path, tmp_path: Path
) -> None:
    a = make_agent("@A", git_journal=True)
    tree = workspaces_root / "alice" / "_id" / "p"
    a.write("a.txt", "1\n")
    git(tree, "gc", "--quiet", "--prune=now")
    git(tree, "pack-refs", "--all")
    assert not list((tree.with_name("p.git") / "objects").glob("??/*"))  # all packed
    from akgentic_workspace import journal

    journal._REPOS.clear()  # as in a new process: the branch is read again, from the pack
    b = make_agent("@B", git_journal=True)
    b.write("b.txt", "2\n")
    a.read("a.txt")
    a.write("a.txt", "3\n")
    assert git(tree, "log", "--format=%an|%s").splitlines()[:2] == [
        "@A|write: a.txt",
        "@B|write: b.txt",
    ]
    assert_head_is_what_git_sees(tree, tmp_path)
