"""A batched PersistenceSubscriber killed with SIGKILL keeps every acknowledged event."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from uuid import uuid4

import pytest

from akgentic.team import SqliteEventStore, YamlEventStore

CHILD = """
import sys
from uuid import UUID
from akgentic.core.messages import UserMessage
from akgentic.team import PersistenceSubscriber
from akgentic.team.stores.{module} import {cls}

store = {cls}.from_url(sys.argv[1])
team_id = UUID(sys.argv[2])
subscriber = PersistenceSubscriber(team_id, store, batching=True)
reported = 0
sequence = 0
while True:
    sequence += 1
    subscriber.on_message(UserMessage(content=f"{{sequence}}:" + "x" * 2000))
    if subscriber.durable_sequence != reported:
        reported = subscriber.durable_sequence
        print(reported, flush=True)
"""


@pytest.mark.parametrize(
    ("module", "cls", "url"),
    [
        ("sqlite", "SqliteEventStore", "sqlite:///{tmp}/a.db"),
        ("yaml", "YamlEventStore", "yaml:///{tmp}/teams"),
    ],
)
def test_a_killed_team_keeps_every_event_reported_durable(
    module: str, cls: str, url: str, tmp_path: Path
) -> None:
    store_url = url.format(tmp=tmp_path)
    team_id = uuid4()
    code = CHILD.format(module=module, cls=cls)
    durable = 0
    # ``with`` closes the child's pipes once it is reaped.
    with subprocess.Popen(
        [sys.executable, "-c", code, store_url, str(team_id)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            assert child.stdout is not None
            for line in child.stdout:
                durable = int(line)
                if durable >= 300:
                    break
            os.kill(child.pid, signal.SIGKILL)
            for line in child.stdout.read().splitlines():
                durable = max(durable, int(line))
            child.wait(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=60)
        assert durable >= 300, child.stderr.read() if child.stderr else ""

    opener = SqliteEventStore.from_url if module == "sqlite" else YamlEventStore.from_url
    store = opener(store_url)
    try:
        sequences = [e.sequence for e in store.load_events(team_id)]
        assert sequences == list(range(1, len(sequences) + 1))
        assert len(sequences) >= durable
        contents = [e.event.content for e in store.load_events(team_id)]  # type: ignore[attr-defined]
        assert all(text.startswith(f"{i}:") for i, text in enumerate(contents, start=1))
    finally:
        store.close()


def test_a_process_exiting_without_stopping_its_team_still_writes_the_queue(
    tmp_path: Path,
) -> None:
    team_id = uuid4()
    store_url = f"sqlite:///{tmp_path}/a.db"
    code = (
        "import sys\n"
        "from uuid import UUID\n"
        "from akgentic.core.messages import UserMessage\n"
        "from akgentic.team import PersistenceSubscriber, SqliteEventStore\n"
        "store = SqliteEventStore.from_url(sys.argv[1])\n"
        "subscriber = PersistenceSubscriber(UUID(sys.argv[2]), store, batching=True)\n"
        "for i in range(500):\n"
        "    subscriber.on_message(UserMessage(content=str(i)))\n"
    )
    subprocess.run([sys.executable, "-c", code, store_url, str(team_id)], check=True, timeout=120)
    with SqliteEventStore.from_url(store_url) as store:
        assert store.get_max_sequence(team_id) == 500


@pytest.mark.parametrize("url", ["sqlite:///{tmp}/a.db", "yaml:///{tmp}/teams"])
def test_a_file_name_that_is_not_utf8_does_not_stop_the_log(url: str, tmp_path: Path) -> None:
    # A directory listing as a tool returns it: the name's bytes are not UTF-8,
    # so os.listdir hands back a lone surrogate. Every event after it must be
    # stored, and the process must exit without "events lost at exit".
    listed = tmp_path / "listed"
    listed.mkdir()
    (Path(os.fsdecode(os.fsencode(listed) + b"/caf\xe9-\xff.txt"))).write_text("x")
    team_id = uuid4()
    store_url = url.format(tmp=tmp_path)
    code = (
        "import os, sys\n"
        "from uuid import UUID\n"
        "from akgentic.core.messages import ResultMessage, UserMessage\n"
        "from akgentic.team import PersistenceSubscriber\n"
        "from akgentic.team.urls import open_event_store\n"
        "store = open_event_store(sys.argv[1])\n"
        "subscriber = PersistenceSubscriber(UUID(sys.argv[2]), store, batching=True)\n"
        "subscriber.on_message(UserMessage(content='list the files'))\n"
        "subscriber.on_message(ResultMessage(content=', '.join(os.listdir(sys.argv[3]))))\n"
        "for i in range(50):\n"
        "    subscriber.on_message(UserMessage(content=str(i)))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, store_url, str(team_id), str(listed)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "lost" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    from akgentic.team.urls import open_event_store

    store = open_event_store(store_url)
    try:
        events = store.load_events(team_id)
        assert [e.sequence for e in events] == list(range(1, 53))
        assert events[1].event.content == "caf\\xe9-\\xff.txt"  # type: ignore[attr-defined]
    finally:
        store.close()
