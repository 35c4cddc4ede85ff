"""A team killed with SIGKILL mid-conversation, for store test suites.

:func:`kill_mid_conversation` runs a two-agent team on a store URL in a child
process, sends it messages, makes each batch of 20 durable and kills the child
once ``messages`` are acknowledged; :func:`check_surviving_log` then checks the
log a fresh store handle reads back. The test goes on to resume the team::

    killed = kill_mid_conversation(url, "my_agents.Echo", env)
    with open_event_store(url) as store:
        events = store.load_events(killed.team_id)
        check_surviving_log(events, killed)
        ...  # resume the team and check what the store under test guarantees

``agent_class`` must be importable in the child (put its folder on
``PYTHONPATH`` in ``env``) and answer any ``UserMessage``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID

from akgentic.core.messages.message import UserMessage
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.team.models import PersistedEvent

__all__ = ["KilledTeam", "check_surviving_log", "kill_mid_conversation"]

_CHILD = """
import sys
from akgentic.core import ActorSystem
from akgentic.team import TeamCard, TeamManager, open_event_store

agent = sys.argv[2]
card = TeamCard.model_validate({
    "entry_point": {"card": {"agent_class": agent, "description": "e",
                             "config": {"name": "@Entry", "role": "Entry"}}},
    "members": [{"card": {"agent_class": agent, "description": "e",
                          "config": {"name": "@Echo", "role": "Echo"}}}],
    "message_types": ["akgentic.core.messages.message.UserMessage"],
})
manager = TeamManager(ActorSystem(), open_event_store(sys.argv[1]))
runtime = manager.create_team(card)
persistence = manager.get_persistence(runtime.id)
print("team", runtime.id, flush=True)
n = 0
while True:
    n += 1
    runtime.send(f"message {n}")
    if n % 20 == 0:
        runtime.wait_idle(30)
        persistence.flush(30)
        print("durable", persistence.durable_sequence, n, flush=True)
"""


@dataclass(frozen=True)
class KilledTeam:
    """What the killed child reported before it died."""

    team_id: UUID
    #: Highest sequence the child's persistence acknowledged as durable.
    durable: int
    #: Messages sent (``"message 1"`` ... ``"message <sent>"``) up to that point.
    sent: int
    #: The child's exit code (``-SIGKILL`` when the kill landed).
    returncode: int | None


def kill_mid_conversation(
    url: str, agent_class: str, env: Mapping[str, str], messages: int = 100
) -> KilledTeam:
    """Run a team on ``url`` in a child process and SIGKILL it mid-conversation.

    The child stops being read once at least ``messages`` are durable; it is
    killed whatever happens. Asserts that the child got that far.
    """
    team_id: UUID | None = None
    durable = sent = 0
    # ``with`` closes the child's pipes once it is reaped.
    with subprocess.Popen(
        [sys.executable, "-c", _CHILD, url, agent_class],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env),
    ) as child:
        try:
            assert child.stdout is not None
            for line in child.stdout:
                words = line.split()
                if words[0] == "team":
                    team_id = UUID(words[1])
                elif words[0] == "durable":
                    durable, sent = int(words[1]), int(words[2])
                    if sent >= messages:
                        break
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=60)
        assert team_id is not None and sent >= messages, child.stderr.read() if child.stderr else ""
    return KilledTeam(team_id, durable, sent, child.returncode)


def check_surviving_log(events: Sequence[PersistedEvent], killed: KilledTeam) -> None:
    """Assert the log holds every durable event, gapless, with every sent message in order."""
    assert len(events) >= killed.durable
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    texts = [
        e.event.message.content
        for e in events
        if isinstance(e.event, SentMessage) and isinstance(e.event.message, UserMessage)
    ]
    assert texts[: killed.sent] == [f"message {i}" for i in range(1, killed.sent + 1)]
