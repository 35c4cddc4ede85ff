"""Connections from the environment: ``AKGENTIC_QDRANT_URL`` picks the Qdrant mode.

- ``http(s)://host[:port]``: a server (REST, never gRPC), shared per key, with
  ``AKGENTIC_QDRANT_API_KEY`` when set;
- ``:memory:``: one in-process engine per process; nothing survives the process;
- ``file:///dir``: one on-disk local engine per directory per process; a second
  process on the same directory is refused.

Local engines are not thread-safe: they come with a lock every backend call takes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from akgentic.plugin_api import ClusterKey, env_value, get_client

__all__ = ["QDRANT_PORT", "URL_VARIABLE", "QdrantConnection", "connect_from_env", "connect_url"]

URL_VARIABLE = "AKGENTIC_QDRANT_URL"
KEY_VARIABLE = "AKGENTIC_QDRANT_API_KEY"
QDRANT_PORT = 6333


@dataclass(frozen=True)
class QdrantConnection:
    """A shared client and the lock to use it under."""

    client: Any
    lock: Any


def _local(key: ClusterKey, location: str) -> QdrantConnection:
    def connect() -> QdrantConnection:
        from qdrant_client import QdrantClient

        try:
            if location == ":memory:":
                client = QdrantClient(location=":memory:")
            else:
                client = QdrantClient(path=location)
        except RuntimeError as exc:
            raise RuntimeError(
                f"the Qdrant directory {location} is in use by another process ({exc}); "
                "a local Qdrant directory serves one process: use a server for more"
            ) from exc
        return QdrantConnection(client=client, lock=threading.RLock())

    connection: QdrantConnection = get_client(key, connect, close=lambda c: c.client.close())
    return connection


def connect_url(url: str, api_key: str | None = None) -> QdrantConnection:
    """The shared connection for ``url`` (a server URL, ``:memory:`` or ``file:///dir``)."""
    url = url.strip()
    if url == ":memory:":
        return _local(ClusterKey.local("qdrant", ":memory:"), ":memory:")
    parts = urlsplit(url)
    if parts.scheme == "file":
        path = unquote(parts.path)
        if not path:
            raise ValueError(f"{URL_VARIABLE}={url!r} names no directory (use file:///dir)")
        return _local(ClusterKey.local("qdrant", path), path)
    if parts.scheme not in ("http", "https"):
        raise ValueError(
            f"{URL_VARIABLE}={url!r} is not http(s)://host[:port], :memory: or file:///dir"
        )
    key = ClusterKey.from_url("qdrant", url, api_key, default_port=QDRANT_PORT)

    def connect() -> QdrantConnection:
        from qdrant_client import QdrantClient

        client = QdrantClient(
            host=key.host,
            port=key.port,
            https=key.secure,
            api_key=key.api_key,
            prefer_grpc=False,
        )
        client.get_collections()  # eager: a bad cluster fails at bind, not mid-run
        return QdrantConnection(client=client, lock=None)

    connection: QdrantConnection = get_client(key, connect, close=lambda c: c.client.close())
    return connection


def connect_from_env() -> QdrantConnection:
    """The connection ``AKGENTIC_QDRANT_URL`` names (ValueError when it is unset)."""
    url = env_value(URL_VARIABLE)
    if url is None:
        raise ValueError(f"{URL_VARIABLE} is not set")
    return connect_url(url, env_value(KEY_VARIABLE))
