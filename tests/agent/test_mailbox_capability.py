"""MailboxCapability remembers what it announced per run, without a per-run copy."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from akgentic.agent import AgentMessage
from akgentic.agent.capabilities import MailboxCapability


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


def request(capability: MailboxCapability, ctx: FakeContext) -> None:
    asyncio.run(capability.before_model_request(ctx, object()))  # type: ignore[arg-type]


def test_mail_is_announced_once_per_run_and_again_in_the_next_run() -> None:
    capability = MailboxCapability()
    first, second = AgentMessage(content="one"), AgentMessage(content="two")
    agent = FakeAgent([first])
    run1 = FakeContext("run-1", agent)
    request(capability, run1)
    request(capability, run1)
    assert len(run1.enqueued) == 1 and str(first.id) in run1.enqueued[0]
    agent.queued.append(second)
    request(capability, run1)
    assert len(run1.enqueued) == 2
    assert str(second.id) in run1.enqueued[1] and str(first.id) not in run1.enqueued[1]
    run2 = FakeContext("run-2", agent)
    request(capability, run2)
    assert len(run2.enqueued) == 1
    assert str(first.id) in run2.enqueued[0] and str(second.id) in run2.enqueued[0]


def test_the_capability_is_the_same_object_in_every_run_and_forgets_old_runs() -> None:
    capability = MailboxCapability()
    ctx = FakeContext("run-0", FakeAgent([AgentMessage(content="x")]))
    assert asyncio.run(capability.for_run(ctx)) is capability  # type: ignore[arg-type]
    for index in range(50):
        request(capability, FakeContext(f"run-{index}", ctx.deps))
    assert len(capability._announced) <= 8


def test_nothing_is_announced_when_announcing_is_off() -> None:
    capability = MailboxCapability(announce=False)
    ctx = FakeContext("run-1", FakeAgent([AgentMessage(content="x")]))
    request(capability, ctx)
    assert ctx.enqueued == []
