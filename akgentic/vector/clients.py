"""One client per cluster connection per process, shared by every consumer.

Backends take a client from :func:`get_client` and never open or close one. Keys are
normalised so that spellings of one URL share a client; the API key is part of the
key but never shown in its repr.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

__all__ = ["ClusterKey", "close_all", "get_client"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class ClusterKey:
    """Identity of a connection: backend, host, port, scheme, key, or a local path."""

    backend: str
    host: str = "localhost"
    port: int = 0
    secure: bool = False
    api_key: str | None = field(default=None, repr=False)
    path: str | None = None

    @classmethod
    def from_url(
        cls,
        backend: str,
        url: str,
        api_key: str | None = None,
        *,
        default_port: int | None = None,
    ) -> ClusterKey:
        """Normalise ``url``: lowercase host, path and trailing slash ignored, https = secure."""
        parts = urlsplit(url.strip())
        secure = parts.scheme.lower() == "https"
        host = (parts.hostname or "localhost").lower()
        port = parts.port
        if port is None:
            port = default_port if default_port is not None else (443 if secure else 8080)
        return cls(backend=backend, host=host, port=port, secure=secure, api_key=api_key or None)

    @classmethod
    def local(cls, backend: str, path: str) -> ClusterKey:
        """Key of a local (in-process) engine: ``:memory:`` or a directory."""
        return cls(backend=backend, host="", port=0, path=path)

    @property
    def url(self) -> str:
        """The normalised URL of a server key."""
        return f"{'https' if self.secure else 'http'}://{self.host}:{self.port}"


_lock = threading.Lock()
_clients: dict[ClusterKey, Any] = {}
_closers: dict[ClusterKey, Callable[[Any], None]] = {}
_atexit_registered = False


def get_client(
    key: ClusterKey, connect: Callable[[], T], close: Callable[[T], None] | None = None
) -> T:
    """The cached client of ``key``, connecting once (under a lock) when there is none.

    A failing ``connect`` is not cached: the next caller tries again. ``close``
    (default: the client's own ``close()``) is what :func:`close_all` calls.
    """
    global _atexit_registered
    with _lock:
        client = _clients.get(key)
        if client is not None:
            return client  # type: ignore[no-any-return]
        client = connect()
        _clients[key] = client
        if close is not None:
            _closers[key] = close
        if not _atexit_registered:
            atexit.register(close_all)
            _atexit_registered = True
        return client


def close_all() -> None:
    """Close every cached client (failures are logged and skipped); idempotent.

    Never call it while teams are live: their backends hold these clients.
    """
    with _lock:
        items = list(_clients.items())
        closers = dict(_closers)
        _clients.clear()
        _closers.clear()
    for key, client in items:
        closer = closers.get(key)
        try:
            if closer is not None:
                closer(client)
            elif hasattr(client, "close"):
                client.close()
        except Exception:
            logger.warning("closing the %s client of %r failed", key.backend, key, exc_info=True)
