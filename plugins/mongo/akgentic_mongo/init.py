"""``python -m akgentic_mongo.init``: create the event store's indexes, for init containers.

Reads the store URL from ``MONGO_URL`` and creates whatever indexes are missing
(safe to run on every deploy). Exit codes:

* ``0`` the database is ready (indexes created now or already there);
* ``2`` ``MONGO_URL`` is unset or blank;
* ``1`` anything else (bad URL, server unreachable, not authorised...).
"""

from __future__ import annotations

import os
import sys

from akgentic_mongo import ENV_VAR

__all__ = ["main"]


def main() -> int:
    """Run the initialiser; returns the process exit code."""
    url = (os.environ.get(ENV_VAR) or "").strip()
    if not url:
        print(f"error: {ENV_VAR} is not set (a mongodb:// store URL)", file=sys.stderr)
        return 2
    try:
        from akgentic_mongo.store import init_schema
        from akgentic_mongo.url import redact

        init_schema(url)
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"event store indexes ready: {redact(url)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
