"""What the retrieval capabilities of one card know about their tree: config, store, records.

A :class:`RagContext` is built by the card's ``observer()`` (and by ``#Workspace`` from
what the card tells it). It opens the store and the embedder, or records why it runs
keyword-only; it never raises after a successful bind.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from akgentic_workspace.rag.models import WorkspaceRagIndex, WorkspaceRagList, WorkspaceRagSearch
from akgentic_workspace.rag.policy import fingerprint
from akgentic_workspace.rag.records import RecordStore
from akgentic_workspace.rag.split import SplitConfig
from akgentic_workspace.rag.walk import WALK_BUDGET_S

__all__ = ["RagContext", "RagSettings"]

log = logging.getLogger("akgentic_workspace.rag")

#: How long a call to the team's ``#VectorStore`` may wait for its answer.
STORE_TIMEOUT_S = 30.0


class RagSettings:
    """The picklable settings a card hands to ``#Workspace`` (last writer wins)."""

    def __init__(
        self,
        *,
        tree: str,
        meta: str,
        scope: str,
        index: WorkspaceRagIndex,
        search: WorkspaceRagSearch,
        listing: WorkspaceRagList,
        store_param: Any,
        keyword_reason: str | None,
        docs_enabled: bool,
        team_id: str | None,
        store_address: Any = None,
    ) -> None:
        self.tree = tree
        self.meta = meta
        self.scope = scope
        self.index = index
        self.search = search
        self.listing = listing
        self.store_param = store_param
        self.keyword_reason = keyword_reason
        self.docs_enabled = docs_enabled
        self.team_id = team_id
        #: The team's ``#VectorStore`` when the backend is owned by one (``local`` in a team).
        self.store_address = store_address


def chunking_of(index: WorkspaceRagIndex) -> dict[str, Any]:
    """The published chunking fields."""
    return {
        "chunk_chars": index.chunk_chars,
        "chunk_overlap_chars": index.chunk_overlap_chars,
        "max_chunk_chars": index.max_chunk_chars,
        "min_chunk_chars": index.min_chunk_chars,
        "prepend_heading_path": index.prepend_heading_path,
    }


class RagContext:
    """Settings plus the live handles: records, store, embedder."""

    def __init__(self, settings: RagSettings) -> None:
        self.settings = settings
        self.tree = settings.tree
        self.scope = settings.scope
        self.records = RecordStore(Path(settings.meta))
        index = settings.index
        self.split_config = SplitConfig(
            index.chunk_chars,
            index.chunk_overlap_chars,
            index.max_chunk_chars,
            index.min_chunk_chars,
        )
        self.prepend_heading = index.prepend_heading_path
        self.fingerprint = fingerprint(chunking_of(index))
        self.store: Any = None
        self.embedder: Any = None
        self.max_batch = 64
        self.max_input_chars = 8000
        self.keyword_reason = settings.keyword_reason
        self.tenant = None
        self.pipeline: Any = None
        #: Seconds one index call may spend walking before it answers with what it saw.
        self.walk_budget_s = WALK_BUDGET_S
        if settings.store_param is not None and self.keyword_reason is None:
            self._open(settings.store_param)

    def _open(self, param: Any) -> None:
        from akgentic.plugin_api import build_backend, build_embedder, get_embedder_spec

        try:
            self.embedder = build_embedder(param, timeout_s=20.0)
            spec = get_embedder_spec(param.embedding_provider)
            self.max_batch = int(getattr(spec, "max_batch", 64) or 64)
            self.max_input_chars = int(getattr(spec, "max_input_chars", 8000) or 8000)
        except Exception as error:
            log.warning("the embedder cannot be built (%s); retrieval runs keyword-only", error)
            self.keyword_reason = f"the embedder cannot be built ({error})"
            return
        try:
            if self.settings.store_address is not None:
                from akgentic.plugin_api import ProxyWrapper

                self.store = ProxyWrapper(self.settings.store_address, timeout=STORE_TIMEOUT_S)
            else:
                self.store = build_backend(param, team_id=self.settings.team_id, root=param.root)
            self.store.create_collection("workspace_chunks", param)
            self.tenant = param.tenant
        except Exception as error:
            log.warning("the vector store is unavailable (%s); retrieval runs keyword-only", error)
            self.keyword_reason = f"the vector store is unavailable ({error})"
            self.store = None
            self.embedder = None

    # ------------------------------------------------------------ documents

    def extract(self, key: str, ext: str, data: bytes) -> str:
        """A document's text through the read path's cache (the ``docs`` extra)."""
        from akgentic_workspace.rag.errors import SourceError
        from akgentic_workspace.rag.extract import extract_text

        try:
            return extract_text(Path(self.settings.meta) / "cache", key, ext, data)
        except SourceError:
            raise
        except Exception as error:
            raise SourceError(f"cannot extract text: {error}", True) from None

    def queue_paths(self, keys: list[str], *, force: bool) -> int:
        """Queue these canonical keys (re-index after writes, uploads); returns how many."""
        from akgentic_workspace.rag.indexing import queue_keys

        return queue_keys(self, keys, force=force)
