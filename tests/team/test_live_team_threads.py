"""Threads of live teams: idle actors park, and every team's writes share the writer pool.

An echo team used to hold four threads for as long as it ran (orchestrator,
entry point, member, persistence writer). Its actors now give their threads up
while idle and its writes run on the process's shared writers, so live teams
cost at most two threads each at rest (none, once parked), and still answer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from uuid import uuid4

import pytest

from akgentic.core._pykka_seam import SeamActor
from akgentic.core.messages.message import UserMessage
from akgentic.team import PersistenceSubscriber, SqliteEventStore, TeamCard, TeamManager
from akgentic.team.subscribers.writers import DEFAULT_MAX_WRITERS, WriterPool, writer_pool
from akgentic.testing import wait_until


@pytest.fixture
def short_linger(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # Class attribute read when an actor's inbox is made: only actors started here.
    monkeypatch.setattr(SeamActor, "linger", 0.05)
    yield


def _echoes(runtime: object) -> list[str]:
    echo = runtime.addrs["@Echo"]  # type: ignore[attr-defined]
    from akgentic.core.proxy import ProxyWrapper

    seen: list[str] = ProxyWrapper(echo, ask=True, timeout=10).seen()
    return seen


def _actor_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(("Orchestrator-", "Echo-"))]


def test_live_echo_teams_hold_at_most_two_threads_each_and_still_answer(
    short_linger: None,
    sqlite_manager: TeamManager,
    team_card: Callable[..., TeamCard],
) -> None:
    teams = 8
    before = threading.active_count()
    runtimes = []
    for i in range(teams):
        runtime = sqlite_manager.create_team(team_card())
        runtime.send(f"hello {i}")
        assert runtime.wait_idle(10)
        runtimes.append(runtime)
    # At rest: every actor parked; only the shared clock and writers may remain.
    wait_until(lambda: threading.active_count() - before <= 2 * teams, timeout=15)
    wait_until(lambda: threading.active_count() - before <= 1 + DEFAULT_MAX_WRITERS, timeout=15)
    wait_until(lambda: not _actor_threads(), timeout=15)
    for i, runtime in enumerate(runtimes):
        runtime.send(f"again {i}")
        assert runtime.wait_idle(10)
        assert _echoes(runtime) == [f"hello {i}", f"again {i}"]
        persistence = sqlite_manager.get_persistence(runtime.id)
        assert persistence is not None
        persistence.flush(10)
        sequences = [e.sequence for e in sqlite_manager.event_store.load_events(runtime.id)]
        assert sequences == list(range(1, len(sequences) + 1))


def test_many_subscribers_share_a_bounded_pool_and_keep_each_log_in_order(
    tmp_path: Path,
) -> None:
    store = SqliteEventStore(tmp_path / "pool.db")
    pool = writer_pool()
    try:
        subscribers = [PersistenceSubscriber(uuid4(), store) for _ in range(40)]
        peak = [0]

        def flood(subscriber: PersistenceSubscriber) -> None:
            for i in range(50):
                subscriber.on_message(UserMessage(content=f"{subscriber.team_id} {i}"))
                peak[0] = max(peak[0], pool.workers)

        threads = [threading.Thread(target=flood, args=(s,)) for s in subscribers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        for subscriber in subscribers:
            subscriber.flush(60)
            events = store.load_events(subscriber.team_id)
            assert [e.sequence for e in events] == list(range(1, 51))
            assert [getattr(e.event, "content", None) for e in events] == [
                f"{subscriber.team_id} {i}" for i in range(50)
            ]
        assert 1 <= peak[0] <= pool.max_workers
    finally:
        store.close()


def test_a_pool_with_idle_workers_ends_them_and_a_bad_size_is_refused() -> None:
    pool = WriterPool(max_workers=2, idle_timeout=0.05)
    done = threading.Event()
    pool.submit(done.set)
    assert done.wait(10)
    wait_until(lambda: pool.workers == 0, timeout=10)
    ran = threading.Event()
    pool.submit(ran.set)  # a new worker starts for new work
    assert ran.wait(10)
    with pytest.raises(ValueError, match="max_workers"):
        WriterPool(max_workers=0)
