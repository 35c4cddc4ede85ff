"""Retrieval over a workspace tree: ``workspace_rag_index``, ``_list`` and ``_search``.

Records and indexed text live in the tree's ``<leaf>.index/rag/`` sibling, vectors in
the shared ``workspace_chunks`` collection (the ``local`` backend beside the tree by
default); see ``docs/workspace.md``, section *Retrieval*.
"""

from akgentic_workspace.rag.models import (
    NewFileMessage,
    RagFileRow,
    RagIndexState,
    RagSearchHit,
    RagSearchResult,
    RagStatus,
    WorkspaceRagIndex,
    WorkspaceRagList,
    WorkspaceRagSearch,
)
from akgentic_workspace.rag.policy import CHUNK_ID_NAMESPACE, chunk_id

__all__ = [
    "CHUNK_ID_NAMESPACE",
    "NewFileMessage",
    "RagFileRow",
    "RagIndexState",
    "RagSearchHit",
    "RagSearchResult",
    "RagStatus",
    "WorkspaceRagIndex",
    "WorkspaceRagList",
    "WorkspaceRagSearch",
    "chunk_id",
]
