"""ResourceLimits, ExecResult, the bounded output capture and the in-sandbox paths."""

from __future__ import annotations

import os

import pytest
from pydantic import ValidationError

from akgentic.sandbox import (
    ExecResult,
    ResourceLimits,
    SandboxError,
    StreamCapture,
    base_environment,
    sandbox_cwd,
)
from akgentic.sandbox.capture import drain_in_thread


def test_resource_limits_have_the_documented_defaults_and_are_frozen() -> None:
    limits = ResourceLimits()
    assert (limits.cpu_s, limits.max_processes, limits.network) == (60, 256, False)
    assert limits.memory_bytes == 2 * 1024**3 and limits.output_bytes == 1024**2
    with pytest.raises(ValidationError):
        limits.cpu_s = 1  # type: ignore[misc]
    with pytest.raises(ValidationError, match="extra"):
        ResourceLimits(cpus=2)  # type: ignore[call-arg]


def test_an_exec_result_is_ok_only_for_a_clean_zero_exit() -> None:
    assert ExecResult(exit_code=0).ok
    assert not ExecResult(exit_code=124, timed_out=True).ok
    assert not ExecResult(exit_code=1).ok


def test_a_capture_under_its_limit_keeps_everything() -> None:
    capture = StreamCapture(100)
    capture.feed(b"hello ")
    capture.feed(b"world")
    assert (capture.text(), capture.truncated, capture.total) == ("hello world", False, 11)


def test_a_capture_over_its_limit_keeps_the_first_quarter_and_last_three_quarters() -> None:
    capture = StreamCapture(16)
    for i in range(100):
        capture.feed(f"{i:03d}|".encode())
    text = capture.text()
    assert capture.truncated and capture.total == 400 and len(text) == 16
    assert text.startswith("000|") and text.endswith("097|098|099|")


def test_a_drained_pipe_flood_stays_bounded_and_the_writer_never_blocks() -> None:
    read_fd, write_fd = os.pipe()
    capture = StreamCapture(1024)
    reader = drain_in_thread(read_fd, capture, "test-drain")
    chunk = b"x" * 65536
    for _ in range(160):  # 10 MiB: far more than a pipe buffer holds
        os.write(write_fd, chunk)
    os.close(write_fd)
    reader.join(10)
    assert not reader.is_alive()
    assert capture.total == 160 * 65536 and len(capture.text()) == 1024


def test_undecodable_bytes_are_replaced() -> None:
    capture = StreamCapture(64)
    capture.feed(b"a\xffb")
    assert capture.text() == "a\ufffdb"


@pytest.mark.parametrize(
    ("cwd", "inside"),
    [("", "/workspace"), (".", "/workspace"), ("a/b", "/workspace/a/b"),
     ("/workspace/a", "/workspace/a"), ("a/../b", "/workspace/b")],
)  # fmt: skip
def test_a_relative_cwd_maps_under_the_mount_point(cwd: str, inside: str) -> None:
    assert sandbox_cwd(cwd) == inside


@pytest.mark.parametrize("cwd", ["..", "../x", "a/../../x", "/etc", "a\x00"])
def test_a_cwd_leaving_the_tree_is_refused(cwd: str) -> None:
    with pytest.raises(SandboxError):
        sandbox_cwd(cwd)


def test_the_base_environment_inherits_nothing_from_the_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    env = base_environment({"EXTRA": "1"}, run_id="abcd1234")
    assert "OPENAI_API_KEY" not in env
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin"
    assert env["AKGENTIC_RUN_ID"] == "abcd1234" and env["EXTRA"] == "1"
    assert env["GIT_CONFIG_VALUE_0"] == "*"
    with pytest.raises(SandboxError):
        base_environment({"A=B": "x"})
