"""The bubblewrap backend runs the sandbox contract kit, escape probes included."""

from __future__ import annotations

from akgentic_bwrap import BwrapBackend, bwrap_unavailable_reason

from akgentic.sandbox import SandboxBackend
from akgentic.testing import SandboxBackendContract


class TestBwrapBackend(SandboxBackendContract):
    def make_backend(self) -> SandboxBackend:
        return BwrapBackend()

    def unavailable_reason(self) -> str | None:
        return bwrap_unavailable_reason()
