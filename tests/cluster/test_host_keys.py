"""A host that takes a team over learns its delivered keys from the checkpoint, not the whole log.

Idempotency keys are remembered for the life of a team's log (docs/cluster.md).
Reading them back used to decode the whole log on every adoption or
activation (12.5 s at 100,000 events); the checkpoint fold now carries them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from uuid import UUID, uuid4

import pytest

from akgentic.cluster.host import TeamHost
from akgentic.cluster.keys import inbound_id, inbound_ids
from akgentic.core import ActorSystem
from akgentic.core.messages.message import UserMessage
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.team import SqliteEventStore, TeamManager
from akgentic.team.checkpoint import CheckpointFold, fold_log, load_restore_point, verify
from akgentic.team.models import PersistedEvent
from akgentic.testing.cluster_team import quiet_team_card
from akgentic.testing.event_store_checkpoint import stream_messages


class CountingStore(SqliteEventStore):
    """The SQLite store, counting whole-log reads (everything else is the store's own)."""

    whole_log_reads = 0

    def load_events(self, team_id: UUID) -> list[PersistedEvent]:
        self.whole_log_reads += 1
        return super().load_events(team_id)


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    actors = ActorSystem()
    yield actors
    actors.shutdown(timeout=10)


def _sent(team_id: UUID, message_id: UUID) -> SentMessage:
    recipient = next(iter(stream_messages(team_id, 0))).sender
    assert recipient is not None
    inner = UserMessage(content="hi")
    inner.id = message_id
    return SentMessage(message=inner, recipient=recipient)


def test_adoption_learns_every_key_from_checkpoint_and_tail(
    tmp_path: Path, system: ActorSystem
) -> None:
    store = CountingStore(tmp_path / "teams.db")
    first = TeamManager(system, store, checkpoint_every=7, passivate_after=None)
    host = TeamHost(first, allow_host_processes=True)
    runtime = host.create(quiet_team_card(), None, "test")
    sequences = {f"k{n}": host.deliver(runtime.id, f"m{n}", f"k{n}").sequence for n in range(12)}
    first.stop_team(runtime.id)
    host.close()
    truth = inbound_ids(SqliteEventStore.load_events(store, runtime.id))
    assert len(truth) == 12
    point = load_restore_point(store, runtime.id)
    assert point.checkpoint is not None, "no checkpoint to start from"

    second = TeamManager(system, store, checkpoint_every=7, passivate_after=None)
    other = TeamHost(second, allow_host_processes=True)
    try:
        store.whole_log_reads = 0
        other.adopt(runtime.id)
        assert store.whole_log_reads == 0, "the adoption decoded the whole log"
        persistence = second.get_persistence(runtime.id)
        assert persistence is not None
        assert persistence.inbound_ids() == truth
        for key in ("k0", "k6", "k11"):
            again = other.deliver(runtime.id, "again", key)
            assert again.duplicate and again.sequence == sequences[key]
        fresh = other.deliver(runtime.id, "new", "k12")
        assert not fresh.duplicate and fresh.sequence > max(sequences.values())
    finally:
        second.stop_all()
        other.close()
        store.close()


def test_checkpoint_inbound_is_checksummed_and_a_version_1_checkpoint_falls_back() -> None:
    team_id = uuid4()
    keys = [inbound_id(team_id, f"k{n}") for n in range(3)]
    events = [
        PersistedEvent(team_id=team_id, sequence=n, event=_sent(team_id, message_id))
        for n, message_id in enumerate([keys[0], uuid4(), keys[1], keys[0], keys[2]], start=1)
    ]
    fold = fold_log(events)
    assert fold.inbound == {keys[0]: 1, keys[1]: 3, keys[2]: 5}
    checkpoint = fold.checkpoint(team_id)
    assert checkpoint.version == 2 and verify(checkpoint, team_id) is None
    forged = checkpoint.model_copy(update={"inbound": checkpoint.inbound.replace(":5", ":4")})
    assert verify(forged, team_id) == "its checksum does not match its contents"

    seeded = CheckpointFold()
    seeded.seed_inbound(checkpoint)
    assert seeded.inbound == fold.inbound and seeded.inbound_complete
    old = checkpoint.model_copy(update={"version": 1, "inbound": ""})
    blind = CheckpointFold()
    blind.seed_inbound(old)
    assert not blind.inbound_complete
    # What it learns later is not all of it, so what it writes says it does not know.
    assert blind.checkpoint(team_id).version == 1
