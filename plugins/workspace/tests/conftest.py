"""Fixtures for the workspace tests: a private workspaces root and bound cards."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace import WorkspaceTool

from akgentic.tool.core.factory import ToolFactory
from akgentic.tool.testing import RecordingObserver


@pytest.fixture(autouse=True)
def workspaces_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """AKGENTIC_WORKSPACES_ROOT under the test's own temporary directory."""
    root = tmp_path / "workspaces"
    monkeypatch.setenv("AKGENTIC_WORKSPACES_ROOT", str(root))
    monkeypatch.delenv("AKGENTIC_WORKSPACE_SHARED_KINDS", raising=False)
    return root


class Agent:
    """A card bound to a recording observer, with its tools by name."""

    def __init__(self, card: WorkspaceTool, name: str, user_id: str | None) -> None:
        self.observer = RecordingObserver(name=name, user_id=user_id)
        self.card = card
        ToolFactory([card], observer=self.observer)
        self.tools = {tool.__name__: tool for tool in card.get_tools()}
        self.commands = {c.__name__: c for c in card.get_commands().values()}

    def __getattr__(self, name: str) -> Any:
        tools = self.__dict__.get("tools", {})
        if f"workspace_{name}" in tools:
            return tools[f"workspace_{name}"]
        raise AttributeError(name)


@pytest.fixture
def make_agent() -> Iterator[Callable[..., Agent]]:
    """``make_agent("@A", workspace_id="p", ...)``: an agent over ``alice/_id/p`` by default."""
    made: list[Agent] = []

    def make(name: str = "@A", user_id: str | None = "alice", **fields: Any) -> Agent:
        fields.setdefault("workspace_id", "p")
        agent = Agent(WorkspaceTool(**fields), name, user_id)
        made.append(agent)
        return agent

    yield make
    for agent in made:
        service = agent.card._exec_local
        if service is not None:
            service.close()
