"""Web console speed: stream latency, history of a 10,000-event team, memory per client.

Prints one JSON object::

    {"stream_latency_ms": {"p50": x, "p95": x}, "first_page_s_10000": x,
     "history_s_10000": x, "mib_per_client": x}

``stream_latency_ms``: from ``emitMessage`` on a running team's orchestrator to the
row read by an HTTP client of ``/api/teams/{id}/stream`` (one event at a time).
``first_page_s_10000``: a console that never opened the team, asked for the last
page of its conversation (200 messages) of a log of 10,000 events;
``history_s_10000``: the same console paging back through the whole log. The log
is the real team's, padded with copies of its messages written into the store.
``mib_per_client``: growth of an ``akgentic serve`` process's resident memory per
connected stream client (50 clients).

Run: ``.venv/bin/python bench/console.py [--events 10000] [--samples 200] [--clients 50]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "console"))


def _card(llm: Any) -> str:
    # The console tests' team, so the bench measures the page those tests drive; their
    # conftest is found through sys.path at run time, which mypy does not follow.
    from conftest import console_card  # type: ignore[import-not-found]

    text: str = console_card(llm)
    return text


def _is(wanted: str) -> Any:
    return lambda row: row["id"] == wanted


def _stream_latency(client: httpx.Client, manager: Any, team_id: str, samples: int) -> list[float]:
    from uuid import UUID

    from akgentic.core.messages.message import UserMessage
    from akgentic.testing.console import StreamReader

    runtime = manager.get_runtime(UUID(team_id))
    reader = StreamReader(client, team_id)
    latencies: list[float] = []
    try:
        for index in range(samples):
            message = UserMessage(content=f"ping {index}")
            wanted = str(message.id)
            started = time.perf_counter()
            runtime.emitMessage(message)
            reader.wait_for(_is(wanted), timeout=30)
            latencies.append((time.perf_counter() - started) * 1000)
    finally:
        reader.close()
    return latencies


def _pad_log(store_url: str, team_id: str, events: int) -> None:
    from uuid import UUID, uuid4

    from akgentic.core.messages.orchestrator import SentMessage
    from akgentic.team.models import PersistedEvent
    from akgentic.team.urls import open_event_store

    store = open_event_store(store_url)
    try:
        uid = UUID(team_id)
        log = store.load_events(uid)
        sent = [e.event for e in log if isinstance(e.event, SentMessage)]
        sequence = store.get_max_sequence(uid)
        batch: list[PersistedEvent] = []
        while sequence < events:
            sequence += 1
            template = sent[sequence % len(sent)]
            copy = template.model_copy(update={"id": uuid4()})
            batch.append(PersistedEvent(team_id=uid, sequence=sequence, event=copy))
        save = getattr(store, "save_events", None)
        if save is not None:
            save(batch)
        else:
            for event in batch:
                store.save_event(event)
    finally:
        store.close()


def _history(store_url: str, team_id: str) -> tuple[float, float]:
    from akgentic.testing.console import running_console

    with running_console(store_url) as (_server, client):
        started = time.perf_counter()
        page = client.get(f"/api/teams/{team_id}/events", params={"limit": 200}).json()
        first = time.perf_counter() - started
        count = len(page["events"])
        while page["next_before"] is not None:
            page = client.get(
                f"/api/teams/{team_id}/events",
                params={"limit": 200, "before": page["next_before"]},
            ).json()
            count += len(page["events"])
        total = time.perf_counter() - started
        assert count == page["total"] or count > 0
    return first, total


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _memory_per_client(store_url: str, team_id: str, clients: int, cwd: str) -> float:
    from akgentic.testing.console import ServeProcess

    with ServeProcess(store_url, cwd) as serve:
        url = serve.url + f"api/teams/{team_id}/stream"
        auth = {"Authorization": f"Bearer {serve.token}"}
        httpx.get(serve.url + "api/teams", headers=auth).raise_for_status()
        before = _rss_mib(serve.process.pid)
        connected = threading.Semaphore(0)
        stop = threading.Event()

        def hold() -> None:
            with httpx.stream("GET", url, headers=auth, timeout=None) as response:
                response.raise_for_status()
                for line in response.iter_lines():
                    if line.startswith(": connected"):
                        connected.release()
                    if stop.is_set():
                        return

        threads = [threading.Thread(target=hold, daemon=True) for _ in range(clients)]
        for thread in threads:
            thread.start()
        for _ in range(clients):
            if not connected.acquire(timeout=60):
                raise RuntimeError("a stream client did not connect")
        after = _rss_mib(serve.process.pid)
        stop.set()
    return max(0.0, (after - before) / clients)


def main() -> None:
    """Run every measurement and print the JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--clients", type=int, default=50)
    options = parser.parse_args()

    from uuid import UUID

    from conftest import ConsoleScript

    from akgentic.llm.scripted_server import ScriptedLLMServer
    from akgentic.testing.console import running_console

    with tempfile.TemporaryDirectory(prefix="akgentic-bench-console-") as scratch:
        store_url = f"sqlite:///{scratch}/bench.db"
        with (
            ScriptedLLMServer(fallback=ConsoleScript()) as llm,
            running_console(store_url) as (server, client),
        ):
            card = _card(llm)
            team_id = client.post("/api/teams", json={"card": card}).json()["team_id"]
            client.post(f"/api/teams/{team_id}/messages", json={"text": "hello"})
            assert server.console is not None
            manager = server.console.service.manager
            runtime = manager.get_runtime(UUID(team_id))
            assert runtime is not None
            runtime.wait_idle(60)
            latencies = _stream_latency(client, manager, team_id, options.samples)
            client.post(f"/api/teams/{team_id}/stop")
        _pad_log(store_url, team_id, options.events)
        first, total = _history(store_url, team_id)
        per_client = _memory_per_client(store_url, team_id, options.clients, scratch)
    quantiles = statistics.quantiles(latencies, n=20)
    print(
        json.dumps(
            {
                "stream_latency_ms": {
                    "p50": round(statistics.median(latencies), 2),
                    "p95": round(quantiles[18], 2),
                },
                f"first_page_s_{options.events}": round(first, 3),
                f"history_s_{options.events}": round(total, 3),
                "mib_per_client": round(per_client, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
