"""Building blocks for event-store plugins whose driver is a separate package.

A store plugin is discovered on every ``akgentic`` start, so its plugin module must
not import the database driver (psycopg, pymongo...): the driver loads when a
store is opened or initialised. :class:`DriverModule` does that import on demand
and turns a missing driver into an ImportError that says what to install;
:func:`run_initialiser` is the body of a ``python -m yourplugin.init`` module an
init container runs before the application starts.

.. code-block:: python

    _driver = DriverModule("akgentic_postgres.store", install_hint="pip install psycopg")

    def open_store(url: str) -> EventStore:
        return _driver.attribute("PostgresEventStore").from_url(url)
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["DriverModule", "run_initialiser"]


@dataclass(frozen=True)
class DriverModule:
    """A module that needs an optional driver, imported the first time it is used.

    Args:
        module: Dotted name of the module that imports the driver.
        install_hint: What the user should run or install when the import fails.
    """

    module: str
    install_hint: str

    def attribute(self, name: str) -> Any:
        """``module.name``; ImportError carrying :attr:`install_hint` if the driver is missing."""
        try:
            loaded = importlib.import_module(self.module)
        except ImportError as exc:
            raise ImportError(self.install_hint) from exc
        return getattr(loaded, name)


def run_initialiser(
    env_var: str,
    *,
    url_kind: str,
    initialise: Callable[[str], None],
    redact: Callable[[str], str],
    ready: str,
) -> int:
    """Initialise the store whose URL is in ``env_var``; returns the process exit code.

    ``0``: the store is ready (created now or already there); ``2``: ``env_var`` is
    unset or blank; ``1``: anything else (bad URL, server unreachable, refused...).
    Messages go to stderr on failure and to stdout on success, with the URL's
    password redacted.

    Args:
        env_var: The environment variable holding the store URL.
        url_kind: How the URL looks, for the error (``"a postgresql:// store URL"``).
        initialise: Creates what is missing; must be idempotent.
        redact: The URL with its secrets masked, for the success line.
        ready: The success line's text before the URL.
    """
    url = (os.environ.get(env_var) or "").strip()
    if not url:
        print(f"error: {env_var} is not set ({url_kind})", file=sys.stderr)
        return 2
    try:
        initialise(url)
        shown = redact(url)
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{ready}: {shown}")
    return 0
