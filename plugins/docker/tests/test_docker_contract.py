"""The Docker backend runs the sandbox contract kit against a real (private) engine."""

from __future__ import annotations

import os
from typing import ClassVar

from akgentic_docker import DockerBackend, docker_unavailable_reason

from akgentic.sandbox import SandboxBackend
from akgentic.testing import SandboxBackendContract


class TestDockerBackend(SandboxBackendContract):
    """The command runs as the host user's uid (as root here, that is uid 0 without
    capabilities), so the kit's "not uid 0" check applies only to a non-root host."""

    expect_non_root_uid: ClassVar[bool] = os.getuid() != 0

    def make_backend(self) -> SandboxBackend:
        return DockerBackend()

    def unavailable_reason(self) -> str | None:
        return docker_unavailable_reason()
