"""What the bubblewrap tests share: the check that bubblewrap can run here.

Without it (no ``bwrap`` binary, no user namespaces) a test that needs it skips with
the reason, except under ``CI=true``, where the tests must run and that is a failure.
"""

from __future__ import annotations

import os

import pytest
from akgentic_bwrap import bwrap_unavailable_reason


@pytest.fixture
def needs_bwrap() -> None:
    """Skip (fail under ``CI=true``) when bubblewrap cannot run on this machine."""
    reason = bwrap_unavailable_reason()
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true: bubblewrap must run here)")
        pytest.skip(reason)
