"""The NATS runtime holds the runtime contract with 3 worker subprocesses x 30 teams.

The fleet tests SIGKILL, SIGTERM and SIGSTOP a worker; PostgreSQL fences the
writes. ``answer_timeout`` bounds every wait; no test measures speed.
"""

from __future__ import annotations

import json
import subprocess
import sys

from akgentic.cluster import connect
from akgentic.testing.runtime_contract import Fleet, FleetRuntimeContract


class TestNatsRuntimeContract(FleetRuntimeContract):
    """The client code of the local runtime's contract, on a fleet."""


def test_cluster_init_is_idempotent_and_status_lists_workers(cluster_url: str) -> None:
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "akgentic.cli", "cluster", "init", cluster_url],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
    status = subprocess.run(
        [sys.executable, "-m", "akgentic.cli", "cluster", "status", "--cluster", cluster_url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["url"] == cluster_url and isinstance(data["workers"], list)


def test_team_commands_reach_a_team_on_the_fleet(
    cluster_url: str, worker_fleet: Fleet, store_url: str
) -> None:
    from akgentic.testing.cluster_team import quiet_team_card

    worker_fleet.ensure(1)
    client = connect(cluster_url)
    try:
        team_id = str(client.create(quiet_team_card()))
    finally:
        client.close()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "akgentic.cli", "team", *args, "--cluster", cluster_url],
            capture_output=True,
            text=True,
            timeout=120,
        )

    sent = cli("send", team_id, "over the wire", "--key", "cli-1")
    assert sent.returncode == 0, sent.stderr
    ack = json.loads(sent.stdout)
    assert ack["worker"] in worker_fleet.names()
    where = json.loads(cli("where", team_id).stdout)
    assert where["worker"] == ack["worker"]
    shown = cli("events", team_id, "--from-sequence", str(ack["sequence"]))
    first = json.loads(shown.stdout.splitlines()[0])
    assert first["sequence"] == ack["sequence"] and "over the wire" in first["summary"]


def test_a_card_refused_for_host_processes_is_answered_once_and_never_redelivered(
    cluster_url: str, worker_fleet: Fleet
) -> None:
    """The refusal is final: the placement leaves the work queue instead of coming back."""
    import asyncio
    import re

    import pytest
    from akgentic_nats.target import parse_nats_url

    from akgentic.cluster.client import ClusterError
    from akgentic.testing import wait_until
    from akgentic.testing.cluster_team import host_command_team_card

    worker_fleet.ensure(1)
    client = connect(cluster_url)
    try:
        with pytest.raises(ClusterError, match="host") as refused:
            client.create(host_command_team_card())
    finally:
        client.close()
    found = re.search(r"creating team ([0-9a-f-]{36}) failed", str(refused.value))
    assert found, refused.value
    target = parse_nats_url(cluster_url)
    subject = target.place_subject(found.group(1))

    async def placement_left() -> bool:
        import nats
        from nats.js.errors import NotFoundError

        nc = await nats.connect(list(target.servers))
        try:
            await nc.jetstream().get_last_msg(target.stream, subject)
            return True
        except NotFoundError:
            return False
        finally:
            await nc.close()

    # A nak'd placement stays in the work-queue stream and is fetched again each second;
    # a terminated one is removed. (Other tests' placements may share the stream.)
    wait_until(lambda: not asyncio.run(placement_left()), timeout=30)
