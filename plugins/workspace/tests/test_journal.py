"""The git journal: authors, out-of-band commits, provenance in refusals, degrading off."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from akgentic.tool.errors import RetriableError

Make = Callable[..., Any]


def history(root: Path) -> list[tuple[str, str, str]]:
    git_dir = root / "alice" / "_id" / "p.git"
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", "log", "--reverse", "--format=%an|%ae|%s", "master"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return [tuple(line.split("|", 2)) for line in out.splitlines()]  # type: ignore[misc]


def test_commits_name_the_agents_on_a_linear_master(
    make_agent: Make, workspaces_root: Path
) -> None:
    a, b = make_agent("@A", git_journal=True), make_agent("@B", git_journal=True)
    a.write("a.txt", "one\n")
    b.read("a.txt")
    b.edit("a.txt", "one", "two")
    rows = history(workspaces_root)
    assert rows[0] == ("akgentic-journal", "journal@akgentic", "init: .gitignore")
    assert rows[1] == ("@A", f"{a.observer.myAddress.agent_id}@akgentic", "write: a.txt")
    assert rows[2] == ("@B", f"{b.observer.myAddress.agent_id}@akgentic", "edit: a.txt")
    with pytest.raises(RetriableError, match="It was last written by agent '@B'"):
        a.write("a.txt", "stale\n")


def test_changes_from_outside_are_committed_out_of_band_first(
    make_agent: Make, workspaces_root: Path
) -> None:
    a, b = make_agent("@A", git_journal=True), make_agent("@B", git_journal=True)
    tree = workspaces_root / "alice" / "_id" / "p"
    a.write("f.txt", "v1\n")
    b.read("f.txt")
    (tree / "dropped.txt").write_text("from outside\n")
    (tree / "f.txt").write_text("rewritten outside\n")
    with pytest.raises(RetriableError, match="outside the workspace tools"):
        b.write("f.txt", "v2\n")
    a.write("b.txt", "mine\n")
    subjects = [row[2] for row in history(workspaces_root)]
    assert subjects[-2:] == ["out-of-band: changes from outside the tools", "write: b.txt"]
    git_dir = tree.with_name("p.git")
    shown = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", "--name-only", "--format=", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert shown == ["b.txt"]


def test_without_git_the_journal_warns_once_and_the_gate_is_unchanged(
    make_agent: Make, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with caplog.at_level(logging.WARNING, logger="akgentic_workspace.journal"):
        a = make_agent("@A", git_journal=True)
        b = make_agent("@B", workspace_id="q", git_journal=False)
    warnings = [r for r in caplog.records if r.name == "akgentic_workspace.journal"]
    assert len(warnings) == 1 and "git is not on PATH" in warnings[0].getMessage()
    a.write("a.txt", "x")
    with pytest.raises(RetriableError, match="read it before overwriting"):
        make_agent("@C", git_journal=True).write("a.txt", "y")
    assert b.card._session.journal.enabled is False
