"""SandboxBackendContract: what every sandbox backend must hold, as one pytest class.

A backend proves it meets :class:`akgentic.sandbox.SandboxBackend` by subclassing
this class in its test suite::

    from akgentic.testing import SandboxBackendContract

    class TestMyBackend(SandboxBackendContract):
        def make_backend(self):
            return MyBackend()

        def unavailable_reason(self):
            return my_backend_unavailable_reason()   # None when it can run here

Where the host cannot run the backend the tests skip with that reason, except under
``CI=true`` where that is a failure. Every case gets a fresh tree (with the
``.git``/``.index`` siblings a workspace has beside it) and bounded waits; the escape
probes of :mod:`akgentic.sandbox.probes` run as one parametrized test each.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from akgentic.sandbox import (
    TIMEOUT_EXIT_CODE,
    ExecResult,
    ResourceLimits,
    SandboxBackend,
    SandboxError,
)
from akgentic.sandbox.probes import PROBE_LIMITS, PROBES, Probe, marked_processes, run_probe
from akgentic.testing.waiting import poll_until, wait_until

__all__ = ["SandboxBackendContract"]

_MIB = 1024**2
_SIBLING_CANARY = f"journal-{uuid.uuid4().hex}"
# Wall-clock room for setup on a busy host; the command itself is held to budget + 2 s.
_SLACK_S = 15.0


def _wait_until_gone(token: str, within_s: float) -> list[int]:
    """Wait up to ``within_s`` for the processes marked with ``token`` to end; those left."""
    left: list[int] = []

    def gone() -> bool:
        left[:] = marked_processes(token)
        return not left

    poll_until(gone, within_s, interval=0.05)
    return left


class SandboxBackendContract:
    """The behaviour every sandbox backend must show (subclass and give a backend)."""

    #: Limits of the ordinary cases (the probes use their own, tighter ones).
    limits: ClassVar[ResourceLimits] = PROBE_LIMITS.model_copy(update={"output_bytes": 256 * 1024})
    #: Whether the command must run as a uid other than 0 (see the backend's docs).
    expect_non_root_uid: ClassVar[bool] = True

    def make_backend(self) -> SandboxBackend:
        """A new, unprepared backend instance."""
        raise NotImplementedError

    def unavailable_reason(self) -> str | None:
        """Why the backend cannot run on this host, or None when it can."""
        return None

    # -- fixtures ---------------------------------------------------------
    @pytest.fixture
    def runnable(self) -> None:
        """Skip (or, under CI=true, fail) where this host cannot run the backend."""
        reason = self.unavailable_reason()
        if reason is None:
            return
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true: the sandbox backend must run here)")
        pytest.skip(reason)

    @pytest.fixture
    def tree(self, tmp_path: Path) -> Path:
        """A fresh tree with a workspace's sibling directories beside it."""
        tree = tmp_path / "leaf"
        tree.mkdir()
        (tmp_path / "leaf.git").mkdir()
        (tmp_path / "leaf.git" / "HEAD").write_text(_SIBLING_CANARY, "utf-8")
        (tmp_path / "leaf.index").mkdir()
        return tree

    @pytest.fixture
    def backend(self, runnable: None, tree: Path) -> Iterator[SandboxBackend]:
        """A backend prepared on ``tree``, closed afterwards."""
        backend = self.make_backend()
        backend.prepare(tree, limits=self.limits, timeout_s=120)
        try:
            yield backend
        finally:
            backend.close()

    def sh(self, backend: SandboxBackend, script: str, timeout_s: float = 20.0) -> ExecResult:
        """Run ``sh -c script`` at the tree root."""
        return backend.run(["sh", "-c", script], cwd="", env={}, timeout_s=timeout_s)

    # -- basics -----------------------------------------------------------
    def test_echo_prints_hi_with_exit_code_zero_and_empty_stderr(
        self, backend: SandboxBackend
    ) -> None:
        result = backend.run(["echo", "hi"], cwd="", env={}, timeout_s=20)
        assert (result.exit_code, result.stdout, result.stderr) == (0, "hi\n", "")
        assert not result.timed_out and not result.stdout_truncated
        assert result.started_at > 0 and result.duration_s > 0

    def test_exit_codes_and_stderr_propagate(self, backend: SandboxBackend) -> None:
        result = self.sh(backend, "echo oops >&2; exit 3")
        assert (result.exit_code, result.stderr, result.stdout) == (3, "oops\n", "")

    def test_a_command_killed_by_a_signal_exits_128_plus_n(self, backend: SandboxBackend) -> None:
        result = self.sh(backend, "kill -9 $$")
        assert result.exit_code == 128 + 9
        assert not result.timed_out

    def test_argv_is_passed_literally_without_a_shell(self, backend: SandboxBackend) -> None:
        result = backend.run(["echo", "$HOME", "a;b", "*"], cwd="", env={}, timeout_s=20)
        assert result.stdout == "$HOME a;b *\n"

    def test_cwd_is_honoured_relative_to_the_tree(
        self, backend: SandboxBackend, tree: Path
    ) -> None:
        (tree / "sub" / "deeper").mkdir(parents=True)
        result = backend.run(["pwd"], cwd="sub/deeper", env={}, timeout_s=20)
        assert result.stdout == "/workspace/sub/deeper\n"
        with pytest.raises(SandboxError):
            backend.run(["pwd"], cwd="../elsewhere", env={}, timeout_s=20)

    def test_prepare_is_idempotent(self, backend: SandboxBackend, tree: Path) -> None:
        backend.prepare(tree, limits=self.limits, timeout_s=60)
        assert backend.run(["echo", "again"], cwd="", env={}, timeout_s=20).stdout == "again\n"

    def test_run_before_prepare_raises_a_sandbox_error(self, runnable: None) -> None:
        backend = self.make_backend()
        try:
            with pytest.raises(SandboxError):
                backend.run(["echo", "hi"], cwd="", env={}, timeout_s=5)
        finally:
            backend.close()

    def test_undecodable_output_bytes_are_replaced(self, backend: SandboxBackend) -> None:
        result = self.sh(backend, "printf 'a\\377b'")
        assert result.stdout == "a\ufffdb"

    def test_the_environment_is_fresh_and_extra_variables_arrive(
        self, backend: SandboxBackend, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        canary = f"canary-{uuid.uuid4().hex}"
        monkeypatch.setenv("AKGENTIC_KIT_SECRET", canary)
        result = backend.run(["env"], cwd="", env={"AKGENTIC_RUN_ID": "r1"}, timeout_s=20)
        assert canary not in result.stdout
        lines = set(result.stdout.splitlines())
        assert {"AKGENTIC_RUN_ID=r1", "HOME=/home/sandbox", "LC_ALL=C.UTF-8"} <= lines

    # -- tree ---------------------------------------------------------------
    def test_files_written_in_the_tree_appear_on_the_host_and_the_host_can_replace_them(
        self, backend: SandboxBackend, tree: Path
    ) -> None:
        assert self.sh(backend, "mkdir -p out && echo made > out/f.txt").exit_code == 0
        assert (tree / "out" / "f.txt").read_text("utf-8") == "made\n"
        (tree / "out" / "f.txt").write_text("host\n", "utf-8")
        assert self.sh(backend, "cat out/f.txt").stdout == "host\n"

    def test_siblings_and_other_host_directories_are_invisible(
        self, backend: SandboxBackend, tree: Path
    ) -> None:
        result = self.sh(
            backend,
            f"ls -a /workspace/..; ls '{tree.parent}' 2>&1; cat '{tree.parent}/leaf.git/HEAD' 2>&1;"
            " exit 0",
        )
        listed = set(result.stdout.split())
        assert not listed & {"leaf.git", "leaf.index"}
        assert _SIBLING_CANARY not in result.stdout

    def test_a_file_in_the_sandbox_temp_dir_stays_private(self, backend: SandboxBackend) -> None:
        name = f"akg-kit-{uuid.uuid4().hex}"
        assert (
            self.sh(backend, f'echo x > "$TMPDIR/{name}" && cat "$TMPDIR/{name}"').stdout == "x\n"
        )
        assert not (Path("/tmp") / name).exists()

    # -- privilege --------------------------------------------------------
    def test_the_command_runs_without_capabilities_and_not_as_root(
        self, backend: SandboxBackend
    ) -> None:
        result = self.sh(backend, "id -u; grep -E '^(CapEff|NoNewPrivs):' /proc/self/status")
        lines = result.stdout.split()
        assert "0000000000000000" in lines
        assert lines[lines.index("NoNewPrivs:") + 1] == "1"
        if self.expect_non_root_uid:
            assert lines[0] != "0"

    # -- processes and limits ---------------------------------------------
    def test_host_processes_are_invisible(self, backend: SandboxBackend) -> None:
        result = self.sh(backend, "ls /proc")
        pids = [int(p) for p in result.stdout.split() if p.isdigit()]
        assert 0 < len(pids) < 20  # its own pid namespace: a handful, not the host's

    def test_a_memory_hog_fails_harmlessly(self, backend: SandboxBackend) -> None:
        result = self.sh(
            backend, "x=$(head -c 900000000 /dev/zero | tr '\\000' a); echo ${#x}", timeout_s=30
        )
        assert result.exit_code != 0 or result.stdout.strip() != "900000000"

    def test_an_oversize_file_stops_at_the_file_size_limit(
        self, backend: SandboxBackend, tree: Path
    ) -> None:
        cap = self.limits.max_file_bytes
        self.sh(backend, f"dd if=/dev/zero of=big bs=1048576 count={cap // _MIB * 2}")
        assert (tree / "big").stat().st_size <= cap

    # -- time and kill ----------------------------------------------------
    def test_a_timeout_gives_124_with_partial_output(self, backend: SandboxBackend) -> None:
        begin = time.monotonic()
        result = self.sh(backend, "echo before; sleep 30; echo after", timeout_s=1)
        assert result.duration_s < 1 + 2 and time.monotonic() - begin < 1 + _SLACK_S
        assert (result.exit_code, result.timed_out) == (TIMEOUT_EXIT_CODE, True)
        assert result.stdout == "before\n"

    def test_background_and_setsid_processes_do_not_survive_a_timeout(
        self, backend: SandboxBackend, tree: Path
    ) -> None:
        token = uuid.uuid4().hex
        (tree / f"hang-{token}.sh").write_text(
            'if [ "$1" = child ]; then while :; do sleep 1; done; fi\n'
            'sh "$0" child & setsid sh "$0" child & ( sh "$0" child & ) &\n'
            'sh "$0" child\n',
            "utf-8",
        )
        begin = time.monotonic()
        result = backend.run(["sh", f"hang-{token}.sh"], cwd="", env={}, timeout_s=1)
        assert result.duration_s < 1 + 2 and time.monotonic() - begin < 1 + _SLACK_S
        assert result.timed_out and result.exit_code == TIMEOUT_EXIT_CODE
        assert _wait_until_gone(token, 3) == []

    def test_kill_from_another_thread_ends_a_run_promptly(
        self, backend: SandboxBackend, tree: Path
    ) -> None:
        token = uuid.uuid4().hex
        (tree / "started").unlink(missing_ok=True)
        results: list[ExecResult] = []
        runner = threading.Thread(
            target=lambda: results.append(
                self.sh(backend, f"touch started; sleep 60 # {token}", timeout_s=60)
            )
        )
        runner.start()
        wait_until((tree / "started").exists, timeout=30)
        begin = time.monotonic()
        backend.kill()
        runner.join(15)
        assert not runner.is_alive() and time.monotonic() - begin < 15
        assert results[0].killed and results[0].exit_code != 0
        assert _wait_until_gone(token, 3) == []

    def test_kill_when_idle_is_a_no_op(self, backend: SandboxBackend) -> None:
        backend.kill()
        backend.kill()
        assert backend.run(["echo", "still"], cwd="", env={}, timeout_s=20).stdout == "still\n"

    # -- output -----------------------------------------------------------
    def test_a_flood_is_truncated_with_head_and_tail_kept(self, backend: SandboxBackend) -> None:
        limit = self.limits.output_bytes
        result = self.sh(
            backend, "echo HEAD; yes filler-line | head -c 20000000; echo; echo TAIL", timeout_s=60
        )
        assert result.exit_code == 0 and result.stdout_truncated
        assert result.stdout.startswith("HEAD\n") and result.stdout.endswith("TAIL\n")
        assert len(result.stdout.encode()) <= limit

    # -- escape probes ----------------------------------------------------
    @pytest.mark.parametrize("probe", PROBES, ids=[p.name for p in PROBES])
    def test_the_escape_probe_is_contained(self, runnable: None, probe: Probe) -> None:
        outcome = run_probe(probe, self.make_backend)
        assert outcome.contained, f"{probe.name}: {outcome.detail}"
