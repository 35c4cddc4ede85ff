"""What a ``nats://`` cluster URL names: servers, a name prefix and the lease.

``nats://127.0.0.1:4222?prefix=akgentic&lease=4`` (defaults shown). Every
stream, consumer, bucket and subject is named from ``prefix``, so several
deployments (or test runs) share one NATS server without meeting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from akgentic.plugin_api import ClusterError

__all__ = ["NatsTarget", "parse_nats_url"]

_PREFIX = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class NatsTarget:
    """The parts of a cluster URL and the names derived from its prefix."""

    url: str
    servers: tuple[str, ...]
    prefix: str
    lease: float

    @property
    def stream(self) -> str:
        """The work-queue stream of placements (one message per placed team)."""
        return f"{self.prefix}_PLACE"

    @property
    def consumer(self) -> str:
        """The durable pull consumer every worker fetches placements from."""
        return f"{self.prefix}_WORKERS"

    @property
    def bucket(self) -> str:
        """The KV bucket of worker records (name -> status)."""
        return f"{self.prefix}_workers"

    @property
    def wake_subject(self) -> str:
        """Where a draining worker says it handed its leases back (plain NATS)."""
        return f"{self.prefix}.wake"

    @property
    def fleet_subject(self) -> str:
        """Store reads any worker answers (a queue group): team lists and records."""
        return f"{self.prefix}.fleet"

    def place_subject(self, team_id: object) -> str:
        """Placement subject of a team (at most one message: its lease)."""
        return f"{self.prefix}.place.{team_id}"

    def team_subject(self, team_id: object) -> str:
        """Requests to the worker running a team."""
        return f"{self.prefix}.team.{team_id}"

    def events_subject(self, team_id: object) -> str:
        """Live durable events of a team."""
        return f"{self.prefix}.events.{team_id}"


def parse_nats_url(url: str) -> NatsTarget:
    """Parse ``nats://host:port[,host:port]?prefix=P&lease=S`` (``ClusterError`` if malformed)."""
    parts = urlsplit(url)
    if parts.scheme != "nats" or not parts.netloc:
        raise ClusterError(f"{url!r} is not a NATS cluster URL (nats://host:4222)")
    options = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = sorted(set(options) - {"prefix", "lease"})
    if unknown:
        raise ClusterError(
            f"{url!r}: unknown option(s) {', '.join(unknown)} (known: lease, prefix)"
        )
    prefix = options.get("prefix", "akgentic")
    if not _PREFIX.match(prefix):
        raise ClusterError(f"{url!r}: prefix must be letters, digits, '_' or '-'")
    try:
        lease = float(options.get("lease", "4"))
    except ValueError:
        raise ClusterError(f"{url!r}: lease must be a number of seconds") from None
    if lease <= 0.5:
        raise ClusterError(f"{url!r}: lease must be longer than 0.5 s")
    servers = tuple(f"nats://{host}" for host in parts.netloc.split(","))
    return NatsTarget(url=url, servers=servers, prefix=prefix, lease=lease)
