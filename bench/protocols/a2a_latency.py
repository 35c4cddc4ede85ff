"""A2A bench: what serving a team over A2A adds to a direct ``TeamRuntime.send``.

    python bench/interop_a2a.py [--samples 200] [--tasks 1000] [--in-flight 32]

Serves a console (``akgentic serve`` in a thread, SQLite store) with one echo team
(``akgentic_a2a.testing.EchoAgent``, no model) and prints one JSON object:

- ``a2a_ms_p50``: median round trip of an A2A ``SendMessage`` with the SDK's client
  (until the completed task comes back) minus the median of a direct
  ``TeamRuntime.send`` until the echo to the human is recorded, on the same team,
  ``--samples`` of each after a warm-up;
- ``a2a_tasks_per_s``: completed A2A tasks per second with ``--in-flight`` requests
  in flight, sent by ``--in-flight`` SDK clients in a process of their own (as the
  clients of a server are): on the shared 2-core machine the client's CPU would
  otherwise count against the server's, and one interpreter lock would serialise
  both;
- ``a2a_server_cpu_ms_per_task``: CPU time of the server's process (all its threads:
  HTTP, JSON-RPC, the team's actors, the store's writer) per task of that run, the
  figure the machine's load does not move; plus the raw medians and the sample
  counts.

Targets (issue #29): ``a2a_ms_p50`` <= 5 ms, ``a2a_tasks_per_s`` >= 500.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

KEYS = (
    "a2a_ms_p50",
    "a2a_tasks_per_s",
    "a2a_server_cpu_ms_per_task",
    "a2a_round_trip_ms_p50",
    "direct_ms_p50",
    "samples",
    "tasks",
    "in_flight",
)


class _Replies:
    """Subscriber: sets the event of a message once its echo to the human is recorded."""

    def __init__(self) -> None:
        self.waiting: dict[Any, threading.Event] = {}

    def set_restoring(self, team_id: Any, restoring: bool) -> None:
        return None

    def on_stop_request(self, team_id: Any) -> None:
        return None

    def on_stop(self, team_id: Any) -> None:
        return None

    def on_message(self, msg: Any) -> None:
        from akgentic.core.messages.orchestrator import SentMessage

        if isinstance(msg, SentMessage) and msg.recipient.is_user_proxy:
            event = self.waiting.get(msg.message.parent_id)
            if event is not None:
                event.set()


def _direct(runtime: Any, replies: _Replies, count: int) -> list[float]:
    from akgentic.agent import AgentMessage

    times = []
    for _ in range(count):
        message = AgentMessage(content="ping")
        event = replies.waiting[message.id] = threading.Event()
        start = time.perf_counter()
        runtime.send(message)
        if not event.wait(30):
            raise RuntimeError("no echo within 30 s")
        times.append(time.perf_counter() - start)
        del replies.waiting[message.id]
    return times


def _request(text: str) -> Any:
    from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

    return SendMessageRequest(
        message=Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    )


async def _latency(url: str, token: str, warm: int, count: int) -> list[float]:
    """Sequential ``SendMessage`` round trips (seconds), after ``warm`` of them."""
    from a2a.client import ClientConfig, ClientFactory

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False))
        client = await factory.create_from_url(url)
        try:
            for _ in range(warm):
                await _one(client)
            return [await _one(client) for _ in range(count)]
        finally:
            await client.close()


async def _one(client: Any) -> float:
    from a2a.types.a2a_pb2 import TaskState

    start = time.perf_counter()
    task = None
    async for response in client.send_message(_request("ping")):
        task = response.task
    assert task is not None and task.status.state == TaskState.TASK_STATE_COMPLETED
    return time.perf_counter() - start


async def _load(url: str, token: str, tasks: int, flight: int) -> float:
    """Completed tasks per second with ``flight`` clients each keeping one task in flight.

    Each client has its own connection (its own ``httpx`` pool): one pool of 32
    connections checks every idle connection's socket on each request
    (``httpcore``'s ``_assign_requests_to_connections``), which cost the client more
    CPU than the server spent on the task.
    """
    from a2a.client import ClientConfig, ClientFactory

    headers = {"Authorization": f"Bearer {token}"}
    https = [httpx.AsyncClient(headers=headers, timeout=60) for _ in range(flight)]
    clients: list[Any] = []
    try:
        for http in https:
            factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False))
            clients.append(await factory.create_from_url(url))
        await asyncio.gather(*(_one(client) for client in clients))  # connections open
        left = tasks

        async def worker(client: Any) -> None:
            nonlocal left
            while left > 0:
                left -= 1
                await _one(client)

        start = time.perf_counter()
        await asyncio.gather(*(worker(client) for client in clients))
        return tasks / (time.perf_counter() - start)
    finally:
        for client in clients:
            await client.close()
        for http in https:
            await http.aclose()


def _load_in_child(url: str, token: str, tasks: int, flight: int) -> float:
    """:func:`_load` in a process of its own: the clients do not share the server's GIL."""
    env = {**os.environ, "AKGENTIC_BENCH_TOKEN": token}
    command = [sys.executable, __file__, "--load", url, "--tasks", str(tasks)]
    done = subprocess.run(
        [*command, "--in-flight", str(flight)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the load process failed: {done.stderr.strip()[-2000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["tasks_per_s"])


def run(samples: int, tasks: int, flight: int) -> dict[str, Any]:
    from akgentic_a2a.testing import echo_team_yaml

    from akgentic.testing.console import running_console

    warm = max(20, samples // 10)
    with tempfile.TemporaryDirectory() as directory:
        store = f"sqlite:///{Path(directory) / 'bench.db'}"
        with running_console(store) as (server, client):
            console = server.console
            assert console is not None
            manager = console.service.manager
            replies = _Replies()
            manager.subscribers.append(replies)
            created = client.post("/api/teams", json={"card": echo_team_yaml()})
            created.raise_for_status()
            team_id = created.json()["team_id"]
            runtime = manager.get_runtime(team_id)
            _direct(runtime, replies, warm)
            direct = _direct(runtime, replies, samples)
            url = f"{server.url}a2a/{team_id}"
            token = str(server.token)
            a2a = asyncio.run(_latency(url, token, warm, samples))
            cpu = time.process_time()
            rate = _load_in_child(url, token, tasks, flight)
            cpu = time.process_time() - cpu
    direct_p50 = statistics.median(direct) * 1000
    a2a_p50 = statistics.median(a2a) * 1000
    return {
        "a2a_ms_p50": round(a2a_p50 - direct_p50, 3),
        "a2a_tasks_per_s": round(rate, 1),
        "a2a_server_cpu_ms_per_task": round(cpu * 1000 / tasks, 3),
        "a2a_round_trip_ms_p50": round(a2a_p50, 3),
        "direct_ms_p50": round(direct_p50, 3),
        "samples": samples,
        "tasks": tasks,
        "in_flight": flight,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--load", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.load:  # the client side of the throughput run (see _load_in_child)
        token = os.environ["AKGENTIC_BENCH_TOKEN"]
        rate = asyncio.run(_load(args.load, token, args.tasks, args.in_flight))
        print(json.dumps({"tasks_per_s": rate}))
        return 0
    print(json.dumps(run(args.samples, args.tasks, args.in_flight)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
