"""The ``inmemory`` built-in plugin: the process-local vector backend.

Registered through ``akgentic_vector_backends`` like any plugin. Its rows live in the
team's ``#VectorStore`` actor (``persists_in_actor_state``), which records every
change as a compact event and rebuilds the index from those events on resume. The
engine (and numpy) load only when a backend is built.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from akgentic.plugins import MessageTypeSpec, VectorBackendSpec, hookimpl

if TYPE_CHECKING:
    from akgentic.vector.registry import BackendContext


def make_inmemory_backend(context: BackendContext) -> Any:
    """A fresh in-memory backend owned by the context's team."""
    from akgentic.vector.engine import InMemoryBackend

    tenant = context.config.tenant if context.config is not None else None
    return InMemoryBackend(team_id=context.team_id, tenant=tenant)


@hookimpl
def akgentic_vector_backends() -> Iterable[VectorBackendSpec]:
    """Register the ``inmemory`` backend (the fallback when no cluster is configured)."""
    return [
        VectorBackendSpec(
            name="inmemory",
            factory=make_inmemory_backend,
            persists_in_actor_state=True,
            selectable_as_default=False,
            description="Process-local cosine index held by the team's #VectorStore actor",
            distribution="akgentic",
        )
    ]


@hookimpl
def akgentic_message_types() -> Iterable[MessageTypeSpec]:
    """The change records the ``#VectorStore`` actor writes into the event log."""
    from akgentic.vector.actor import VectorStoreChange
    from akgentic.vector.protocol import VectorEntry

    return [
        MessageTypeSpec(
            name="VectorStoreChange",
            message_class=VectorStoreChange,
            description="One mutation of an in-memory vector store (rows as base64 float32)",
        ),
        MessageTypeSpec(
            name="VectorEntry",
            message_class=VectorEntry,
            aliases=("akgentic.tool.vector.VectorEntry",),
            description="One vector row",
        ),
    ]
