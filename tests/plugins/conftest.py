"""Shared fixtures for plugin-system tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from akgentic.plugins import PluginHost, use_host
from akgentic.testing.plugins import FakeDistributions

BROKEN_SOURCE = "raise RuntimeError('boom at import')\n"

GOOD_SOURCE = """
from akgentic.plugins import hookimpl, VectorBackendSpec

@hookimpl
def akgentic_vector_backends():
    return [VectorBackendSpec(name="fake-vectors", factory=dict)]
"""


@pytest.fixture
def discovering_host(
    fake_distributions: FakeDistributions,
) -> Iterator[Callable[..., PluginHost]]:
    """Build hosts that really discover entry points, with a chosen environment."""

    def make(**env: str) -> PluginHost:
        merged = {k: v for k, v in os.environ.items() if not k.startswith("AKGENTIC_")}
        merged.update(env)
        return PluginHost(env=merged)

    yield make


@pytest.fixture
def installed_broken_and_good(fake_distributions: FakeDistributions) -> FakeDistributions:
    """Two fake distributions: one whose module raises at import, one that works."""
    fake_distributions.add(
        "akgentic-broken",
        version="0.0.1",
        entry_points={"broken": "akgentic_broken"},
        modules={"akgentic_broken": BROKEN_SOURCE},
    )
    fake_distributions.add(
        "akgentic-goodfake",
        version="2.0",
        entry_points={"goodfake": "akgentic_goodfake"},
        modules={"akgentic_goodfake": GOOD_SOURCE},
    )
    return fake_distributions


@pytest.fixture
def as_process_host() -> Callable[[PluginHost], object]:
    """Install a host as the process host (for CLI code that calls get_host())."""
    return use_host
