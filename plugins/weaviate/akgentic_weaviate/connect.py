"""The shared client ``AKGENTIC_WEAVIATE_URL`` (and ``AKGENTIC_WEAVIATE_API_KEY``) names.

``connect_to_custom`` with HTTP and gRPC on the URL's host (gRPC on 50051), API-key
authentication or none, connected eagerly so a bad cluster fails at bind.
"""

from __future__ import annotations

from typing import Any

from akgentic.plugin_api import ClusterKey, env_value, get_client

__all__ = ["GRPC_PORT", "KEY_VARIABLE", "URL_VARIABLE", "connect_from_env", "connect_url"]

URL_VARIABLE = "AKGENTIC_WEAVIATE_URL"
KEY_VARIABLE = "AKGENTIC_WEAVIATE_API_KEY"
GRPC_PORT = 50051


def connect_url(url: str, api_key: str | None = None) -> Any:
    """The shared v4 client of ``url``."""
    key = ClusterKey.from_url("weaviate", url, api_key)

    def connect() -> Any:
        import weaviate
        from weaviate.classes.init import Auth

        return weaviate.connect_to_custom(
            http_host=key.host,
            http_port=key.port,
            http_secure=key.secure,
            grpc_host=key.host,
            grpc_port=GRPC_PORT,
            grpc_secure=key.secure,
            auth_credentials=Auth.api_key(key.api_key) if key.api_key else None,
        )

    return get_client(key, connect)


def connect_from_env() -> Any:
    """The client of the configured cluster (ValueError when none is)."""
    url = env_value(URL_VARIABLE)
    if url is None:
        raise ValueError(f"{URL_VARIABLE} is not set")
    return connect_url(url, env_value(KEY_VARIABLE))
