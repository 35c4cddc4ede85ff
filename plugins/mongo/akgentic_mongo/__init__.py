"""MongoDB event store for akgentic teams: ``mongodb://`` and ``mongodb+srv://`` store URLs.

The plugin module (:mod:`akgentic_mongo.plugin`) registers the store; the store
itself lives in :mod:`akgentic_mongo.store` and is imported only when a store
is opened, so discovering the plugin never imports pymongo.
"""

from __future__ import annotations

__all__ = ["DEFAULT_DATABASE", "ENV_VAR"]

#: The variable ``python -m akgentic_mongo.init`` reads the store URL from.
ENV_VAR = "MONGO_URL"
#: The database used when the URL names none (``mongodb://host:27017``).
DEFAULT_DATABASE = "akgentic"
