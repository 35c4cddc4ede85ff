"""PostgreSQL event store for akgentic teams: ``postgresql://`` and ``postgres://`` store URLs.

The plugin module (:mod:`akgentic_postgres.plugin`) registers the store; the
store itself lives in :mod:`akgentic_postgres.store` and is imported only when a
store is opened, so discovering the plugin never imports psycopg.
"""

from __future__ import annotations

__all__ = ["ENV_VAR"]

#: The variable ``python -m akgentic_postgres.init`` reads the store URL from.
ENV_VAR = "DB_CONN_STRING_PERSISTENCE"
