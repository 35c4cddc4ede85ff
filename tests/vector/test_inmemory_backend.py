"""The built-in ``inmemory`` backend runs the vector backend contract kit."""

from __future__ import annotations

from typing import Any

import pytest

from akgentic.testing import VectorBackendContract
from akgentic.vector.engine import InMemoryBackend, InMemoryStorage


class TestInMemoryBackend(VectorBackendContract):
    supports_state = True

    @pytest.fixture
    def make_backend(self) -> Any:
        storage = InMemoryStorage()

        def make(team_id: str | None, tenant: str | None = None) -> InMemoryBackend:
            return InMemoryBackend(storage, team_id=team_id, tenant=tenant)

        return make
