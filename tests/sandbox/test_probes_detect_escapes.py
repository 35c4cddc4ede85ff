"""The escape probes can fail: run on the unisolated fake backend, they say so.

Only the harmless probes run here (reading canaries, connecting to a listener): the
fake backend really is the host, so a fork bomb or a write under /etc would be real.
"""

from __future__ import annotations

import os

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


def test_the_setuid_probe_reports_a_setuid_file_left_on_the_host() -> None:
    outcome = run_probe(_probe("setuid"), FakeSandboxBackend)  # type: ignore[arg-type]
    assert not outcome.contained
    assert "kept its setuid bit on the host" in outcome.detail


def test_the_host_paths_probe_reports_a_host_path_visible_inside() -> None:
    outcome = run_probe(_probe("host-paths"), FakeSandboxBackend)  # type: ignore[arg-type]
    assert not outcome.contained
    assert "is visible inside" in outcome.detail


def test_the_devices_probe_reports_a_device_node_left_on_the_host() -> None:
    outcome = run_probe(_probe("devices"), FakeSandboxBackend)  # type: ignore[arg-type]
    if os.geteuid() != 0:  # the host refuses mknod itself: nothing to report
        assert outcome.contained
        return
    assert not outcome.contained
    assert "device node" in outcome.detail
