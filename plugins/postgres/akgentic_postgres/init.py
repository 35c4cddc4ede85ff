"""``python -m akgentic_postgres.init``: create the event store schema, for init containers.

Reads the store URL from ``DB_CONN_STRING_PERSISTENCE`` and creates whatever
tables and indexes are missing (safe to run on every deploy). Exit codes:

* ``0`` the schema is ready (created now or already there);
* ``2`` ``DB_CONN_STRING_PERSISTENCE`` is unset or blank;
* ``1`` anything else (bad URL, server unreachable, permission denied...).
"""

from __future__ import annotations

import os
import sys

from akgentic_postgres import ENV_VAR

__all__ = ["main"]


def main() -> int:
    """Run the initialiser; returns the process exit code."""
    url = (os.environ.get(ENV_VAR) or "").strip()
    if not url:
        print(f"error: {ENV_VAR} is not set (a postgresql:// store URL)", file=sys.stderr)
        return 2
    try:
        from akgentic_postgres.store import init_schema
        from akgentic_postgres.url import redact

        init_schema(url)
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"event store schema ready: {redact(url)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
