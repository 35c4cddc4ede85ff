"""WorkspaceTool runs the shared ToolCardContract, exec included (on bubblewrap)."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pytest
from akgentic_workspace import (
    WorkspaceExec,
    WorkspaceRagIndex,
    WorkspaceRagSearch,
    WorkspaceRead,
    WorkspaceRmdir,
    WorkspaceTool,
)

from akgentic.plugins import PluginInfo
from akgentic.testing import ToolCardContract
from akgentic.tool import ToolCard


class TestWorkspaceToolContract(ToolCardContract):
    """The card with every capability on (exec too), and one configured away from defaults."""

    card_name = "workspace"
    plugin = "akgentic_workspace.plugin"

    @pytest.fixture(autouse=True)
    def _sandbox_plugin(
        self, _card_plugin: None, register_plugin: Callable[..., PluginInfo]
    ) -> None:
        # By module name: the card finds backends through the registry, never by import.
        register_plugin(importlib.import_module("akgentic_bwrap.plugin"), "bwrap")

    @pytest.fixture(params=["defaults", "configured"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "defaults":
            return WorkspaceTool(
                workspace_exec=True,
                workspace_rag_index=True,
                workspace_rag_list=True,
                workspace_rag_search=True,
            )
        return WorkspaceTool(
            workspace_id="contract",
            workspace_read=WorkspaceRead(default_limit=50, instructions="Read before writing."),
            workspace_rmdir=WorkspaceRmdir(allow_recursive=False),
            workspace_exec=WorkspaceExec(timeout_s=5, poll_attempts=0, backend="bwrap"),
            git_journal=True,
            workspace_rag_index=WorkspaceRagIndex(max_files=500),
            workspace_rag_list=True,
            workspace_rag_search=WorkspaceRagSearch(top_k=3),
            vector_store=False,
        )
