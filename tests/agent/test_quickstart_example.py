"""The agent guide's Quick Start (examples/agent_quickstart.py) against the scripted server.

The example is run as written, in this process (``runpy``), with only ``OPENAI_BASE_URL``
pointing the ``openai`` provider (the Responses API) at the scripted server.
"""

from __future__ import annotations

import json
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from akgentic.agent import AgentMessage, Request, StructuredOutput
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.llm.scripted_server import ScriptedLLMServer, structured

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_quickstart.py"


def out(*requests: tuple[str, str, str]) -> StructuredOutput:
    return StructuredOutput(
        messages=[Request(recipient=r, message_type=t, message=m) for r, t, m in requests]
    )


@pytest.fixture
def scripted(llm_server: ScriptedLLMServer) -> ScriptedLLMServer:
    # The only role in the Quick Start's catalog is Manager, so that is what gets hired.
    llm_server.add(
        structured(out(("Manager", "request", "Draft the backlog for the API work."))),
        structured(out(("@Manager", "response", "Backlog drafted: 5 stories."))),
        structured(out(("@Human", "response", "The sprint is planned."))),
    )
    return llm_server


@pytest.fixture
def quickstart(
    scripted: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, Any]]:
    """Run the example's module code; its actor system is shut down afterwards."""
    monkeypatch.setenv("OPENAI_BASE_URL", scripted.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    namespace = runpy.run_path(str(EXAMPLE))
    try:
        yield namespace
    finally:
        namespace["actor_system"].shutdown(timeout=10)


def sent_messages(namespace: dict[str, Any]) -> list[SentMessage]:
    history = namespace["orchestrator_proxy"].get_messages()
    return [m for m in history if isinstance(m, SentMessage)]


def test_the_quickstart_manager_hires_the_scripted_role_and_the_delegation_reaches_the_hire(
    scripted: ScriptedLLMServer, quickstart: dict[str, Any], helpers: Any
) -> None:
    helpers.wait_for(
        lambda: any(m.recipient.name == "@Human" for m in sent_messages(quickstart)), timeout=30
    )
    sent = sent_messages(quickstart)
    delegation = next(m for m in sent if m.sender is not None and m.sender.name == "@Manager")
    assert isinstance(delegation.message, AgentMessage)
    assert delegation.message.content == "Draft the backlog for the API work."
    hire = delegation.recipient
    assert hire.role == "Manager" and hire.name != "@Manager" and hire.name.startswith("@Manager")
    # The new member ran its model on the delegated text, and its answer came back.
    assert "Draft the backlog for the API work." in json.dumps(scripted.requests[1]["input"])
    assert any(m.sender is not None and m.sender.name == hire.name for m in sent)
    final = [m.message for m in sent if m.recipient.name == "@Human"]
    assert [getattr(m, "content", None) for m in final] == ["The sprint is planned."]


def test_the_quickstart_talks_to_the_responses_api_with_native_structured_output(
    scripted: ScriptedLLMServer, quickstart: dict[str, Any], helpers: Any
) -> None:
    helpers.wait_for(lambda: scripted.served == 3, timeout=30)
    first = scripted.requests[0]
    assert first["model"] == "gpt-4.1"
    assert "input" in first and "messages" not in first
    assert first["text"]["format"]["type"] == "json_schema"
    assert "Plan the next sprint." in json.dumps(first["input"])
