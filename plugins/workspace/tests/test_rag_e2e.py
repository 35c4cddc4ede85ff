"""End to end: an agent on the scripted model indexes ``examples/rag-docs`` and finds the PDF."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pykka
import pytest
from akgentic_workspace import WorkspaceTool
from akgentic_workspace.rag.testing import FINAL, HASHING, records

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
from akgentic.testing import wait_until

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "rag-docs"
pytest.importorskip("markitdown", reason="PDF extraction needs the docs extra (MarkItDown)")


class Recorder(EventSubscriber):
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


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    built = ActorSystem()
    yield built
    pykka.ActorRegistry.stop_all(block=True, timeout=10)


def test_an_agent_indexes_the_examples_and_finds_the_pdf_passage(
    system: ActorSystem, llm_server: ScriptedLLMServer, workspaces_root: Path
) -> None:
    tree = workspaces_root / "anonymous" / "_id" / "docs"
    shutil.copytree(EXAMPLES, tree)
    orchestrator = system.createActor(
        Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
    )
    proxy = system.proxy_ask(orchestrator, Orchestrator)
    recorder = Recorder()
    proxy.subscribe(recorder)
    human = proxy.createActor(HumanProxy, config=BaseConfig(name="@Human", role="Human"))
    card = WorkspaceTool(
        workspace_id="docs",
        workspace_rag_index=True,
        workspace_rag_search=True,
        vector_store=HASHING,
    )
    agent = proxy.createActor(
        BaseAgent,
        config=AgentConfig(
            name="@A", role="Librarian", model_cfg=llm_server.model_config(), tools=[card]
        ),
    )
    meta = tree.with_name("docs.index")

    def after_drain(body: dict[str, Any]) -> Any:
        sent = [m for m in body["messages"] if m.get("role") == "tool"][-1]["content"]
        assert sent.startswith("3 file(s) queued")
        wait_until(
            lambda: (
                len(records(meta)) == 3
                and all(r["status"] in FINAL for r in records(meta).values())
            ),
            timeout=60,
        )
        return tool_call("workspace_rag_search", {"query": "heron protocol signatures"})

    llm_server.add(
        tool_call("workspace_rag_index", {}),
        after_drain,
        structured(
            StructuredOutput(
                messages=[Request(recipient="@Human", message_type="response", message="found")]
            )
        ),
    )
    system.proxy_ask(human, HumanProxy).send(
        agent, AgentMessage(content="Where is the heron protocol?", type="request")
    )
    wait_until(lambda: recorder.to_human() == ["found"], timeout=90)
    done = records(meta)
    assert done["security-handbook.pdf"]["status"] == "embedded"
    answer = [m for m in llm_server.requests[-1]["messages"] if m.get("role") == "tool"][-1]
    content = answer["content"]
    assert '"path":"security-handbook.pdf"' in content.replace(" ", "")
    assert '"start_line"' in content and '"match":"hybrid"' in content.replace(" ", "")
    names = [m.name for m in proxy.get_team()]
    assert "#Workspace-anonymous/_id/docs" in names
