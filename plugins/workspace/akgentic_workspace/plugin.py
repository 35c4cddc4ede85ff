"""Hook implementation of the workspace plugin: registers ``WorkspaceTool`` as ``workspace``.

It also registers the ``local`` vector backend that the retrieval capabilities keep
beside each tree (``akgentic_workspace.rag.local_backend``), and gives a fork of a
team its own copy of each tree as it was at the fork point (``akgentic_team_fork``,
:mod:`akgentic_workspace.fork`).
"""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import (
    ForkRequest,
    ForkStep,
    MessageTypeSpec,
    ToolCardSpec,
    VectorBackendSpec,
    hookimpl,
)
from akgentic_workspace.console_pane import akgentic_console_panes as akgentic_console_panes

#: The product documents' module path this plugin answers for.
IMPORT_PATHS = ("akgentic.tool.workspace",)


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register the ``workspace`` card and the ``akgentic.tool.workspace`` import path."""
    from akgentic_workspace.card import WorkspaceTool

    return [
        ToolCardSpec(
            name="workspace",
            card=WorkspaceTool,
            description="The team's files behind a write gate, a git journal, sandboxed exec",
            import_paths=IMPORT_PATHS,
        )
    ]


def _make_local(context: object) -> object:
    from akgentic_workspace.rag.local_backend import make_local_backend

    return make_local_backend(context)  # type: ignore[arg-type]


@hookimpl
def akgentic_vector_backends() -> Iterable[VectorBackendSpec]:
    """Register ``local``: SQLite rows under a tree's ``<leaf>.index/index/``."""
    return [
        VectorBackendSpec(
            name="local",
            factory=_make_local,
            needs_actor=True,
            persists_in_actor_state=False,
            selectable_as_default=False,
            description="Rows in SQLite under a workspace tree's <leaf>.index/index/<collection>/",
            distribution="akgentic-workspace",
        )
    ]


@hookimpl
def akgentic_message_types() -> Iterable[MessageTypeSpec]:
    """Retrieval's stored payloads: the context state and the upload message."""
    from akgentic_workspace.rag import models

    return [
        MessageTypeSpec(
            name=cls.__name__,
            message_class=cls,
            aliases=(f"akgentic.tool.workspace.rag.{cls.__name__}",),
            description=what,
        )
        for cls, what in (
            (models.RagIndexState, "The retrieval index as an agent's context block saw it"),
            (models.RagFileRow, "One file of the retrieval index's context state"),
            (models.NewFileMessage, "Queue uploaded workspace files for retrieval"),
        )
    ]


@hookimpl
def akgentic_team_fork(fork: ForkRequest) -> list[ForkStep]:
    """Give a fork its own copy of each tree, as the tree was at the fork point."""
    from akgentic_workspace.fork import fork_steps

    return list(fork_steps(fork))
