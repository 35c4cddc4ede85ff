"""Runtimes: where teams run, behind one client API (see ``docs/cluster.md``).

``connect(url)`` returns a :class:`RuntimeClient` for the runtime the URL's
scheme names: ``local:`` (built in, teams in this process) or a fleet such as
``nats://...`` (the ``akgentic-nats`` plugin). Runtimes register through the
``akgentic_runtimes`` hook, as event stores do. Nothing optional is imported
here.
"""

from __future__ import annotations

from akgentic.cluster.client import (
    Ack,
    ClusterError,
    Placement,
    RuntimeClient,
    TeamSummary,
    TeamUnavailableError,
)
from akgentic.cluster.connect import (
    DEFAULT_CLUSTER_URL,
    cluster_scheme,
    connect,
    default_cluster_url,
)
from akgentic.cluster.keys import inbound_id

__all__ = [
    "DEFAULT_CLUSTER_URL",
    "Ack",
    "ClusterError",
    "Placement",
    "RuntimeClient",
    "TeamSummary",
    "TeamUnavailableError",
    "cluster_scheme",
    "connect",
    "default_cluster_url",
    "inbound_id",
]
