"""``connect(url)``: the runtime a cluster URL names, chosen by its scheme.

``local:`` (the default) runs teams in this process; ``nats://host:4222``
places them on a fleet (``pip install akgentic-nats``). ``AKGENTIC_CLUSTER``
sets the default URL, ``--cluster URL`` overrides it on the command line.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from akgentic.cluster.client import ClusterError, RuntimeClient

if TYPE_CHECKING:
    from akgentic.plugins import PluginRegistry

__all__ = ["DEFAULT_CLUSTER_URL", "cluster_scheme", "connect", "default_cluster_url"]

DEFAULT_CLUSTER_URL = "local:"


def default_cluster_url() -> str:
    """``AKGENTIC_CLUSTER`` when set, else ``local:``."""
    return os.environ.get("AKGENTIC_CLUSTER") or DEFAULT_CLUSTER_URL


def cluster_scheme(url: str) -> str:
    """The scheme of a cluster URL (``nats`` for ``nats://127.0.0.1:4222``)."""
    scheme, sep, _rest = url.partition(":")
    if not sep or not scheme:
        raise ClusterError(f"{url!r} is not a cluster URL (expected scheme:..., e.g. local:)")
    return scheme.lower()


def connect(
    url: str | None = None, *, store: str | None = None, registry: PluginRegistry | None = None
) -> RuntimeClient:
    """A client of the runtime ``url`` names (default :func:`default_cluster_url`).

    ``store`` is the event store URL an in-process runtime opens (default:
    ``AKGENTIC_STORE`` or the SQLite default). An unknown scheme raises
    ``UnknownPluginNameError`` listing the installed ones and what to install.
    """
    from akgentic.plugins import current_registry

    target = url or default_cluster_url()
    spec = (registry or current_registry()).runtime_for_scheme(cluster_scheme(target))
    client: RuntimeClient = spec.connect(target, store)
    return client
