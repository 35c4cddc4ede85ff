"""MailboxHook remembers what it announced per run; one hook serves every run."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from akgentic.agent import AgentMessage
from akgentic.agent.hooks import MailboxHook


@dataclass
class FakeContext:
    run_id: str
    deps: Any
    enqueued: list[str] = field(default_factory=list)

    def enqueue(self, text: str) -> None:
        self.enqueued.append(text)


@dataclass
class FakeAgent:
    queued: list[Any]

    def get_mailbox(self) -> list[Any]:
        return list(self.queued)


def request(hook: MailboxHook, ctx: FakeContext) -> None:
    asyncio.run(hook.before_model_request(ctx))  # type: ignore[arg-type]


def test_mail_is_announced_once_per_run_and_again_in_the_next_run() -> None:
    hook = MailboxHook()
    first, second = AgentMessage(content="one"), AgentMessage(content="two")
    agent = FakeAgent([first])
    run1 = FakeContext("run-1", agent)
    request(hook, run1)
    request(hook, run1)
    assert len(run1.enqueued) == 1 and str(first.id) in run1.enqueued[0]
    agent.queued.append(second)
    request(hook, run1)
    assert len(run1.enqueued) == 2
    assert str(second.id) in run1.enqueued[1] and str(first.id) not in run1.enqueued[1]
    run2 = FakeContext("run-2", agent)
    request(hook, run2)
    assert len(run2.enqueued) == 1
    assert str(first.id) in run2.enqueued[0] and str(second.id) in run2.enqueued[0]


def test_one_hook_serves_every_run_and_forgets_old_runs() -> None:
    hook = MailboxHook()
    ctx = FakeContext("run-0", FakeAgent([AgentMessage(content="x")]))
    for index in range(50):
        request(hook, FakeContext(f"run-{index}", ctx.deps))
    assert len(hook._announced) <= 8


def test_nothing_is_announced_when_announcing_is_off() -> None:
    hook = MailboxHook(announce=False)
    ctx = FakeContext("run-1", FakeAgent([AgentMessage(content="x")]))
    request(hook, ctx)
    assert ctx.enqueued == []
