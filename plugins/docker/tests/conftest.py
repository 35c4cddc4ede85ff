"""A private Docker engine for the whole session, with the busybox image imported.

Where no engine can start (no docker.io, no busybox, not root) every Docker test
skips with the reason, except under ``CI=true`` where that is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from akgentic_docker.testing import BUSYBOX_IMAGE, EngineUnavailable, LocalEngine


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[LocalEngine]:
    """The started engine; DOCKER_HOST and AKGENTIC_SANDBOX_IMAGE point at it meanwhile."""
    engine = LocalEngine()
    try:
        engine.start()
    except EngineUnavailable as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{exc} (CI=true: the Docker tests must run)")
        pytest.skip(str(exc))
    saved = {key: os.environ.get(key) for key in ("DOCKER_HOST", "AKGENTIC_SANDBOX_IMAGE")}
    os.environ["DOCKER_HOST"] = engine.host
    os.environ["AKGENTIC_SANDBOX_IMAGE"] = BUSYBOX_IMAGE
    try:
        yield engine
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        engine.stop()


@pytest.fixture(autouse=True)
def _engine_for_every_test(docker_engine: LocalEngine) -> LocalEngine:
    return docker_engine
