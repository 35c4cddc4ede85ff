"""Where trees live: the layout, workspace_id rules, metadata leaves, the sharing gate."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace import WorkspaceAttached, WorkspaceTool
from akgentic_workspace.paths import encode_metadata_value, metadata_leaf
from pydantic import ValidationError

from akgentic.tool.errors import RetriableError

Make = Callable[..., Any]


@pytest.mark.parametrize("bad", ["Customer Notes", "search.index", "_meta", "x.git", "", ".hidden"])
def test_bad_workspace_ids_fail_at_construction(bad: str) -> None:
    with pytest.raises(ValidationError):
        WorkspaceTool(workspace_id=bad)


def test_an_id_and_metadata_keys_together_fail_at_construction() -> None:
    with pytest.raises(ValidationError, match="exclusive"):
        WorkspaceTool(workspace_id="a", workspace_metadata_keys=["k"])


def test_unknown_card_keys_are_refused_by_name() -> None:
    with pytest.raises(ValidationError, match="workspace_rag_enabled"):
        WorkspaceTool.model_validate({"workspace_rag_enabled": True})


def test_the_default_tree_is_the_team_of_the_owner(make_agent: Make, workspaces_root: Path) -> None:
    a = make_agent(workspace_id=None)
    team = a.observer.team_id
    assert (workspaces_root / "alice" / "_team" / str(team)).is_dir()
    [event] = a.observer.events
    assert isinstance(event, WorkspaceAttached)
    assert event.workspace_path == f"alice/_team/{team}"
    assert str(event.agent_id) == str(a.observer.myAddress.agent_id)


def test_an_anonymous_team_owns_its_tree_under_anonymous(
    make_agent: Make, workspaces_root: Path
) -> None:
    make_agent(user_id=None)
    assert (workspaces_root / "anonymous" / "_id" / "p").is_dir()


def test_metadata_leaves_join_keys_and_percent_encode_values() -> None:
    leaf = metadata_leaf(
        ["customer_id", "case_id", "customer_id"], {"customer_id": "ACME", "case_id": "4_2"}
    )
    assert leaf == "customer_id-ACME__case_id-4%5F2"
    assert encode_metadata_value("é/") == "%C3%A9%2F"
    with pytest.raises(ValueError, match="no key"):
        metadata_leaf(["missing"], {"a": "b"})
    with pytest.raises(ValueError, match="empty"):
        metadata_leaf(["a"], {"a": ""})


def test_a_shared_request_the_platform_does_not_permit_fails_the_bind(
    make_agent: Make, workspaces_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError, match="does not permit"):
        make_agent(workspace_id="notes", workspace_sharable=True)
    assert not (workspaces_root / "_shared").exists()
    monkeypatch.setenv("AKGENTIC_WORKSPACE_SHARED_KINDS", " ID ")
    make_agent(workspace_id="notes", workspace_sharable=True)
    assert (workspaces_root / "_shared" / "_id" / "notes").is_dir()
    monkeypatch.setenv("AKGENTIC_WORKSPACE_SHARED_KINDS", "meta,metadata")
    with pytest.raises(ValueError, match="is not a workspace kind; accepted"):
        make_agent(workspace_id="other")


def test_a_bad_owner_fails_the_bind(make_agent: Make) -> None:
    for owner in ("_shared", "a/b", ".x"):
        with pytest.raises(ValueError):
            make_agent(user_id=owner)


def test_read_only_serves_exactly_the_read_tools_and_no_exec(make_agent: Make) -> None:
    a = make_agent(read_only=True, workspace_exec=True)
    assert list(a.tools) == [
        "workspace_read", "workspace_list", "workspace_glob", "workspace_grep", "workspace_view",
    ]  # fmt: skip
    assert a.card._exec_local is None and a.card._exec_actor is None


def test_the_full_tool_order(make_agent: Make) -> None:
    a = make_agent()
    assert list(a.tools) == [
        "workspace_read", "workspace_list", "workspace_glob", "workspace_grep", "workspace_view",
        "workspace_write", "workspace_delete", "workspace_edit", "workspace_multi_edit",
        "workspace_patch", "workspace_mkdir", "workspace_rmdir",
    ]  # fmt: skip


def test_resources_are_seeded_once_and_never_clobber_an_edit(
    make_agent: Make, workspaces_root: Path
) -> None:
    from akgentic_workspace import Resource

    a = make_agent(resources=[Resource(file_name="brief.md", content="x")])
    a.read("brief.md")
    a.write("brief.md", "edited")
    make_agent("@B", resources=[Resource(file_name="brief.md", content="x")])
    assert (workspaces_root / "alice" / "_id" / "p" / "brief.md").read_text() == "edited"
    with pytest.raises(ValidationError):
        Resource(file_name="img.png", file_type="image", content="not base64!")


def test_old_staging_files_are_swept_at_bind_and_user_files_kept(
    make_agent: Make, workspaces_root: Path
) -> None:
    import os
    import time

    tree = workspaces_root / "alice" / "_id" / "p"
    tree.mkdir(parents=True)
    stale = tree / f".a.txt.{'ab' * 16}.tmp"
    stale.write_text("x")
    (tree / ".notes.tmp").write_text("mine")
    old = time.time() - 60
    os.utime(stale, (old, old))
    make_agent()
    assert sorted(p.name for p in tree.iterdir()) == [".notes.tmp"]


def test_listing_glob_and_grep_render_as_documented(make_agent: Make) -> None:
    a = make_agent()
    a.write("b.txt", "hello\n")
    a.write("src/m.py", "def hello():\n    pass\n")
    assert a.list("") == "src/\nb.txt (6 bytes)"
    assert a.list("", depth=0).splitlines()[0] == "."
    assert "└── m.py (22 bytes)" in a.list("", depth=0)
    assert a.glob("**.py") == "src/m.py"
    assert a.glob("*.TXT") == "b.txt"
    assert a.glob("nothing*") == "No files found."
    assert set(a.grep("hello").splitlines()) == {"b.txt:1: hello", "src/m.py:1: def hello():"}
    assert a.grep("hello", "", "*.py") == "src/m.py:1: def hello():"
    assert a.grep("absent") == "No matches found."
    with pytest.raises(RetriableError, match=r"Directory not found: b\.txt"):
        a.list("b.txt")


def test_a_tree_is_private_to_the_user_akgentic_runs_as(
    make_agent: Make, workspaces_root: Path
) -> None:
    """Nobody else may reach into a tree (a sandbox run writes there as this user)."""
    old = workspaces_root / "alice" / "_id" / "old"
    old.mkdir(parents=True, mode=0o755)
    old.chmod(0o755)  # made by an earlier version, open to every user
    make_agent(workspace_id="fresh")
    make_agent(name="@B", workspace_id="old")
    for tree in (workspaces_root / "alice" / "_id" / "fresh", old):
        assert stat.S_IMODE(tree.stat().st_mode) == 0o700
