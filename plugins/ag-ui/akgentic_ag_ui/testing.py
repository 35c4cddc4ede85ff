"""Reading an AG-UI run over HTTP, for tests: every event validated by ``ag_ui``'s models.

:func:`read_run` posts a ``RunAgentInput`` to ``/ag-ui/{team_id}`` of a served
console and returns a :class:`Stream`: the status, and each event parsed into the
``ag_ui.core`` class its ``type`` names, with its SSE id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
from ag_ui.core import BaseEvent, Event
from pydantic import TypeAdapter

__all__ = ["Stream", "dumped", "parse_event", "position", "read_run", "run_input"]

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


def run_input(run_id: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
    """A RunAgentInput (wire form) whose last message is the user's ``text``."""
    messages = [] if text is None else [{"id": f"m-{run_id}", "role": "user", "content": text}]
    return {"threadId": "thread-1", "runId": run_id, "messages": messages, **extra}


@dataclass
class Stream:
    """What one request answered: status, headers, and each event with its SSE id."""

    status: int
    content_type: str
    events: list[tuple[str, BaseEvent]] = field(default_factory=list)
    body: Any = None

    @property
    def types(self) -> list[str]:
        return [str(event.type.value) for _id, event in self.events]

    @property
    def ids(self) -> list[str]:
        return [ident for ident, _event in self.events]

    def of(self, cls: type[Any]) -> list[Any]:
        return [event for _id, event in self.events if isinstance(event, cls)]


def parse_event(data: str) -> BaseEvent:
    """One SSE data line as the ``ag_ui.core`` event class its ``type`` names."""
    event = EVENTS.validate_json(data)
    assert isinstance(event, BaseEvent)
    assert type(event).__name__.upper().replace("EVENT", "").replace("_", "") == str(
        event.type.value
    ).replace("_", ""), (type(event).__name__, event.type)
    return event


def read_run(
    client: httpx.Client,
    team_id: str,
    body: Any,
    *,
    last_event_id: str | None = None,
    stop_after: str | None = None,
) -> Stream:
    """POST a run and read its events (all, or up to the first of type ``stop_after``)."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    kwargs: dict[str, Any] = {"content": body} if isinstance(body, bytes | str) else {"json": body}
    with client.stream("POST", f"/ag-ui/{team_id}", headers=headers, **kwargs) as response:
        stream = Stream(response.status_code, response.headers.get("content-type", ""))
        if response.status_code != 200:
            response.read()
            stream.body = response.json()
            return stream
        ident: str | None = None
        data: list[str] = []
        for line in response.iter_lines():
            if line.startswith("id: "):
                ident = line[4:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif line == "" and data:
                event = parse_event("\n".join(data))
                assert ident is not None or event.type.value == "RUN_ERROR", "an event without id"
                stream.events.append((ident or "", event))
                ident, data = None, []
                if stop_after is not None and str(event.type.value) == stop_after:
                    break
    return stream


def position(ident: str) -> tuple[int, int]:
    seq, _dot, index = ident.partition(".")
    return int(seq), int(index)


def dumped(stream: Stream) -> list[tuple[str, str]]:
    """The events as (id, JSON) pairs, to compare streams exactly."""
    return [
        (ident, json.dumps(e.model_dump(mode="json", by_alias=True))) for ident, e in stream.events
    ]
