"""``MyStore``: the store docs/event-stores.md plugs in, here the YAML store under another scheme.

A real store, so the page's contract-kit block runs the whole kit against it.
"""

from __future__ import annotations

from pathlib import Path

from akgentic.team.stores.yaml import YamlEventStore

__all__ = ["MyStore", "init_schema"]


def _path(url: str) -> Path:
    scheme, sep, rest = url.partition("://")
    if scheme != "mystore" or not sep or not rest.startswith("/"):
        raise ValueError(f"not a mystore:/// URL: {url!r}")
    return Path(rest[1:])  # three slashes: relative; four: absolute


class MyStore(YamlEventStore):
    """The YAML store, opened from a ``mystore:///path`` URL."""

    @classmethod
    def from_url(cls, url: str) -> MyStore:
        return cls(_path(url))


def init_schema(url: str) -> None:
    """Create the store's directory: all the schema a YAML store has."""
    _path(url).mkdir(parents=True, exist_ok=True)
