"""``python -m akgentic_postgres.init``: create the event store schema, for init containers.

Reads the store URL from ``DB_CONN_STRING_PERSISTENCE`` and creates whatever
tables and indexes are missing (safe to run on every deploy). Exit codes:

* ``0`` the schema is ready (created now or already there);
* ``2`` ``DB_CONN_STRING_PERSISTENCE`` is unset or blank;
* ``1`` anything else (bad URL, server unreachable, permission denied...).
"""

from __future__ import annotations

import sys

from akgentic.plugin_api import run_initialiser
from akgentic_postgres import ENV_VAR
from akgentic_postgres.plugin import init_postgres_store

__all__ = ["main"]


def main() -> int:
    """Run the initialiser; returns the process exit code."""
    from akgentic_postgres.url import redact

    return run_initialiser(
        ENV_VAR,
        url_kind="a postgresql:// store URL",
        initialise=init_postgres_store,
        redact=redact,
        ready="event store schema ready",
    )


if __name__ == "__main__":
    sys.exit(main())
