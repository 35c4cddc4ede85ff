"""The workspace card plugin: the team filesystem behind a write gate.

``WorkspaceTool`` (registered as ``workspace``) gives agents read, list, glob, grep and
view, and, unless ``read_only``, write, edit, multi_edit, patch, delete, mkdir, rmdir and
(opt-in) sandboxed exec over one tree. See ``docs/workspace.md``.
"""

from akgentic_workspace.card import WorkspaceTool
from akgentic_workspace.params import (
    DocumentReader,
    EditItem,
    ExpandMediaRefs,
    Resource,
    ResourceType,
    WorkspaceAttached,
    WorkspaceDelete,
    WorkspaceEdit,
    WorkspaceExec,
    WorkspaceGlob,
    WorkspaceGrep,
    WorkspaceList,
    WorkspaceMkdir,
    WorkspaceMultiEdit,
    WorkspacePatch,
    WorkspaceRead,
    WorkspaceRmdir,
    WorkspaceView,
    WorkspaceWrite,
)
from akgentic_workspace.rag.models import (
    NewFileMessage,
    RagSearchHit,
    RagSearchResult,
    WorkspaceRagIndex,
    WorkspaceRagList,
    WorkspaceRagSearch,
)

__all__ = [
    "DocumentReader",
    "EditItem",
    "ExpandMediaRefs",
    "NewFileMessage",
    "RagSearchHit",
    "RagSearchResult",
    "Resource",
    "ResourceType",
    "WorkspaceAttached",
    "WorkspaceDelete",
    "WorkspaceEdit",
    "WorkspaceExec",
    "WorkspaceGlob",
    "WorkspaceGrep",
    "WorkspaceList",
    "WorkspaceMkdir",
    "WorkspaceMultiEdit",
    "WorkspacePatch",
    "WorkspaceRagIndex",
    "WorkspaceRagList",
    "WorkspaceRagSearch",
    "WorkspaceRead",
    "WorkspaceRmdir",
    "WorkspaceTool",
    "WorkspaceView",
    "WorkspaceWrite",
]
