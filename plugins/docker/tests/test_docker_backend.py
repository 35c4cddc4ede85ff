"""What is particular to the Docker backend: the image, cold start, container cleanup."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest
from akgentic_docker import DockerBackend
from akgentic_docker.backend import LABEL
from akgentic_docker.testing import BUSYBOX_IMAGE, LocalEngine

from akgentic.sandbox import ResourceLimits, SandboxError, SandboxNotReady

LIMITS = ResourceLimits(max_processes=32, tmp_bytes=8 * 1024**2)


def test_the_image_comes_from_the_environment_or_the_constructor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AKGENTIC_SANDBOX_IMAGE", "team/tools:3")
    assert DockerBackend().image == "team/tools:3"
    assert DockerBackend(image="other:1").image == "other:1"
    monkeypatch.delenv("AKGENTIC_SANDBOX_IMAGE")
    assert DockerBackend().image == "python:3.12-slim"


def test_an_image_that_cannot_be_pulled_fails_prepare_and_nothing_runs(tmp_path: Path) -> None:
    """No registry is reachable here: the pull fails (or outlasts the budget)."""
    backend = DockerBackend(image="akgentic-no-such-image:never")
    with pytest.raises((SandboxError, SandboxNotReady)):
        backend.prepare(tmp_path, limits=LIMITS, timeout_s=20)
    with pytest.raises(SandboxError, match="before prepare"):
        backend.run(["echo", "hi"], cwd="", env={}, timeout_s=5)
    backend.close()


def test_the_cold_start_is_reported_once_apart_from_the_run(tmp_path: Path) -> None:
    backend = DockerBackend()
    backend.prepare(tmp_path, limits=LIMITS, timeout_s=60)
    try:
        first = backend.run(["true"], cwd="", env={}, timeout_s=20)
        second = backend.run(["true"], cwd="", env={}, timeout_s=20)
    finally:
        backend.close()
    assert first.exit_code == 0 and first.prepare_s > 0
    assert second.prepare_s == 0


def test_no_container_is_left_once_runs_end(tmp_path: Path, docker_engine: LocalEngine) -> None:
    backend = DockerBackend(image=BUSYBOX_IMAGE)
    backend.prepare(tmp_path, limits=LIMITS, timeout_s=60)
    try:
        backend.run(["sh", "-c", "sleep 30"], cwd="", env={}, timeout_s=1)
        backend.run(["echo", "x"], cwd="", env={}, timeout_s=20)
    finally:
        backend.close()
    client = docker.DockerClient(base_url=docker_engine.host, timeout=30)
    try:
        assert client.containers.list(all=True, filters={"label": LABEL}) == []
    finally:
        client.close()


def test_the_container_has_no_network_a_read_only_root_and_the_tree_writable(
    tmp_path: Path,
) -> None:
    backend = DockerBackend()
    backend.prepare(tmp_path, limits=LIMITS, timeout_s=60)
    try:
        result = backend.run(
            ["sh", "-c", "touch /rootfile 2>&1; echo ok > /workspace/f; ls /sys/class/net"],
            cwd="",
            env={},
            timeout_s=20,
        )
    finally:
        backend.close()
    assert "Read-only file system" in result.stdout
    assert (tmp_path / "f").read_text("utf-8") == "ok\n"
    assert result.stdout.split()[-1] == "lo"
