"""A team using the card cannot be forked: the fork names the card and makes nothing.

The team is written straight into a store (its record and one event): the refusal
comes before anything of the fork is read or written, with no actor running.
"""

from __future__ import annotations

from pathlib import Path
from uuid import uuid4

import pytest
from akgentic_notification import NotificationTool

from akgentic.agent import AgentConfig, BaseAgent
from akgentic.core import AgentCard
from akgentic.core.messages.message import UserMessage
from akgentic.team import ForkRefusedError, PersistedEvent, Process, SqliteEventStore
from akgentic.team.fork import fork_team
from akgentic.testing.teams import human_led_team


def test_a_fork_of_a_team_with_reminders_is_refused_naming_the_card(tmp_path: Path) -> None:
    writer = AgentCard(
        description="Writes, and reminds itself",
        agent_class=BaseAgent,
        config=AgentConfig(name="@Writer", role="Writer", tools=[NotificationTool()]),
    )
    process = Process(team_id=uuid4(), team_card=human_led_team("reminders", "A writer", writer))
    with SqliteEventStore(tmp_path / "teams.db") as store:
        store.save_team(process)
        message = UserMessage(content="hello").init(None, process.team_id)
        store.save_event(PersistedEvent(team_id=process.team_id, sequence=1, event=message))
        before = store.stored_team_ids()
        with pytest.raises(
            ForkRefusedError, match="card 'notification' keeps its pending"
        ) as refused:
            fork_team(store, process.team_id, 1)
        assert refused.value.card == "notification"
        assert store.stored_team_ids() == before
