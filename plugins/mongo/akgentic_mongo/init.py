"""``python -m akgentic_mongo.init``: create the event store's indexes, for init containers.

Reads the store URL from ``MONGO_URL`` and creates whatever indexes are missing
(safe to run on every deploy). Exit codes:

* ``0`` the database is ready (indexes created now or already there);
* ``2`` ``MONGO_URL`` is unset or blank;
* ``1`` anything else (bad URL, server unreachable, not authorised...).
"""

from __future__ import annotations

import sys

from akgentic.plugin_api import run_initialiser
from akgentic_mongo import ENV_VAR
from akgentic_mongo.plugin import init_mongo_store

__all__ = ["main"]


def main() -> int:
    """Run the initialiser; returns the process exit code."""
    from akgentic_mongo.url import redact

    return run_initialiser(
        ENV_VAR,
        url_kind="a mongodb:// store URL",
        initialise=init_mongo_store,
        redact=redact,
        ready="event store indexes ready",
    )


if __name__ == "__main__":
    sys.exit(main())
