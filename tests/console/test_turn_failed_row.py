"""The console's event row of a failed turn carries its one line, as the CLI prints it."""

from __future__ import annotations

from akgentic.console.views import event_row
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.llm.events import LlmContextClearedEvent, TurnFailed

CAUSE = "the model server at 127.0.0.1:8091 answered HTTP 500: boom"


def test_a_turn_failed_row_has_the_cause_as_its_content() -> None:
    row = event_row(EventMessage(event=TurnFailed(cause=CAUSE, kind="http_error")), 7)
    assert (row["kind"], row["message_type"], row["content"]) == ("event", "TurnFailed", CAUSE)


def test_other_events_keep_no_content() -> None:
    row = event_row(EventMessage(event=LlmContextClearedEvent(run_id="r", cleared_message_count=2)))
    assert row["content"] is None
