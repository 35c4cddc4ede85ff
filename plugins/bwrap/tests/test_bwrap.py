"""What is particular to bubblewrap: selection without it, links, binds, network."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import akgentic_bwrap.plugin as bwrap_plugin
import pytest
from akgentic_bwrap import BwrapBackend

from akgentic.sandbox import (
    ResourceLimits,
    SandboxError,
    SandboxUnavailableError,
    resolve_sandbox_backend,
)

LIMITS = ResourceLimits(max_processes=32, tmp_bytes=8 * 1024**2, max_file_bytes=8 * 1024**2)


pytestmark = pytest.mark.usefixtures("needs_bwrap")


@pytest.fixture
def prepared(tmp_path: Path) -> Iterator[tuple[BwrapBackend, Path]]:
    tree = tmp_path / "tree"
    tree.mkdir()
    backend = BwrapBackend()
    backend.prepare(tree, limits=LIMITS, timeout_s=10)
    try:
        yield backend, tree
    finally:
        backend.close()


def sh(backend: BwrapBackend, script: str, cwd: str = "") -> tuple[int, str]:
    result = backend.run(["sh", "-c", script], cwd=cwd, env={}, timeout_s=20)
    return result.exit_code, result.stdout + result.stderr


def test_without_bwrap_on_path_and_no_docker_a_backend_cannot_be_chosen_and_says_what_to_install(
    register_plugin: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The resolver a workspace calls at team creation: nothing usable, nothing runs."""
    built: list[object] = []
    monkeypatch.setattr(bwrap_plugin, "_make_backend", lambda: built.append(1))
    register_plugin(bwrap_plugin, "bwrap")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    for name in (None, "bwrap"):
        with pytest.raises(SandboxUnavailableError) as info:
            resolve_sandbox_backend(name, environ={})
        message = str(info.value)
        assert "bwrap is not on PATH" in message
        assert "apt install bubblewrap" in message
        assert "pip install akgentic-docker" in message
        assert "never run unsandboxed" in message
    assert built == []


def test_with_bwrap_on_path_it_is_the_default_choice(register_plugin: Callable[..., Any]) -> None:
    register_plugin(bwrap_plugin, "bwrap")
    assert resolve_sandbox_backend(environ={}).name == "bwrap"


def test_the_host_side_never_follows_links_planted_in_the_tree(
    prepared: tuple[BwrapBackend, Path], tmp_path: Path
) -> None:
    backend, tree = prepared
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("host data", "utf-8")
    (tree / "evil").symlink_to("/etc/shadow")
    (tree / "d").symlink_to("/")
    (tree / "out").symlink_to(outside)
    code, output = sh(backend, "cat evil; ls out; echo x > out/planted; echo y > d/planted; exit 0")
    assert "host data" not in output and "keep.txt" not in output
    assert not (outside / "planted").exists() and not Path("/planted").exists()
    code, output = sh(backend, "pwd; echo z > planted", cwd="d")
    assert code != 0 and not Path("/planted").exists()
    backend.close()
    assert (outside / "keep.txt").read_text("utf-8") == "host data"
    assert (tree / "evil").is_symlink() and Path("/etc/shadow").exists()


def test_a_tree_that_is_itself_a_link_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    backend = BwrapBackend()
    with pytest.raises(SandboxError, match="not a directory"):
        backend.prepare(tmp_path / "link", limits=LIMITS, timeout_s=5)


def test_prepare_on_a_second_tree_is_refused(
    prepared: tuple[BwrapBackend, Path], tmp_path: Path
) -> None:
    backend, _tree = prepared
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(SandboxError, match="already prepared"):
        backend.prepare(other, limits=LIMITS, timeout_s=5)


def test_only_a_curated_etc_is_visible_with_a_synthesized_passwd(
    prepared: tuple[BwrapBackend, Path],
) -> None:
    backend, _tree = prepared
    _code, output = sh(backend, "ls /etc; echo ---; cat /etc/passwd")
    listing, passwd = output.split("---")
    assert "shadow" not in listing.split() and "sudoers" not in listing.split()
    assert passwd.strip().startswith("sandbox:x:65534:65534:")
    assert "root:" not in passwd


def test_extra_read_only_binds_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toolchain = tmp_path / "toolchain"
    toolchain.mkdir()
    (toolchain / "tool.txt").write_text("v1", "utf-8")
    monkeypatch.setenv("AKGENTIC_BWRAP_RO_BINDS", f"{toolchain}:/does/not/exist")
    tree = tmp_path / "tree"
    tree.mkdir()
    backend = BwrapBackend()
    backend.prepare(tree, limits=LIMITS, timeout_s=5)
    try:
        code, output = sh(backend, f"cat {toolchain}/tool.txt; echo w > {toolchain}/tool.txt")
    finally:
        backend.close()
    assert output.startswith("v1") and code != 0
    assert (toolchain / "tool.txt").read_text("utf-8") == "v1"


def test_network_on_reaches_a_host_listener(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(20)
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(server.accept()[0]), daemon=True)
    thread.start()
    tree = tmp_path / "tree"
    tree.mkdir()
    backend = BwrapBackend()
    backend.prepare(tree, limits=LIMITS.model_copy(update={"network": True}), timeout_s=5)
    port = server.getsockname()[1]
    try:
        result = backend.run(
            ["python3", "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}), 5)"],
            cwd="",
            env={},
            timeout_s=20,
        )
    finally:
        backend.close()
        thread.join(5)
        server.close()
        for connection in accepted:
            connection.close()
    assert result.exit_code == 0, result.stderr
    assert accepted


def test_the_first_run_reports_the_prepare_time_and_later_runs_do_not(
    prepared: tuple[BwrapBackend, Path],
) -> None:
    backend, _tree = prepared
    first = backend.run(["true"], cwd="", env={}, timeout_s=10)
    second = backend.run(["true"], cwd="", env={}, timeout_s=10)
    assert first.prepare_s > 0 and second.prepare_s == 0


def test_process_limits_bind_on_this_host(prepared: tuple[BwrapBackend, Path]) -> None:
    backend, _tree = prepared
    assert backend.bounds_processes
    code, output = sh(backend, "for i in $(seq 1 64); do sleep 5 & done; wait")
    assert code != 0 and "fork" in output.lower()


def test_a_dead_spawner_is_replaced_on_the_next_run(prepared: tuple[BwrapBackend, Path]) -> None:
    backend, _tree = prepared
    assert backend.run(["true"], cwd="", env={}, timeout_s=10).exit_code == 0
    spawner = backend._spawner
    assert spawner is not None
    spawner.process.kill()
    spawner.process.wait(10)
    assert backend.run(["echo", "again"], cwd="", env={}, timeout_s=10).stdout == "again\n"


_ORPHAN_SCRIPT = """
import os, tempfile
from pathlib import Path
from akgentic_bwrap import BwrapBackend
from akgentic.sandbox import ResourceLimits
tree = Path(tempfile.mkdtemp())
backend = BwrapBackend()
backend.prepare(tree, limits=ResourceLimits(max_processes=32), timeout_s=10)
script = f"hang-{os.environ['HANG_TOKEN']}.sh"
(tree / script).write_text(
    'if [ "$1" = child ]; then while :; do sleep 1; done; fi\\n'
    'sh "$0" child & setsid sh "$0" child & touch started; sh "$0" child\\n'
)
print(tree, flush=True)
backend.run(["sh", script], cwd="", env={}, timeout_s=300)
"""


def test_when_akgentic_dies_mid_run_no_process_of_the_run_survives(tmp_path: Path) -> None:
    import subprocess
    import sys
    import uuid

    from akgentic.sandbox.probes import marked_processes
    from akgentic.testing import wait_until

    token = uuid.uuid4().hex  # in the script's name, so in every sandboxed command line
    with subprocess.Popen(
        [sys.executable, "-c", _ORPHAN_SCRIPT],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "HANG_TOKEN": token},
    ) as child:
        try:
            assert child.stdout is not None
            tree = Path(child.stdout.readline().strip())

            def running() -> bool:  # the script and its three children, past the touch
                return (tree / "started").exists() and len(marked_processes(token)) >= 4

            wait_until(running, timeout=30)
        finally:
            child.kill()  # SIGKILL: no cleanup code of akgentic runs
            child.wait(10)
    wait_until(lambda: marked_processes(token) == [], timeout=10)
    assert marked_processes(token) == []


def test_empty_cgroups_of_dead_processes_are_swept_at_prepare(tmp_path: Path) -> None:
    from akgentic_bwrap.cgroup import find_pids_root

    root = find_pids_root()
    if root is None:
        pytest.skip("no writable pids cgroup hierarchy on this host")
    dead = 2**22 + 7  # above any pid_max default: no such process
    stale = root / f"akgentic-sandbox-{dead}-0"
    stale.mkdir()
    backend = BwrapBackend()
    try:
        backend.prepare(tmp_path, limits=LIMITS, timeout_s=5)
        assert not stale.exists()
    finally:
        backend.close()
        if stale.exists():
            stale.rmdir()


def test_no_nested_user_namespace_can_be_made_to_regain_capabilities(
    prepared: tuple[BwrapBackend, Path],
) -> None:
    backend, _ = prepared
    code, out = sh(backend, "unshare -U -r id -u; echo exit=$?")
    assert "exit=0" not in out and code == 0, out


def test_the_sandbox_pid_1_carries_no_host_path(prepared: tuple[BwrapBackend, Path]) -> None:
    backend, tree = prepared
    code, out = sh(backend, "tr '\\0' ' ' < /proc/1/cmdline")
    assert code == 0 and "bwrap --args " in out, out
    assert str(tree) not in out and str(tree.parent) not in out
