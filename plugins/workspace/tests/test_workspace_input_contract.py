"""WorkspaceTool runs the WorkspaceInputContract: hostile patterns, names and a full disk."""

from __future__ import annotations

from akgentic.testing.workspace_input_contract import WorkspaceInputContract


class TestWorkspaceToolInput(WorkspaceInputContract):
    """The card with its default tools, opened by the plugin's own opener."""

    opener = "akgentic_workspace.testing:open_for_contract"
