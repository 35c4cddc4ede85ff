"""The team page's history: the newest page is read from the store, not the whole log."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from akgentic.core.messages import SentMessage, UserMessage
from akgentic.team.models import PersistedEvent, Process, TeamStatus
from akgentic.testing.console import running_console
from akgentic.testing.event_store_fixtures import contract_card, contract_messages

EVENTS = 1_200


def _stored_team(store: Any) -> UUID:
    """A stopped team whose log mixes messages (every third event) with other events."""
    team_id = uuid4()
    now = datetime.now(UTC)
    store.save_team(
        Process(
            team_id=team_id,
            team_card=contract_card(),
            status=TeamStatus.STOPPED,
            user_id="alice",
            user_email="alice@example.org",
            created_at=now,
            updated_at=now,
        )
    )
    templates = contract_messages(team_id)
    sent = next(m for m in templates if isinstance(m, SentMessage))
    other = [m for m in templates if not isinstance(m, SentMessage)]
    batch = []
    for sequence in range(1, EVENTS + 1):
        if sequence % 3 == 0:
            inner = UserMessage(content=f"message {sequence}").init(sent.sender, team_id)
            event: Any = sent.model_copy(update={"id": uuid4(), "message": inner})
        else:
            event = other[sequence % len(other)].model_copy(update={"id": uuid4()})
        batch.append(PersistedEvent(team_id=team_id, sequence=sequence, event=event))
    store.save_events(batch)
    return team_id


def _walk(client: Any, team_id: UUID, **params: Any) -> tuple[list[int], int]:
    """Every row's sequence, paging back from the newest page; and the number of pages."""
    url = f"/api/teams/{team_id}/events"
    page = client.get(url, params={**params, "limit": 150}).json()
    seqs = [r["seq"] for r in page["events"]]
    pages = 1
    while page["next_before"] is not None:
        page = client.get(url, params={**params, "limit": 150, "before": page["next_before"]})
        page = page.json()
        seqs = [r["seq"] for r in page["events"]] + seqs
        pages += 1
    return seqs, pages


def test_the_newest_page_is_read_without_loading_the_whole_log(tmp_path: Path) -> None:
    with running_console(f"sqlite:///{tmp_path}/c.db") as (server, client):
        assert server.console is not None
        store = server.console.service.manager.event_store
        team_id = _stored_team(store)
        full_loads: list[UUID] = []
        original = store.load_events

        def counted(team: UUID) -> list[PersistedEvent]:
            full_loads.append(team)
            return original(team)

        store.load_events = counted  # type: ignore[method-assign,assignment]
        newest = client.get(f"/api/teams/{team_id}/events", params={"limit": 50}).json()
        assert [r["seq"] for r in newest["events"]] == list(range(EVENTS - 49, EVENTS + 1))
        assert newest["total"] == EVENTS
        assert newest["next_before"] == EVENTS - 49
        talk = client.get(
            f"/api/teams/{team_id}/events", params={"limit": 100, "kind": "message"}
        ).json()
        assert [r["seq"] for r in talk["events"]] == list(range(EVENTS - 297, EVENTS + 1, 3))
        assert {r["kind"] for r in talk["events"]} == {"message"}
        assert talk["next_before"] == EVENTS - 297
        one = client.get(f"/api/teams/{team_id}/events/7").json()
        assert one["event"]["sequence"] == 7
        assert full_loads == []


def test_paging_back_gives_every_row_once_filtered_or_not(tmp_path: Path) -> None:
    with running_console(f"sqlite:///{tmp_path}/c.db") as (server, client):
        assert server.console is not None
        team_id = _stored_team(server.console.service.manager.event_store)
        every, pages = _walk(client, team_id)
        assert every == list(range(1, EVENTS + 1))
        assert pages == 8
        talk, _pages = _walk(client, team_id, kind="message")
        assert talk == list(range(3, EVENTS + 1, 3))
        # Once the log is in memory (the roster read it), pages are cut from it alike.
        client.get(f"/api/teams/{team_id}/roster").raise_for_status()
        assert _walk(client, team_id, kind="message")[0] == talk
