"""End to end in a real team: BaseAgents on the real OpenAI client and the scripted server.

A writes a file, B reads and edits it, A overwrites from its stale read and is refused
with a diff, re-reads and succeeds; the journal names both authors. A's exec runs
through the team's ``#Workspace`` actor on bubblewrap.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pykka
import pytest
from akgentic_workspace import WorkspaceExec, WorkspaceTool

from akgentic.agent import (
    AgentConfig,
    AgentMessage,
    BaseAgent,
    HumanProxy,
    Request,
    StructuredOutput,
)
from akgentic.core import ActorSystem, BaseConfig, EventSubscriber, Orchestrator
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.testing.waiting import wait_until


class Recorder(EventSubscriber):
    """Keeps every message of the team."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._lock = threading.Lock()

    def on_message(self, msg: Message) -> None:
        with self._lock:
            self.messages.append(msg)

    def to_human(self) -> list[str]:
        with self._lock:
            return [
                m.message.content
                for m in self.messages
                if isinstance(m, SentMessage)
                and isinstance(m.message, AgentMessage)
                and m.recipient.name == "@Human"
            ]


def reply(text: str) -> Any:
    return structured(
        StructuredOutput(
            messages=[Request(recipient="@Human", message_type="response", message=text)]
        )
    )


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    built = ActorSystem()
    yield built
    pykka.ActorRegistry.stop_all(block=True, timeout=10)


def test_two_agents_collide_the_stale_writer_is_refused_and_recovers(
    system: ActorSystem, llm_server: ScriptedLLMServer, workspaces_root: Path
) -> None:
    orchestrator = system.createActor(
        Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
    )
    proxy = system.proxy_ask(orchestrator, Orchestrator)
    recorder = Recorder()
    proxy.subscribe(recorder)
    human = proxy.createActor(HumanProxy, config=BaseConfig(name="@Human", role="Human"))
    model = llm_server.model_config()

    def card(exec_on: bool) -> WorkspaceTool:
        return WorkspaceTool(
            workspace_id="shared",
            git_journal=True,
            workspace_exec=WorkspaceExec(backend="bwrap") if exec_on else False,
        )

    a = proxy.createActor(
        BaseAgent, config=AgentConfig(name="@A", role="Dev", model_cfg=model, tools=[card(True)])
    )
    b = proxy.createActor(
        BaseAgent, config=AgentConfig(name="@B", role="Rev", model_cfg=model, tools=[card(False)])
    )
    say = system.proxy_ask(human, HumanProxy)

    def refused_with_diff(body: dict[str, Any]) -> Any:
        sent = [m for m in body["messages"] if m.get("role") == "tool"][-1]["content"]
        assert "it changed since you read it" in sent
        assert "--- live/notes.md" in sent and "It was last written by agent '@B'" in sent
        return tool_call("workspace_read", {"path": "notes.md"})

    llm_server.add(
        tool_call("workspace_write", {"path": "notes.md", "content": "draft\n"}),
        tool_call("workspace_read", {"path": "notes.md"}),
        reply("written"),
        tool_call("workspace_read", {"path": "notes.md"}),
        tool_call(
            "workspace_edit",
            {"path": "notes.md", "old_string": "draft", "new_string": "reviewed"},
        ),
        reply("edited"),
        tool_call("workspace_write", {"path": "notes.md", "content": "final\n"}),
        refused_with_diff,
        tool_call("workspace_write", {"path": "notes.md", "content": "reviewed\nfinal\n"}),
        tool_call("workspace_exec", {"cmd": "cat notes.md"}),
        reply("done"),
    )
    say.send(a, AgentMessage(content="Write the notes.", type="request"))
    wait_until(lambda: recorder.to_human() == ["written"], timeout=60)
    say.send(b, AgentMessage(content="Review the notes.", type="request"))
    wait_until(lambda: recorder.to_human() == ["written", "edited"], timeout=60)
    say.send(a, AgentMessage(content="Finish the notes.", type="request"))
    wait_until(lambda: recorder.to_human() == ["written", "edited", "done"], timeout=60)

    tree = workspaces_root / "anonymous" / "_id" / "shared"
    assert (tree / "notes.md").read_text() == "reviewed\nfinal\n"
    exec_reply = llm_server.requests[-1]["messages"][-1]["content"]
    assert "exit_code: 0 (OK)" in exec_reply and "reviewed" in exec_reply
    log = subprocess.run(
        ["git", f"--git-dir={tree.with_name('shared.git')}", "log", "--reverse", "--format=%an %s"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert log[1:] == ["@A write: notes.md", "@B edit: notes.md", "@A write: notes.md"]
    names = [m.name for m in proxy.get_team()]
    assert "#Workspace-anonymous/_id/shared" in names
