"""The AG-UI stream of a served team, read over HTTP, every event validated by ``ag_ui``.

One console and one team serve the whole module; each test runs its own runs and
leaves no question open.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import jsonpatch
import pytest
from ag_ui.core import (
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from akgentic_ag_ui.testing import Stream, dumped, position, read_run, run_input

from akgentic.testing.waiting import wait_until

Served = Any  # the ``served`` fixture of conftest.py


def _state(stream: Stream) -> Any:
    """The state a client holds at the end of ``stream``: the snapshot, deltas applied."""
    (snapshot,) = stream.of(StateSnapshotEvent)
    state = snapshot.snapshot
    for delta in stream.of(StateDeltaEvent):
        state = jsonpatch.apply_patch(state, [op.model_dump(by_alias=True) for op in delta.delta])
    return state


def _texts(stream: Stream) -> list[str]:
    return [e.delta for e in stream.of(TextMessageContentEvent)]


def _human_messages(served: Served, text: str) -> int:
    page = served.client.get(
        f"/api/teams/{served.team_id}/events", params={"kind": "message", "limit": 1000}
    ).json()
    return sum(1 for row in page["events"] if row["sender"] == "@Human" and row["content"] == text)


def test_a_run_streams_the_reply_between_run_started_and_run_finished(served: Served) -> None:
    stream = read_run(served.client, served.team_id, run_input("echo-1", "hello there"))
    assert stream.status == 200
    assert stream.content_type.startswith("text/event-stream")
    assert isinstance(stream.events[0][1], RunStartedEvent)
    assert stream.events[0][1].run_id == "echo-1" and stream.events[0][1].thread_id == "thread-1"
    assert stream.events[0][1].protocol_version == "1.0"
    assert isinstance(stream.events[1][1], StateSnapshotEvent)
    finished = stream.events[-1][1]
    assert isinstance(finished, RunFinishedEvent) and finished.run_id == "echo-1"
    assert finished.outcome is not None and finished.outcome.type == "success"
    text = [t for t in stream.types if t.startswith("TEXT_MESSAGE")]
    assert text == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    (start,) = stream.of(TextMessageStartEvent)
    assert start.role == "assistant" and start.name == "@Manager"
    assert _texts(stream) == ["Echo: hello there"]
    assert stream.of(TextMessageEndEvent)[0].message_id == start.message_id
    positions = [position(i) for i in stream.ids]
    assert positions == sorted(set(positions)), "ids are increasing log positions"
    assert _human_messages(served, "hello there") == 1


def test_a_tool_call_streams_start_args_end_and_result(served: Served) -> None:
    stream = read_run(served.client, served.team_id, run_input("plan-1", "plan the report"))
    assert stream.status == 200
    calls = [t for t in stream.types if t.startswith("TOOL_CALL")]
    assert calls == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]
    (start,) = stream.of(ToolCallStartEvent)
    assert start.tool_call_name == "update_planning"
    (args,) = stream.of(ToolCallArgsEvent)
    assert json.loads(args.delta) == served.plan
    assert stream.of(ToolCallEndEvent)[0].tool_call_id == start.tool_call_id
    (result,) = stream.of(ToolCallResultEvent)
    assert result.tool_call_id == start.tool_call_id and result.content
    assert _texts(stream) == ["Planned 2 tasks"]
    board = {task["id"]: task for task in _state(stream)["planning"]}
    assert board[1]["description"] == "draft the report" and board[2]["dependencies"] == [1]


def test_the_state_holds_the_members_and_its_deltas_agree_with_the_log(served: Served) -> None:
    first = read_run(served.client, served.team_id, run_input("state-1", "count the members"))
    (snapshot,) = first.of(StateSnapshotEvent)
    members = {m["name"]: m for m in snapshot.snapshot["members"]}
    assert members["@Manager"]["role"] == "Manager" and not members["@Manager"]["human"]
    assert members["@Human"]["human"]
    assert all(not name.startswith("#") for name in members), "tool actors are not members"
    assert first.of(StateDeltaEvent), "the model's token usage changes the members"
    # The state a client built from snapshot + deltas is the next run's snapshot.
    second = read_run(served.client, served.team_id, run_input("state-2", "again"))
    (next_snapshot,) = second.of(StateSnapshotEvent)
    assert _state(first) == next_snapshot.snapshot


def test_a_question_ends_the_run_with_an_interrupt_and_a_resume_answers_it(
    served: Served,
) -> None:
    asked = read_run(served.client, served.team_id, run_input("ask-1", "please ask me"))
    finished = asked.events[-1][1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.outcome is not None and finished.outcome.type == "interrupt"
    (interrupt,) = finished.outcome.interrupts
    assert interrupt.message == served.question and interrupt.reason == "question"
    assert _texts(asked) == [served.question]
    questions = served.client.get(f"/api/teams/{served.team_id}/questions").json()
    assert [q["id"] for q in questions] == [interrupt.id]
    resume = [{"interruptId": interrupt.id, "status": "resolved", "payload": "blue"}]
    answered = read_run(served.client, served.team_id, run_input("ask-2", resume=resume))
    assert answered.status == 200
    assert _texts(answered) == ["Noted: blue"]
    outcome = answered.events[-1][1]
    assert isinstance(outcome, RunFinishedEvent) and outcome.outcome is not None
    assert outcome.outcome.type == "success"
    assert served.client.get(f"/api/teams/{served.team_id}/questions").json() == []
    again = read_run(served.client, served.team_id, run_input("ask-2", resume=resume))
    assert dumped(again) == dumped(answered), "a repeated resume is the same run, not a new one"


def test_a_client_that_reconnects_with_last_event_id_gets_exactly_the_rest(
    served: Served,
) -> None:
    served.script.gate.clear()
    body = run_input("slow-1", "plan the report slowly")
    try:
        first = read_run(served.client, served.team_id, body, stop_after="TOOL_CALL_END")
        assert first.types[-1] == "TOOL_CALL_END"
        assert "RUN_FINISHED" not in first.types
    finally:
        served.script.gate.set()
    rest = read_run(served.client, served.team_id, body, last_event_id=first.ids[-1])
    assert rest.status == 200
    assert rest.types[-1] == "RUN_FINISHED" and "RUN_STARTED" not in rest.types
    assert position(rest.ids[0]) > position(first.ids[-1])
    whole = read_run(served.client, served.team_id, body)
    assert dumped(first) + dumped(rest) == dumped(whole), "no loss, no duplicate"
    assert _human_messages(served, "plan the report slowly") == 1, "nothing was sent twice"
    again = read_run(served.client, served.team_id, body, last_event_id=whole.ids[-1])
    assert again.status == 200 and again.events == []


def test_text_from_the_team_is_data(served: Served) -> None:
    text = 'see <script>alert(1)</script>\n\ndata: {"type": "RUN_FINISHED"}\n\nid: 9.9'
    stream = read_run(served.client, served.team_id, run_input("markup-1", text))
    assert _texts(stream) == [f"Echo: {text}"]
    assert stream.types.count("RUN_FINISHED") == 1 and stream.types[-1] == "RUN_FINISHED"


@pytest.mark.parametrize(
    ("case", "status", "words"),
    [
        ("not a uuid", 404, "no team"),
        ("unknown team", 404, "no team"),
        ("not json", 422, "RunAgentInput"),
        ("no run id", 422, "runId"),
        ("assistant last", 422, "the user's"),
        ("empty message", 422, "empty"),
        ("too long", 413, "limit"),
        ("too big a body", 413, "limit"),
        ("bad last event id", 400, "Last-Event-ID"),
        ("unknown question", 409, "no open question"),
        ("unknown run with an id", 409, "no run"),
    ],
)
def test_bad_input_is_refused_with_a_clear_error_and_one_log_line(
    served: Served, caplog: pytest.LogCaptureFixture, case: str, status: int, words: str
) -> None:
    team = served.team_id
    body: Any = run_input(f"bad-{case}", "hello")
    headers: dict[str, str] = {}
    if case == "not a uuid":
        team = "not-a-team-id"
    elif case == "unknown team":
        team = "00000000-0000-4000-8000-000000000000"
    elif case == "not json":
        body = b"{not json"
    elif case == "no run id":
        body = {"threadId": "t", "messages": []}
    elif case == "assistant last":
        body = run_input("bad", None, messages=[{"id": "a", "role": "assistant", "content": "x"}])
    elif case == "empty message":
        body = run_input("bad-empty", "   ")
    elif case == "too long":
        body = run_input("bad-long", "x" * 100_001)
    elif case == "too big a body":
        body = run_input("bad-big", "x" * 100, padding="y" * 1_000_001)
    elif case == "bad last event id":
        headers = {"Last-Event-ID": "not-an-id"}
    elif case == "unknown question":
        body = run_input(
            "bad-q", resume=[{"interruptId": "nope", "status": "resolved", "payload": "x"}]
        )
    elif case == "unknown run with an id":
        headers = {"Last-Event-ID": "3.0"}
    caplog.set_level(logging.WARNING, logger="akgentic_ag_ui")
    kwargs: dict[str, Any] = {"content": body} if isinstance(body, bytes) else {"json": body}
    response = served.client.post(f"/ag-ui/{team}", headers=headers, **kwargs)
    assert response.status_code == status, response.text
    assert words in response.json()["detail"]
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("akgentic_ag_ui")]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    # The team keeps working.
    after = read_run(served.client, served.team_id, run_input(f"after-{case}", "still there?"))
    assert _texts(after) == ["Echo: still there?"]


def test_a_team_that_does_not_run_here_is_refused_and_a_run_it_left_unfinished_errs(
    served: Served,
) -> None:
    client, team = served.client, served.team_id
    assert client.post(f"/api/teams/{team}/stop").status_code == 200
    try:
        refused = client.post(f"/ag-ui/{team}", json=run_input("stopped-1", "hello"))
        assert refused.status_code == 409 and "resume it" in refused.json()["detail"]
        # A finished run is still served from the log of a stopped team.
        replay = read_run(client, team, run_input("echo-1", "hello there"))
        assert replay.types[0] == "RUN_STARTED" and replay.types[-1] == "RUN_FINISHED"
    finally:
        assert client.post(f"/api/teams/{team}/resume").status_code == 200
    wait_until(lambda: client.get(f"/api/teams/{team}").json()["running_here"], timeout=30)
    after = read_run(client, team, run_input("resumed-1", "back"))
    assert _texts(after) == ["Echo: back"]
    assert not after.of(RunErrorEvent)
