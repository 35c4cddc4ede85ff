"""Errors of the PostgreSQL event store (subclasses of the kernel's ``EventStoreError``)."""

from __future__ import annotations

from akgentic.plugin_api import EventStoreError

__all__ = ["SchemaNotInitialisedError", "StoreUnavailableError"]


class SchemaNotInitialisedError(EventStoreError):
    """The database has no event store tables: run the initialiser first."""


class StoreUnavailableError(EventStoreError):
    """The server cannot be reached, or no pooled connection became free in time."""
