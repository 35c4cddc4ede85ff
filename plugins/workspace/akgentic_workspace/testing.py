"""The opener the input contract kit (``akgentic.testing.WorkspaceInputContract``) calls.

Kept in the package, not in the tests, because the kit imports it by name in a child
process too.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from akgentic.plugin_api import RecordingObserver, ToolFactory
from akgentic_workspace.card import WorkspaceTool
from akgentic_workspace.paths import ROOT_ENV

__all__ = ["OpenedWorkspace", "open_for_contract"]


@dataclass
class OpenedWorkspace:
    """What the kit drives: the model tools by name, the tree, and what must stay alive."""

    tools: dict[str, Callable[..., Any]]
    tree: Path
    keep: list[object] = field(default_factory=list)  # cards hold their agent weakly


def open_for_contract(root: Path) -> OpenedWorkspace:
    """A ``WorkspaceTool`` with every file tool on, bound over ``root/<scope>/_id/contract``."""
    previous = os.environ.get(ROOT_ENV)
    os.environ[ROOT_ENV] = str(root)
    try:  # the root is read when the card binds, and only then
        card = WorkspaceTool(workspace_id="contract")
        observer = RecordingObserver(name="@contract", user_id="contract")
        ToolFactory([card], observer=observer)
    finally:
        if previous is None:
            del os.environ[ROOT_ENV]
        else:
            os.environ[ROOT_ENV] = previous
    session = card._session
    assert session is not None
    tools = {tool.__name__: tool for tool in card.get_tools()}
    return OpenedWorkspace(tools=tools, tree=Path(session.location.tree), keep=[observer, card])
