"""An AG-UI client: post a RunAgentInput to a team of `akgentic serve`, print its events.

Usage::

    AKGENTIC_CONSOLE_TOKEN=... python examples/ag_ui_client.py URL TEAM_ID "text" [--answer TEXT]

``URL`` is the console's (``http://127.0.0.1:8765``), ``TEAM_ID`` a team running in
it. The script sends ``text`` as the user's message and prints one line per event
(its id, its type, what it carries). When the run ends on questions to the human
(an interrupt) and ``--answer`` is given, a second run resumes them with that
answer. A dropped connection is picked up again with ``Last-Event-ID``: the stream
continues after the last event printed, nothing twice. Every event is parsed by
the AG-UI SDK's models (``pip install ag-ui-protocol httpx``).
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from typing import Any

import httpx
from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    Event,
    ResumeEntry,
    RunAgentInput,
    RunFinishedEvent,
    UserMessage,
)
from pydantic import TypeAdapter

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


def describe(event: BaseEvent) -> str:
    """What an event carries, on one line (text is printed as text, never interpreted)."""
    data = event.model_dump(by_alias=True, exclude={"type"})
    for key in ("delta", "content", "toolCallName", "snapshot", "outcome", "message"):
        if key in data:
            return f"{key}={data[key]!r}"
    return ""


def run(client: httpx.Client, team: str, body: RunAgentInput) -> RunFinishedEvent | None:
    """Post ``body`` and print its events until RUN_FINISHED (reconnecting if cut off)."""
    last_id: str | None = None
    for _attempt in range(5):
        headers = {"Last-Event-ID": last_id} if last_id else {}
        payload = body.model_dump_json(by_alias=True)
        try:
            with client.stream("POST", f"/ag-ui/{team}", content=payload, headers=headers) as r:
                if r.status_code != 200:
                    r.read()
                    sys.exit(f"refused ({r.status_code}): {r.json().get('detail')}")
                ident = None
                for line in r.iter_lines():
                    if line.startswith("id: "):
                        ident = line[4:]
                    elif line.startswith("data: "):
                        event = EVENTS.validate_json(line[6:])
                        print(f"{ident or '-':>8} {event.type.value} {describe(event)}", flush=True)
                        last_id = ident or last_id
                        if isinstance(event, RunFinishedEvent):
                            return event
                        if event.type.value == "RUN_ERROR":
                            return None
        except httpx.TransportError as exc:
            print(f"connection lost ({exc}); reconnecting after {last_id}", flush=True)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("team_id")
    parser.add_argument("text")
    parser.add_argument("--answer", help="answer the questions the run ends on")
    args = parser.parse_args()
    token = os.environ.get("AKGENTIC_CONSOLE_TOKEN", "")
    thread = str(uuid.uuid4())
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=args.url, headers=headers, timeout=120) as client:
        first = RunAgentInput(
            thread_id=thread,
            run_id=str(uuid.uuid4()),
            protocol_version=PROTOCOL_VERSION,
            messages=[UserMessage(id=str(uuid.uuid4()), content=args.text)],
        )
        finished = run(client, args.team_id, first)
        outcome = finished.outcome if finished is not None else None
        if args.answer and outcome is not None and outcome.type == "interrupt":
            resume = RunAgentInput(
                thread_id=thread,
                run_id=str(uuid.uuid4()),
                protocol_version=PROTOCOL_VERSION,
                messages=[],
                resume=[
                    ResumeEntry(interrupt_id=i.id, status="resolved", payload=args.answer)
                    for i in outcome.interrupts
                ],
            )
            run(client, args.team_id, resume)


if __name__ == "__main__":
    main()
