"""AG-UI stream latency over a direct ``TeamRuntime.send`` on the same echo team.

Prints one JSON object::

    {"agui_first_event_ms_p50": x, "agui_run_started_ms": {"p50": x, "p95": x},
     "agui_first_content_ms": {"p50": x, "p95": x}, "direct_reply_ms": {"p50": x, "p95": x},
     "samples": n, "store": "sqlite"}

The team: ``@Human`` (a ``HumanProxy``) enters it, ``@Echo`` answers every message
with ``Echo: <text>`` to its sender, no model. It runs in a console served from a
thread of this process (``akgentic.testing.console.running_console``, SQLite store
in a temporary directory, the default batched persistence), with the ag-ui plugin's
routes mounted as ``akgentic serve`` mounts them.

Measured, alternately on that one team, ``--samples`` times after ``--warmup`` rounds:

- ``direct_reply_ms``: from ``runtime.send(text)`` to the orchestrator reporting
  the ``SentMessage`` of the echo to ``@Human`` (a subscriber of the team sees it);
  nothing is waited for on disk;
- ``agui_run_started_ms``: from the start of the HTTP ``POST /ag-ui/{team_id}``
  (httpx, keep-alive connection, token checked) to the ``RUN_STARTED`` event read by
  the client; it is emitted once the message the run sent is stored, so it includes
  one store commit;
- ``agui_first_content_ms``: from the same start to the ``TEXT_MESSAGE_CONTENT``
  of the echo read by the client (the reply is stored, read back from the log,
  projected, encoded by the SDK and sent); the client then reads to
  ``RUN_FINISHED`` so the team is idle before the next sample.

``agui_first_event_ms_p50`` is ``agui_first_content_ms.p50 - direct_reply_ms.p50``:
what the AG-UI path adds, per reply, over talking to the team in-process. The
issue's target is at most 5 ms.

Run: ``.venv/bin/python bench/interop_agui.py [--samples 200] [--warmup 20]``.
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
from uuid import UUID

import httpx

from akgentic.agent import AgentMessage, HumanProxy
from akgentic.core import AgentCard, BaseConfig, BaseState
from akgentic.core.agent import Akgent
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.team import TeamCard, TeamCardMember


class BenchEcho(Akgent[BaseConfig, BaseState]):
    """Answers every message with ``Echo: <text>``, to its sender."""

    def receiveMsg_AgentMessage(self, message: AgentMessage) -> None:
        if message.sender is not None:
            self.send(
                message.sender, AgentMessage(content=f"Echo: {message.content}", type="response")
            )


class Replies:
    """A team subscriber: wakes whoever waits for the echo of one text."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.waiting: dict[str, threading.Event] = {}

    def expect(self, text: str) -> threading.Event:
        event = threading.Event()
        with self.lock:
            self.waiting[f"Echo: {text}"] = event
        return event

    def on_message(self, msg: Any) -> None:
        if isinstance(msg, SentMessage) and msg.recipient.is_user_proxy:
            with self.lock:
                event = self.waiting.pop(str(getattr(msg.message, "content", "")), None)
            if event is not None:
                event.set()

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        return None

    def on_stop_request(self, team_id: UUID) -> None:
        return None

    def on_stop(self, team_id: UUID) -> None:
        return None


def card() -> TeamCard:
    return TeamCard(
        name="agui-bench",
        description="an echo team entered by a human",
        entry_point=TeamCardMember(
            card=AgentCard(
                agent_class=HumanProxy,
                description="the human",
                config=BaseConfig(name="@Human", role="Human"),
            )
        ),
        members=[
            TeamCardMember(
                card=AgentCard(
                    agent_class=BenchEcho,
                    description="echoes",
                    config=BaseConfig(name="@Echo", role="Echo"),
                )
            )
        ],
        message_types=[AgentMessage],
    )


def _agui(client: httpx.Client, team_id: str, run_id: str, text: str) -> tuple[float, float]:
    body = {
        "threadId": "bench",
        "runId": run_id,
        "messages": [{"id": run_id, "role": "user", "content": text}],
    }
    started = time.perf_counter()
    first = content = None
    with client.stream("POST", f"/ag-ui/{team_id}", json=body) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            kind = json.loads(line[6:])["type"]
            now = time.perf_counter()
            if kind == "RUN_STARTED":
                first = now
            elif kind == "TEXT_MESSAGE_CONTENT" and content is None:
                content = now
            elif kind in ("RUN_FINISHED", "RUN_ERROR"):
                break
    assert first is not None and content is not None, "the run streamed no reply"
    return (first - started) * 1000, (content - started) * 1000


def _direct(runtime: Any, replies: Replies, text: str) -> float:
    arrived = replies.expect(text)
    started = time.perf_counter()
    runtime.send(text)
    if not arrived.wait(30):
        raise RuntimeError("no echo from the direct send")
    elapsed = (time.perf_counter() - started) * 1000
    runtime.wait_idle(timeout=30)
    return elapsed


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 3),
        "p95": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()

    from akgentic.testing.console import running_console

    replies = Replies()
    direct: list[float] = []
    started_ms: list[float] = []
    content_ms: list[float] = []
    with (
        tempfile.TemporaryDirectory() as directory,
        running_console(f"sqlite:///{Path(directory) / 'bench.db'}") as (server, client),
    ):
        assert server.console is not None
        manager = server.console.service.manager
        manager.subscribers.append(replies)
        runtime = manager.create_team(card())
        team_id = str(runtime.id)
        for index in range(args.warmup + args.samples):
            text = f"ping {index}"
            reply = _direct(runtime, replies, f"direct {text}")
            first, content = _agui(client, team_id, f"run-{index}", text)
            if index >= args.warmup:
                direct.append(reply)
                started_ms.append(first)
                content_ms.append(content)
    report = {
        "agui_first_event_ms_p50": round(
            statistics.median(content_ms) - statistics.median(direct), 3
        ),
        "agui_run_started_ms": _summary(started_ms),
        "agui_first_content_ms": _summary(content_ms),
        "direct_reply_ms": _summary(direct),
        "samples": len(direct),
        "store": "sqlite",
    }
    json.dump(report, sys.stdout)
    print()


if __name__ == "__main__":
    main()
