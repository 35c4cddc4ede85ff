"""Store URLs: pick an installed event store from a URL and open it.

The scheme selects the store plugin (``sqlite://``, ``yaml://``,
``postgresql://``...), which parses the rest. File-backed stores follow the
SQLAlchemy convention: three slashes then a relative path
(``sqlite:///data/a.db``, relative to the working directory), four slashes for
an absolute one (``sqlite:////var/lib/akgentic/a.db``). Options go in the query
string (``sqlite:///a.db?synchronous=normal``).

Without a URL, ``AKGENTIC_STORE`` is used, else :data:`DEFAULT_STORE_URL`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote, urlsplit

from akgentic.team.errors import InvalidStoreURLError, UnknownStoreSchemeError

if TYPE_CHECKING:
    from akgentic.plugins import PluginRegistry
    from akgentic.team.store import EventStore

__all__ = [
    "DEFAULT_STORE_URL",
    "STORE_ENV_VAR",
    "FileStoreURL",
    "default_store_url",
    "file_store_path",
    "missing_store",
    "open_event_store",
    "parse_file_url",
    "store_scheme",
]

#: The store used when neither a URL nor ``AKGENTIC_STORE`` is given.
DEFAULT_STORE_URL = "sqlite:///.akgentic/akgentic.db"
#: Environment variable holding the default store URL.
STORE_ENV_VAR = "AKGENTIC_STORE"


def default_store_url() -> str:
    """``$AKGENTIC_STORE`` when set (and not blank), else :data:`DEFAULT_STORE_URL`."""
    return (os.environ.get(STORE_ENV_VAR) or "").strip() or DEFAULT_STORE_URL


def store_scheme(url: str) -> str:
    """The lower-cased scheme of a store URL (``InvalidStoreURLError`` when there is none)."""
    scheme, sep, _rest = url.partition("://")
    if not sep or not scheme:
        raise InvalidStoreURLError(
            f"store URL {url!r} has no scheme; write it like sqlite:///path/to/akgentic.db "
            "or yaml:///path/to/dir"
        )
    return scheme.lower()


@dataclass(frozen=True)
class FileStoreURL:
    """A parsed file-backed store URL: the path (or ``:memory:``) and its options."""

    scheme: str
    path: Path | None
    options: dict[str, str] = field(default_factory=dict)

    @property
    def in_memory(self) -> bool:
        """True for ``sqlite:///:memory:`` (no file at all)."""
        return self.path is None


def parse_file_url(
    url: str, scheme: str, known_options: frozenset[str] = frozenset()
) -> FileStoreURL:
    """Parse ``<scheme>:///relative`` or ``<scheme>:////absolute`` (plus ``?options``).

    Relative paths are resolved against the current working directory now, so
    a store keeps pointing at the same file if the process changes directory.
    """
    found = store_scheme(url)
    if found != scheme:
        raise InvalidStoreURLError(f"expected a {scheme}:// URL, got {url!r}")
    parts = urlsplit(url)
    if parts.netloc:
        raise InvalidStoreURLError(
            f"{url!r} names a host ({parts.netloc!r}); file stores take three slashes and a "
            f"relative path ({scheme}:///data/akgentic.db) or four for an absolute one "
            f"({scheme}:////var/lib/akgentic/akgentic.db)"
        )
    raw = unquote(parts.path)
    if not raw.startswith("/") or raw == "/":
        raise InvalidStoreURLError(f"{url!r} has no path; write {scheme}:///path")
    raw = raw[1:]
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(options) - known_options)
    if unknown:
        known = ", ".join(sorted(known_options)) or "none"
        raise InvalidStoreURLError(
            f"{url!r}: unknown option(s) {', '.join(unknown)} (known: {known})"
        )
    if raw == ":memory:":
        return FileStoreURL(scheme, None, options)
    path = Path(raw)
    if not path.is_absolute():
        path = Path.cwd() / path
    return FileStoreURL(scheme, path, options)


def open_event_store(url: str | None = None, registry: PluginRegistry | None = None) -> EventStore:
    """Open the store a URL names, through whichever installed plugin owns its scheme.

    ``url=None`` opens :func:`default_store_url`; ``registry`` is the plugin
    registry to ask (default: :func:`akgentic.plugins.current_registry`). An
    unknown scheme raises :class:`~akgentic.team.errors.UnknownStoreSchemeError`,
    which lists the schemes installed and, for well-known ones, the distribution
    to install.
    """
    from akgentic.plugins import UnknownPluginNameError, current_registry

    target = url if url is not None else default_store_url()
    scheme = store_scheme(target)
    registry = registry or current_registry()
    try:
        spec = registry.event_store_for_scheme(scheme)
    except UnknownPluginNameError as exc:
        hint = exc.hint
        info = registry.host.plugin(scheme)  # store plugins are usually named after their scheme
        if info is not None and not info.active:
            state = "disabled" if info.status == "disabled" else f"failed to load: {info.error}"
            hint = f"plugin {scheme!r} ({info.distribution or 'inline'}) is installed but {state}"
        raise UnknownStoreSchemeError(target, scheme, exc.available, hint) from None
    store: EventStore = spec.open(target)
    return store


def file_store_path(url: str) -> tuple[str, Path] | None:
    """``(scheme, path)`` of a file-backed store URL, ``None`` for other stores and memory."""
    scheme = store_scheme(url)
    if scheme not in ("sqlite", "yaml"):
        return None
    parsed = parse_file_url(url.split("?", 1)[0], scheme)
    return None if parsed.path is None else (scheme, parsed.path)


def missing_store(url: str | None) -> str | None:
    """For a file-backed store, a one-line message when its file or directory does not exist.

    ``None`` is the default store (:func:`default_store_url`). Commands that only read
    or resume check it first, so that naming a store that is not there never creates
    an empty one.
    """
    url = url or default_store_url()
    found = file_store_path(url)
    if found is None or found[1].exists():
        return None
    return f"no store at {found[1]} (create a team first, or run `akgentic store init {url}`)"
