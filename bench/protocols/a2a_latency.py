"""A2A bench: what serving a team over A2A adds to a direct ``TeamRuntime.send``.

    python bench/interop_a2a.py [--samples 200] [--tasks 1000] [--in-flight 32]

Serves a console (``akgentic serve`` in a thread, SQLite store) with one echo team
(``akgentic_a2a.testing.EchoAgent``, no model) and prints one JSON object:

- ``a2a_ms_p50``: median round trip of an A2A ``SendMessage`` with the SDK's client
  (until the completed task comes back) minus the median of a direct
  ``TeamRuntime.send`` until the echo to the human is recorded, on the same team,
  ``--samples`` of each after a warm-up;
- ``a2a_tasks_per_s``: completed A2A tasks per second with ``--in-flight`` requests
  in flight; plus the raw medians and the sample counts.

Targets (issue #29): ``a2a_ms_p50`` <= 5 ms, ``a2a_tasks_per_s`` >= 500.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
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


async def _a2a(url: str, token: str, warm: int, count: int, tasks: int, flight: int) -> Any:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types.a2a_pb2 import TaskState

    limits = httpx.Limits(max_connections=flight, max_keepalive_connections=flight)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=60, limits=limits) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False))
        client = await factory.create_from_url(url)

        async def one() -> float:
            start = time.perf_counter()
            task = None
            async for response in client.send_message(_request("ping")):
                task = response.task
            assert task is not None and task.status.state == TaskState.TASK_STATE_COMPLETED
            return time.perf_counter() - start

        try:
            for _ in range(warm):
                await one()
            times = [await one() for _ in range(count)]
            gate = asyncio.Semaphore(flight)

            async def gated() -> float:
                async with gate:
                    return await one()

            start = time.perf_counter()
            await asyncio.gather(*(gated() for _ in range(tasks)))
            rate = tasks / (time.perf_counter() - start)
        finally:
            await client.close()
    return times, rate


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
            a2a, rate = asyncio.run(_a2a(url, str(server.token), warm, samples, tasks, flight))
    direct_p50 = statistics.median(direct) * 1000
    a2a_p50 = statistics.median(a2a) * 1000
    return {
        "a2a_ms_p50": round(a2a_p50 - direct_p50, 3),
        "a2a_tasks_per_s": round(rate, 1),
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
    args = parser.parse_args(argv)
    print(json.dumps(run(args.samples, args.tasks, args.in_flight)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
