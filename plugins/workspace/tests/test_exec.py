"""Exec through the card on bubblewrap: output, budgets, the lease, run ids, containment."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace import WorkspaceExec

from akgentic.plugins import PluginInfo
from akgentic.sandbox import SandboxUnavailableError
from akgentic.testing.waiting import poll_until
from akgentic.tool.errors import RetriableError

Make = Callable[..., Any]


@pytest.fixture(autouse=True)
def _bwrap(register_plugin: Callable[..., PluginInfo]) -> None:
    import importlib

    from akgentic_workspace import plugin

    register_plugin(plugin, "workspace")
    register_plugin(importlib.import_module("akgentic_bwrap.plugin"), "bwrap")


@pytest.fixture
def tree(workspaces_root: Path) -> Path:
    return workspaces_root / "alice" / "_id" / "p"


def test_a_command_runs_and_its_output_returns(make_agent: Make) -> None:
    a = make_agent(workspace_exec=True)
    out = a.exec("echo hello world")
    first, *_ = out.splitlines()
    assert first.startswith("Run ") and first.endswith(" - exit_code: 0 (OK)")
    assert len(first.split()[1]) == 8
    assert "**stdout**\nhello world" in out and "**stderr**" not in out


def test_commands_are_validated_and_never_go_through_a_shell(make_agent: Make) -> None:
    a = make_agent(workspace_exec=True)
    assert "is not in the allowed commands list" in a.exec("psql -c 1")
    assert "could not be parsed" in a.exec("echo 'x")
    assert "**stdout**\na && echo b" in a.exec("echo a && echo b")


def test_a_command_past_its_budget_returns_124_with_partial_output(make_agent: Make) -> None:
    a = make_agent(workspace_exec=WorkspaceExec(timeout_s=1))
    began = time.monotonic()
    out = a.exec("bash -c 'echo start; sleep 100 & sleep 100'")
    assert time.monotonic() - began < 5
    assert "exit_code: 124 (TIMED OUT)" in out
    assert "start" in out and "exceeded its 1s budget" in out


def test_files_written_by_a_run_land_in_the_tree_only(make_agent: Make, tree: Path) -> None:
    a = make_agent(workspace_exec=True)
    out = a.exec("bash -c 'echo made > made.txt; echo x > /etc/evil; echo y > ../escaped'")
    assert (tree / "made.txt").read_text() == "made\n"
    assert not Path("/etc/evil").exists()
    assert not (tree.parent / "escaped").exists()
    assert "exit_code: 1 (FAILED)" in out
    with pytest.raises(RetriableError, match="read it before overwriting"):
        a.write("made.txt", "agent")  # a run's output is not a view


def test_the_network_is_off_and_the_host_environment_absent(
    make_agent: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "canary-value")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        a = make_agent(workspace_exec=True)
        env = a.exec("bash -c 'env; echo home > $HOME/x && echo home-ok'")
        assert "canary-value" not in env and "home-ok" in env
        probe = a.exec(f"bash -c 'echo > /dev/tcp/127.0.0.1/{port} && echo CONNECTED'")
        assert "CONNECTED" not in probe
    finally:
        listener.close()


@pytest.fixture
def slow(make_agent: Make) -> Iterator[Any]:
    yield make_agent("@A", workspace_exec=WorkspaceExec(poll_attempts=0, timeout_s=10))


def test_a_running_command_holds_the_tree_against_changes_not_reads(
    make_agent: Make, slow: Any, tree: Path
) -> None:
    b = make_agent("@B", workspace_exec=True)
    b.write("seen.txt", "x")
    handed = slow.exec("bash -c 'sleep 2; echo done'")
    run_id = handed.split()[1]
    assert "still in progress" in handed
    with pytest.raises(RetriableError, match=f"exec run {run_id} is in progress \\(agent '@A'\\)"):
        b.write("new.txt", "y")
    assert "x" in b.read("seen.txt")
    busy = b.exec("echo hi")
    assert "another command is running" in busy and run_id not in busy and "@A" not in busy
    unknown = b.exec_result(run_id)
    assert f"Unknown run id '{run_id}'" in unknown
    results: list[str] = []

    def finished() -> bool:
        results.append(slow.exec_result(run_id))
        return "still in progress" not in results[-1]

    poll_until(finished, 20, interval=0.1)
    assert results[-1].startswith(f"Run {run_id} - exit_code: 0 (OK)")
    assert b.write("new.txt", "y") == "Written: new.txt"
    assert "Unknown run id 'deadbeef'" in slow.exec_result("deadbeef")


def test_a_run_is_committed_by_its_agent_as_one_commit(make_agent: Make, tree: Path) -> None:
    import subprocess

    a = make_agent(workspace_exec=True, git_journal=True)
    a.exec("bash -c 'echo 1 > one.txt; echo 2 > two.txt'")
    git_dir = tree.with_name("p.git")
    log = subprocess.run(
        ["git", f"--git-dir={git_dir}", "log", "-1", "--format=%an|%s|%b"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert log.startswith("@A|exec: 2 files|bash -c")


def test_an_unknown_backend_fails_the_bind_listing_backends(make_agent: Make) -> None:
    with pytest.raises(SandboxUnavailableError, match="bwrap"):
        make_agent(workspace_exec=WorkspaceExec(backend="nope"))
