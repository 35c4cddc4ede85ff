"""The retrieval capabilities of ``WorkspaceTool``: tools and commands built from its params."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from akgentic.plugin_api import Capability, RestOfLine, RetriableError, resolve_param
from akgentic_workspace.rag.models import (
    RagSearchResult,
    WorkspaceRagList,
    WorkspaceRagSearch,
)
from akgentic_workspace.rag.searching import render_hits

__all__ = ["rag_capabilities"]


def _key(card: Any, path: str) -> str:
    engine = card._engine()
    key: str = engine.key(path)
    return key


def _front(card: Any) -> Any:
    front = card._rag
    if front is None:
        raise RetriableError("Retrieval indexing is not available for this workspace")
    return front


def rag_capabilities(card: Any) -> list[Capability]:
    """``workspace_rag_index``, ``workspace_rag_list`` (command only), ``workspace_rag_search``."""
    return [
        Capability(
            "workspace_rag_index", lambda _: _index_tool(card), lambda _: _index_command(card)
        ),
        Capability("workspace_rag_list", command=lambda listing: _list_command(card, listing)),
        Capability(
            "workspace_rag_search",
            lambda param: _search_tool(card, param),
            lambda param: _search_command(card, param),
        ),
    ]


def _index_tool(card: Any) -> Callable[..., str]:
    def workspace_rag_index(path: str = "", force: bool = False) -> str:
        """Queue files of the workspace for retrieval search (returns at once).

        Files already indexed at their current content are skipped; indexing runs in
        the background. Use workspace_rag_search once it is done.

        Args:
            path: File or directory relative to the workspace root ("" = all).
            force: Re-index files even when they are current.
        """
        return str(_front(card).index(_key(card, path), force))

    return workspace_rag_index


def _index_command(card: Any) -> Callable[..., str]:
    def workspace_rag_index(path: str = "", force: str = "") -> str:
        """Queue workspace files for retrieval (``force=true`` re-indexes)."""
        if path.startswith("force="):
            path, force = "", path
        forced = force.lower() in ("force=true", "true", "1", "yes")
        try:
            return str(_front(card).index(_key(card, path), forced))
        except RetriableError as error:
            return str(error)

    return workspace_rag_index


def _list_command(card: Any, listing: WorkspaceRagList) -> Callable[..., str]:
    def workspace_rag_list() -> str:
        """Show the retrieval index of the workspace."""
        front = card._rag
        if front is None:
            return "Retrieval indexing is not available for this workspace"
        return str(front.render_list(listing))

    return workspace_rag_list


def _search_tool(card: Any, param: WorkspaceRagSearch) -> Callable[..., RagSearchResult]:
    top_default = param.top_k

    def workspace_rag_search(
        query: str, top_k: int = top_default, path_prefix: str = ""
    ) -> RagSearchResult:
        """Search the indexed workspace files by meaning and keywords.

        Each hit gives the file, its line range (read it with workspace_read) and
        the passage; ``stale`` hits come from a file changed since it was indexed.

        Args:
            query: What to look for, in words.
            top_k: How many passages (1..50).
            path_prefix: Only files under this path.
        """
        return _search(card, query, top_k, path_prefix)

    return workspace_rag_search


def _search(card: Any, query: str, top_k: int, path_prefix: str) -> RagSearchResult:
    param = resolve_param(card.workspace_rag_search, WorkspaceRagSearch) or WorkspaceRagSearch()
    front = card._rag
    if front is None:
        return RagSearchResult(note="Retrieval indexing is not available for this workspace")
    result: RagSearchResult = front.search(
        query, top_k, path_prefix, param.alpha, param.score_threshold
    )
    return result


def _search_command(card: Any, param: WorkspaceRagSearch) -> Callable[..., str]:
    default = param.top_k

    def workspace_rag_search(query: RestOfLine) -> str:
        """Search the indexed workspace: ``[top_k=N] [path_prefix=P] <query…>``."""
        words = str(query).split()
        top_k, prefix = default, ""
        while words and (words[0].startswith("top_k=") or words[0].startswith("path_prefix=")):
            name, _, value = words.pop(0).partition("=")
            if name == "top_k":
                try:
                    top_k = int(value)
                except ValueError:
                    return f"top_k must be a number, got {value!r}"
            else:
                prefix = value
        return render_hits(_search(card, " ".join(words), top_k, prefix))

    return workspace_rag_search
