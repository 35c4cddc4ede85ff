"""A ``/stop`` queued mid-run interrupts the run only when a human (or an allowed sender) sent it.

Real actors and FunctionModels: a lead agent's structured output sends ``/stop`` (type
``instruction``) to a worker that is in the middle of a run, which is what a confused or
prompt-injected agent would do. The worker's first model call waits until that line sits
in its inbox, so the run's next step is sure to see it.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, UserPromptPart

from akgentic.agent import Request, StructuredOutput
from akgentic.testing.waiting import wait_until

WORKERS: dict[str, Any] = {}


def out(*requests: tuple[str, str, str]) -> StructuredOutput:
    return StructuredOutput(
        messages=[Request(recipient=r, message_type=t, message=m) for r, t, m in requests]
    )


def texts(messages: list[ModelMessage]) -> str:
    return "\n".join(
        str(p.content) for m in messages for p in m.parts if isinstance(p, UserPromptPart)
    )


def _queued_stop() -> bool:
    worker = WORKERS["@Worker"]
    return any(getattr(m, "content", None) == "/stop" for m in worker.get_mailbox())


def _start(team: Any, book: Any, helpers: Any, worker_config: dict[str, Any]) -> tuple[Any, Any]:
    """Lead and worker; the worker's first model call has the lead send it ``/stop``."""

    class RememberedAgent(helpers.ScriptedAgent):  # type: ignore[misc]
        def on_start(self) -> None:
            super().on_start()
            WORKERS[self.config.name] = self

    lead_ref: list[Any] = []

    def start_long_job(messages: list[ModelMessage], info: Any) -> Any:
        team.say(lead_ref[0], "Tell the worker to stop.")
        wait_until(_queued_stop, timeout=30)
        return helpers.call("team_activity")

    WORKERS.clear()
    book.script("Lead", out(("@Worker", "instruction", "/stop")), default=out())
    script = book.script(
        "Worker", start_long_job, out(("@Human", "response", "Job done.")), default=out()
    )
    lead_ref.append(team.spawn(team.card("Lead")))
    worker = team.spawn(team.card("Worker", agent_class=RememberedAgent, **worker_config))
    helpers.wait_for(lambda: "@Worker" in WORKERS)
    return worker, script


def test_an_agents_stop_line_does_not_interrupt_another_agents_run(
    team: Any, book: Any, helpers: Any
) -> None:
    worker, script = _start(team, book, helpers, {})
    team.say(worker, "Start the long job.")
    helpers.wait_for(lambda: team.to_human())
    assert team.to_human() == ["Job done."]
    # The lead's line reached the worker's model as text (announced mid-run, or as a turn).
    helpers.wait_for(lambda: any("/stop" in texts(seen) for seen in script.seen))
    assert len(script.seen) >= 2


def test_a_stop_line_from_a_sender_the_card_allows_interrupts_the_run(
    team: Any, book: Any, helpers: Any
) -> None:
    worker, script = _start(team, book, helpers, {"command_senders": ["Lead"]})
    team.say(worker, "Start the long job.")
    helpers.wait_for(lambda: team.to_human())
    assert team.to_human() == ["@Worker stopped its run as asked."]
    assert len(script.seen) == 1
