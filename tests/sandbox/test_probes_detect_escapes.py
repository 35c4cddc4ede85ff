"""The escape probes can fail: run on the unisolated fake backend, they say so.

Only the harmless probes run here (reading canaries, connecting to a listener): the
fake backend really is the host, so a fork bomb or a write under /etc would be real.
"""

from __future__ import annotations

from akgentic.sandbox.probes import PROBES, run_probe
from akgentic.testing import FakeSandboxBackend


def _probe(name: str) -> object:
    return next(p for p in PROBES if p.name == name)


def test_the_read_probe_reports_a_backend_that_lets_host_files_be_read() -> None:
    outcome = run_probe(_probe("read-secrets"), FakeSandboxBackend)  # type: ignore[arg-type]
    assert not outcome.contained
    assert "a host file outside the tree was read" in outcome.detail


def test_the_network_probe_reports_a_backend_that_reaches_a_host_listener() -> None:
    outcome = run_probe(_probe("network"), FakeSandboxBackend)  # type: ignore[arg-type]
    assert not outcome.contained
    assert "accepted a connection" in outcome.detail
