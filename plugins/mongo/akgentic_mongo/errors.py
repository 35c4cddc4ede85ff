"""Errors of the MongoDB event store (subclasses of the kernel's ``EventStoreError``)."""

from __future__ import annotations

from akgentic.plugin_api import EventStoreError

__all__ = ["SchemaNotInitialisedError", "StoreUnavailableError"]


class SchemaNotInitialisedError(EventStoreError):
    """The database has no event store indexes yet: run the initialiser first."""


class StoreUnavailableError(EventStoreError):
    """No MongoDB server could be reached (or selected) in time."""
