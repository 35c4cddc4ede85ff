"""``replay_tool_state``: the stored snapshot of one tool actor and the changes logged after it.

Built from the real stored types (``AgentStateSnapshot``, ``EventMessage`` around
``ToolStateEvent``) with small states and payloads of this module.
"""

from __future__ import annotations

from uuid import uuid4

from akgentic.console.panes import replay_tool_state
from akgentic.core.agent_state import BaseState
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.core.utils.serializer import SerializableBaseModel
from akgentic.team.models import AgentStateSnapshot
from akgentic.tool.core.event import ToolStateEvent

TEAM = uuid4()


class Board(BaseState):
    items: list[str] = []
    snapshot_seq: int = 0


class Added(SerializableBaseModel):
    item: str


class Other(SerializableBaseModel):
    note: str


def _snapshot(name: str, items: list[str], seq: int) -> AgentStateSnapshot:
    return AgentStateSnapshot(
        team_id=TEAM, agent_id=name, name=name, state=Board(items=items, snapshot_seq=seq)
    )


def _event(seq: int, payload: SerializableBaseModel) -> EventMessage:
    return EventMessage(event=ToolStateEvent(tool_id="#Board", seq=seq, payload=payload))


def test_the_newest_snapshot_of_the_actor_and_only_the_later_changes_of_its_type() -> None:
    states = [
        _snapshot("#Board", ["old"], 1),
        _snapshot("#Elsewhere", ["not ours"], 9),
        _snapshot("#Board", ["a", "b"], 3),
    ]
    events = [_event(2, Added(item="in the snapshot")), _event(3, Added(item="also in it"))]
    events += [_event(4, Other(note="another payload")), _event(5, Added(item="c"))]
    base, changes = replay_tool_state(states, events, "#Board", "items", list, Added)
    assert base == ["a", "b"]
    assert [change.item for change in changes] == ["c"]


def test_without_a_snapshot_every_change_counts_and_a_replayed_number_is_skipped() -> None:
    events = [_event(1, Added(item="x")), _event(2, Added(item="y")), _event(2, Added(item="y"))]
    base, changes = replay_tool_state([], events, "#Board", "items", list, Added)
    assert base is None
    assert [change.item for change in changes] == ["x", "y"]


def test_a_state_without_the_attribute_or_of_another_type_is_no_snapshot() -> None:
    states = [_snapshot("#Board", ["kept"], 2)]
    as_dict, changes = replay_tool_state(states, [], "#Board", "items", dict, Added)
    assert (as_dict, changes) == (None, [])
    missing, _ = replay_tool_state(states, [], "#Board", "missing", list, Added)
    assert missing is None
