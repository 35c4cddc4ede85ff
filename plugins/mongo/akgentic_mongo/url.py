"""Store URLs of the MongoDB plugin: a standard MongoDB connection string.

The database is the URL's path (``mongodb://host:27017/akgentic``;
``akgentic`` when the path is empty). Every query option is pymongo's own
(``replicaSet``, ``tls``, ``authSource``, ``w``, ``journal``...). Unless the URL
says otherwise, writes are acknowledged by a majority of the replica set and
journaled (``w=majority&journal=true``), and a server must be selected within
10 seconds (``serverSelectionTimeoutMS=10000``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from akgentic.plugin_api import InvalidStoreURLError
from akgentic_mongo import DEFAULT_DATABASE

__all__ = ["SCHEMES", "MongoURL", "parse_mongo_url", "redact"]

SCHEMES = ("mongodb", "mongodb+srv")
# MongoDB refuses these in database names; checked here so the message is ours.
_BAD_DATABASE = re.compile(r'[/\\. "$*<>:|?\x00]')


@dataclass(frozen=True)
class MongoURL:
    """A parsed store URL: the connection string, the database and client defaults."""

    url: str
    database: str
    client_options: dict[str, Any]

    @property
    def display(self) -> str:
        """The URL without its password, for messages and logs."""
        return redact(self.url)


def redact(url: str) -> str:
    """``url`` with the password (if any) replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def parse_mongo_url(url: str) -> MongoURL:
    """The database and the client defaults of a store URL (see the module docstring)."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in SCHEMES:
        raise InvalidStoreURLError(
            f"expected a mongodb:// or mongodb+srv:// URL, got {redact(url)!r}"
        )
    database = unquote(parts.path.lstrip("/")) or DEFAULT_DATABASE
    if _BAD_DATABASE.search(database) or len(database) > 63:
        raise InvalidStoreURLError(f"{redact(url)}: {database!r} is not a valid database name")
    given = {key.lower() for key, _ in parse_qsl(parts.query, keep_blank_values=True)}
    options: dict[str, Any] = {"appname": "akgentic"}
    if "w" not in given:
        options["w"] = "majority"
    if not given & {"journal", "j"}:
        options["journal"] = True
    if "serverselectiontimeoutms" not in given:
        options["serverSelectionTimeoutMS"] = 10_000
    return MongoURL(url, database, options)
