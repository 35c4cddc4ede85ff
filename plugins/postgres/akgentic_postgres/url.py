"""Store URLs of the PostgreSQL plugin: what belongs to libpq and what belongs to us.

A store URL is an ordinary libpq connection URI (``postgresql://`` or
``postgres://``) plus a few query parameters that the store reads and removes
before the URI reaches the driver:

``schema``
    The PostgreSQL schema holding the store's tables (default: the first
    schema of the connection's ``search_path``, normally ``public``).
``pool_min_size`` / ``pool_max_size``
    Connections kept open / opened at most by one store object (default 1 / 10).
``pool_timeout``
    Seconds a call waits for a free pooled connection before failing (default 30).

Every other parameter (``sslmode``, ``connect_timeout``, ``application_name``,
``options``...) is passed to libpq untouched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from akgentic.plugin_api import InvalidStoreURLError

__all__ = ["SCHEMES", "PostgresURL", "parse_postgres_url", "redact"]

SCHEMES = ("postgresql", "postgres")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]{0,62}$")
_OURS = frozenset({"schema", "pool_min_size", "pool_max_size", "pool_timeout"})


@dataclass(frozen=True)
class PostgresURL:
    """A parsed store URL: the libpq URI for the driver and the store's own options."""

    conninfo: str
    schema: str | None = None
    pool_min_size: int = 1
    pool_max_size: int = 10
    pool_timeout: float = 30.0

    @property
    def display(self) -> str:
        """The URI without its password, for messages and logs."""
        return redact(self.conninfo)


def redact_unparsed(url: str) -> str:
    """``url`` with anything between ``://`` and ``@`` masked (for URLs that do not parse)."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if not sep or not at:
        return url
    user = userinfo.partition(":")[0]
    return f"{scheme}://{user}:***@{host}" if ":" in userinfo else url


def redact(url: str) -> str:
    """``url`` with the password (if any) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_unparsed(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def _number(url: str, name: str, text: str, minimum: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InvalidStoreURLError(
            f"{redact(url)}: {name} must be a number, not {text!r}"
        ) from None
    if value < minimum:
        raise InvalidStoreURLError(f"{redact(url)}: {name} must be at least {minimum:g}")
    return value


def parse_postgres_url(url: str) -> PostgresURL:
    """Split a store URL into the libpq URI and the store options (see the module docstring)."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # parsing the port is what raises on a malformed one
    except ValueError as exc:
        raise InvalidStoreURLError(
            f"{redact_unparsed(url)} is not a valid PostgreSQL URL ({exc}); write it like "
            "postgresql://user@host:5432/database"
        ) from None
    if parts.scheme.lower() not in SCHEMES:
        raise InvalidStoreURLError(
            f"expected a postgresql:// or postgres:// URL, got {redact(url)!r}"
        )
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {key: value for key, value in query if key in _OURS}
    rest = [(key, value) for key, value in query if key not in _OURS]
    schema = ours.get("schema") or None
    if schema is not None and not _IDENTIFIER.match(schema):
        raise InvalidStoreURLError(
            f"{redact(url)}: schema must be a plain identifier (letters, digits, _ and $, "
            f"not starting with a digit, at most 63 characters), not {schema!r}"
        )
    min_size = int(_number(url, "pool_min_size", ours.get("pool_min_size", "1"), 0))
    max_size = int(_number(url, "pool_max_size", ours.get("pool_max_size", "10"), 1))
    if max_size < min_size:
        raise InvalidStoreURLError(f"{redact(url)}: pool_max_size is below pool_min_size")
    timeout = _number(url, "pool_timeout", ours.get("pool_timeout", "30"), 0.001)
    conninfo = urlunsplit(parts._replace(query=urlencode(rest)))
    return PostgresURL(conninfo, schema, min_size, max_size, timeout)
