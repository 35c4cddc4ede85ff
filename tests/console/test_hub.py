"""ConsoleHub: event rows go to the clients that take them; status and bye go to all."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import uuid4

from akgentic.console.hub import ConsoleHub, StreamClient
from akgentic.core.messages import UserMessage


def test_a_client_without_rows_gets_the_status_and_the_bye_but_no_event_rows() -> None:
    team_id = uuid4()
    hub = ConsoleHub()

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        loop = asyncio.get_running_loop()
        viewer, quiet = StreamClient(loop), StreamClient(loop)
        hub.connect(team_id, viewer)
        hub.connect(team_id, quiet, rows=False)
        hub.on_message(UserMessage(content="hello").init(None, team_id))
        hub.publish(team_id, {"kind": "status", "status": "stopped"})
        hub.close_streams()
        got: list[list[dict[str, Any]]] = []
        for client in (viewer, quiet):
            rows: list[dict[str, Any]] = []
            while not rows or rows[-1].get("kind") != "bye":
                rows.append(await asyncio.wait_for(client.queue.get(), 10))
            got.append(rows)
        hub.disconnect(team_id, viewer)
        hub.disconnect(team_id, quiet)
        return got[0], got[1]

    viewer_rows, quiet_rows = asyncio.run(scenario())
    assert [row.get("kind") for row in quiet_rows] == ["status", "bye"]
    assert len(viewer_rows) == 3 and viewer_rows[1:] == quiet_rows
    assert viewer_rows[0]["kind"] != "status"
    assert hub.client_count(team_id) == 0


def test_a_team_whose_only_client_takes_no_rows_sends_none() -> None:
    team_id = uuid4()
    hub = ConsoleHub()

    async def scenario() -> dict[str, Any]:
        quiet = StreamClient(asyncio.get_running_loop())
        hub.connect(team_id, quiet, rows=False)
        hub.on_message(UserMessage(content="hello").init(None, team_id))
        hub.publish(team_id, {"kind": "status", "status": "running"})
        first = await asyncio.wait_for(quiet.queue.get(), 10)  # rows arrive in order
        hub.disconnect(team_id, quiet)
        return first

    assert asyncio.run(scenario()) == {"kind": "status", "status": "running"}
