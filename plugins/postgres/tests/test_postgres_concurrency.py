"""Several processes writing to one PostgreSQL database at once.

Children wait on stdin for a ``go`` line after announcing they are ready, so
they start together without any sleep; every wait has a timeout.
"""

from __future__ import annotations

import subprocess
import sys
from uuid import UUID, uuid4

from akgentic_postgres.store import PostgresEventStore

from akgentic.core.messages.message import UserMessage

SUBSCRIBER_WRITER = """
import sys
from uuid import UUID
from akgentic.core.messages import UserMessage
from akgentic.team import PersistenceSubscriber
from akgentic_postgres.store import PostgresEventStore

url, team, tag, count = sys.argv[1], UUID(sys.argv[2]), sys.argv[3], int(sys.argv[4])
store = PostgresEventStore.from_url(url)
subscriber = PersistenceSubscriber(team, store)  # batched: save_events from its own thread
print("ready", flush=True)
assert sys.stdin.readline().strip() == "go"
for i in range(1, count + 1):
    subscriber.on_message(UserMessage(content=f"{tag}:{i}"))
subscriber.flush(120)
print("durable", subscriber.durable_sequence, flush=True)
subscriber.close()
store.close()
"""

RACING_WRITER = """
import sys
from uuid import UUID
from akgentic.core.messages import UserMessage
from akgentic.team import PersistedEvent
from akgentic.team.errors import DuplicateEventError
from akgentic_postgres.store import PostgresEventStore

url, team, tag, total = sys.argv[1], UUID(sys.argv[2]), sys.argv[3], int(sys.argv[4])
store = PostgresEventStore.from_url(url)
print("ready", flush=True)
assert sys.stdin.readline().strip() == "go"
for start in range(1, total + 1, 10):
    batch = []
    for sequence in range(start, start + 10):
        message = UserMessage(content=f"{tag}:{sequence}")
        message.init(None, team)
        batch.append(PersistedEvent(team_id=team, sequence=sequence, event=message))
    try:
        store.save_events(batch)
    except DuplicateEventError as exc:
        print("refused", exc.sequence, flush=True)
        break
    print("ack", start, start + 9, flush=True)
store.close()
"""


def _start(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run_together(children: list[subprocess.Popen[str]]) -> list[list[str]]:
    """Release every child at once (after all said ready); return each one's output lines."""
    try:
        for child in children:
            assert child.stdout is not None
            line = child.stdout.readline()
            assert line.strip() == "ready", child.stderr.read() if child.stderr else line
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        outputs = []
        for child in children:
            out, err = child.communicate(timeout=180)
            assert child.returncode == 0, err
            outputs.append(out.splitlines())
        return outputs
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=30)


def _texts(store: PostgresEventStore, team_id: UUID) -> list[str]:
    texts = []
    for event in store.load_events(team_id):
        message = event.event
        assert isinstance(message, UserMessage), type(message)
        texts.append(message.content)
    return texts


def test_processes_writing_different_teams_at_once_each_keep_a_whole_ordered_log(
    initialised_url: str,
) -> None:
    count = 1500
    teams = [uuid4() for _ in range(4)]
    children = [
        _start(SUBSCRIBER_WRITER, initialised_url, str(team), f"w{n}", str(count))
        for n, team in enumerate(teams)
    ]
    outputs = _run_together(children)
    assert [out[-1] for out in outputs] == [f"durable {count}"] * len(teams)
    with PostgresEventStore.from_url(initialised_url) as store:
        for n, team in enumerate(teams):
            events = store.load_events(team)
            assert [e.sequence for e in events] == list(range(1, count + 1))
            assert _texts(store, team) == [f"w{n}:{i}" for i in range(1, count + 1)]
            assert store.get_max_sequence(team) == count


def test_two_writers_racing_on_one_team_never_interleave_a_batch_and_the_loser_is_told(
    initialised_url: str,
) -> None:
    team = uuid4()
    total = 400
    children = [_start(RACING_WRITER, initialised_url, str(team), tag, str(total)) for tag in "AB"]
    outputs = _run_together(children)
    acknowledged: dict[int, str] = {}
    refusals = 0
    for tag, lines in zip("AB", outputs, strict=True):
        for line in lines:
            word, *numbers = line.split()
            if word == "ack":
                for sequence in range(int(numbers[0]), int(numbers[1]) + 1):
                    assert sequence not in acknowledged, f"{sequence} acknowledged twice"
                    acknowledged[sequence] = tag
            else:
                assert word == "refused"
                refusals += 1
    assert refusals >= 1  # both try sequence 1: at most one of them can have it
    with PostgresEventStore.from_url(initialised_url) as store:
        texts = _texts(store, team)
        sequences = [e.sequence for e in store.load_events(team)]
    assert sequences == list(range(1, len(sequences) + 1))
    assert sorted(acknowledged) == sequences  # every acknowledged event, nothing else
    for sequence, text in zip(sequences, texts, strict=True):
        assert text == f"{acknowledged[sequence]}:{sequence}"
    for start in range(1, len(sequences) + 1, 10):  # a batch is one writer's, whole
        assert len({acknowledged[s] for s in range(start, start + 10)}) == 1


def test_one_store_shared_by_threads_of_many_teams_keeps_every_log_whole(
    initialised_url: str,
) -> None:
    import threading

    from akgentic.team import PersistenceSubscriber

    teams = [uuid4() for _ in range(6)]
    with PostgresEventStore.from_url(initialised_url + "&pool_max_size=3") as store:
        errors: list[BaseException] = []

        def run(team: UUID) -> None:
            try:
                subscriber = PersistenceSubscriber(team, store, batching=False)
                for i in range(1, 101):
                    subscriber.on_message(UserMessage(content=f"{team}:{i}"))
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(team,)) for team in teams]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(t.is_alive() for t in threads) and errors == []
        for team in teams:
            assert _texts(store, team) == [f"{team}:{i}" for i in range(1, 101)]
