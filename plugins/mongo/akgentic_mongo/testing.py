"""A mongomock-backed MongoEventStore, for tests on machines without a MongoDB server.

``open_mongomock_store(url)`` behaves like ``MongoEventStore.from_url(url)``
except that the "server" is an in-memory mongomock store shared by every
handle opened in this process on the same host, so a second handle sees the
first one's writes. Nothing survives the process, and mongomock has no
transactions: the store runs its standalone (no-transaction) code paths.

Needs ``pip install mongomock`` (part of this plugin's ``[dev]`` extra).
"""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import urlsplit

from akgentic_mongo.store import MongoEventStore, ensure_schema
from akgentic_mongo.url import parse_mongo_url

__all__ = ["init_mongomock_store", "open_mongomock_store", "reset_mongomock_servers"]

_servers: dict[str, Any] = {}
_server_locks: dict[str, threading.Lock] = {}
_lock = threading.Lock()


def _mongomock_client(url: str) -> tuple[Any, str]:
    try:
        import mongomock
        from mongomock.store import ServerStore
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the mongomock test double needs: pip install mongomock") from exc
    target = parse_mongo_url(url)
    host = urlsplit(url).netloc.rpartition("@")[2] or "localhost"
    with _lock:
        server = _servers.setdefault(host, ServerStore())  # type: ignore[no-untyped-call]
    return mongomock.MongoClient(_store=server), target.database


def init_mongomock_store(url: str) -> None:
    """Create the indexes in the in-memory database the URL names."""
    client, database = _mongomock_client(url)
    ensure_schema(client[database])


def open_mongomock_store(url: str) -> MongoEventStore:
    """A store on the in-memory database the URL names (initialise it first)."""
    client, database = _mongomock_client(url)
    host = urlsplit(url).netloc.rpartition("@")[2] or "localhost"
    with _lock:
        team_lock = _server_locks.setdefault(host, threading.Lock())
    # mongomock copies documents without locking: two threads updating one team
    # document at once can break it, which a real server never does.
    return MongoEventStore(
        client, database, transactions=False, display=f"mongomock {url}", team_lock=team_lock
    )


def reset_mongomock_servers() -> None:
    """Forget every in-memory server (all their databases)."""
    with _lock:
        _servers.clear()
        _server_locks.clear()
