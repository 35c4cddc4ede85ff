"""Fixtures of the MongoDB plugin tests.

No MongoDB server can run on the machines these tests are written for, so most
tests run against mongomock (see :mod:`akgentic_mongo.testing`). Tests marked
``mongo_server`` use a real server named by ``$AKGENTIC_TEST_MONGO_URL`` and are
skipped, with that reason, when it is unset.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit
from uuid import uuid4

import pytest
from akgentic_mongo.testing import init_mongomock_store, reset_mongomock_servers

MONGO_ENV = "AKGENTIC_TEST_MONGO_URL"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"mongo_server: needs a real MongoDB server (${MONGO_ENV})")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if os.environ.get(MONGO_ENV):
        return
    skip = pytest.mark.skip(reason=f"no MongoDB server: set {MONGO_ENV} to run this test")
    for item in items:
        if item.get_closest_marker("mongo_server") is not None:
            item.add_marker(skip)


@pytest.fixture
def mock_url() -> Iterator[str]:
    """An initialised, empty mongomock database for one test."""
    url = f"mongodb://mongomock.test:27017/akt_{uuid4().hex[:16]}"
    init_mongomock_store(url)
    yield url
    reset_mongomock_servers()


@pytest.fixture
def real_mongo_url() -> Iterator[str]:
    """A fresh database on the real server (dropped afterwards); not initialised."""
    import pymongo

    server = os.environ[MONGO_ENV]
    name = f"akt_{uuid4().hex[:16]}"
    yield urlunsplit(urlsplit(server)._replace(path=f"/{name}"))
    client: pymongo.MongoClient[dict[str, object]] = pymongo.MongoClient(server)
    try:
        client.drop_database(name)
    finally:
        client.close()
