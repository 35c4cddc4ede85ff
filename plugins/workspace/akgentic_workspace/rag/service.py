"""Binding retrieval to a card, and the card-side front of the three capabilities.

:func:`bind_retrieval` runs in the card's ``observer()`` when retrieval is on: it
resolves the store (``local`` beside the tree unless a cluster is declared), publishes
or matches the tree's policy, seeds ``.ragignore`` and starts the pipeline — in
``#Workspace`` within a team, in the card otherwise. :class:`RagFront` answers the
tools on the calling agent's thread.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from akgentic.plugin_api import RetriableError
from akgentic_workspace.rag.context import RagContext, RagSettings, chunking_of
from akgentic_workspace.rag.indexing import index_tree, mark_stale
from akgentic_workspace.rag.models import (
    DEFAULT_RAGIGNORE,
    RagSearchResult,
    WorkspaceRagIndex,
    WorkspaceRagList,
    WorkspaceRagSearch,
)
from akgentic_workspace.rag.pipeline import RagPipeline
from akgentic_workspace.rag.policy import CODE_VERSIONS, publish_policy
from akgentic_workspace.rag.records import RecordStore
from akgentic_workspace.rag.searching import render_list, search
from akgentic_workspace.rag.walk import ragignore_text

__all__ = ["RagFront", "StaleMarker", "bind_retrieval", "purge_workspace_index", "resolve_param"]

log = logging.getLogger("akgentic_workspace.rag")

UNAVAILABLE = "Retrieval indexing is not available for this workspace"


def resolve_param(value: Any, meta: Path) -> tuple[Any, str | None]:
    """``(param with root=<meta>, keyword reason)``; ValueError for a refused backend."""
    from akgentic.plugin_api import bind_store, resolve_store_param

    if value is False:
        return None, "the workspace card's vector_store is switched off"
    param = resolve_store_param(value)
    if param is None:
        return None, "the workspace card's vector_store is switched off"
    if param.backend == "inmemory":
        if param.backend_declared:
            raise ValueError(
                "backend 'inmemory' is not a workspace backend: the index's records outlive "
                "the process and its vectors would not; use 'local' (the default) or a cluster"
            )
        param = param.model_copy(update={"backend": "local"})
    param = param.model_copy(update={"root": str(meta)})
    binding = bind_store("WorkspaceTool", param)
    if binding is None:
        return None, "the workspace card's vector_store is switched off"
    if binding.unavailable is not None:
        return None, binding.unavailable
    return param, None


def _seed_ragignore(tree: Path, patterns: list[str]) -> None:
    target = tree / ".ragignore"
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return
    except OSError as error:
        log.warning("seeding %s failed: %s", target, error)
        return
    try:
        os.write(fd, ragignore_text(patterns).encode("utf-8"))
    finally:
        os.close(fd)


class _LocalPoster:
    """Runs posted work under one lock: the mailbox of a pipeline without an actor."""

    def __init__(self) -> None:
        self.lock = threading.RLock()

    def __call__(self, work: Any) -> None:
        with self.lock:
            work()


class RagFront:
    """The card's handle: index call, search, list; the pipeline lives here or in the actor."""

    def __init__(self, ctx: RagContext, actor: Any, pipeline: RagPipeline | None) -> None:
        self.ctx = ctx
        self.actor = actor
        self.pipeline = pipeline
        self.poster: _LocalPoster | None = None

    def index(self, key: str, force: bool) -> str:
        """``workspace_rag_index`` once the path is canonical."""
        text = index_tree(self.ctx, key, force)
        self.drain()
        return text

    def drain(self) -> None:
        """Tell the pipeline to drain (never waits for it)."""
        if self.actor is not None:
            self.actor.rag_drain()
        elif self.pipeline is not None and self.poster is not None:
            self.poster(self.pipeline.drain)

    def search(
        self, query: str, top_k: int, path_prefix: str, alpha: float, threshold: float
    ) -> RagSearchResult:
        """``workspace_rag_search``."""
        return search(self.ctx, query, top_k, path_prefix, alpha, threshold)

    def render_list(self, listing: WorkspaceRagList) -> str:
        """``/workspace_rag_list``."""
        return render_list(self.ctx, listing.max_rows_shown, listing.max_pending_shown)

    def written(self, keys: list[str]) -> None:
        """``reindex_on_write``: this team's writes re-index after the quiet period."""
        if not self.ctx.settings.index.reindex_on_write or not keys:
            return
        if self.actor is not None:
            self.actor.rag_written(keys)
        elif self.pipeline is not None:
            self.pipeline.written(keys)

    def busy(self) -> bool:
        """Whether the pipeline has work in flight (tests wait on it)."""
        if self.actor is not None:
            return bool(self.actor.rag_busy())
        return self.pipeline is not None and self.pipeline.busy()

    def close(self) -> None:
        """Stop the card-owned pipeline."""
        if self.pipeline is not None and self.actor is None:
            self.pipeline.close()


class StaleMarker:
    """The mutation hook every card installs: touched paths with records turn stale."""

    def __init__(self, meta: Path, front: RagFront | None = None) -> None:
        self.meta = meta
        self.front = front
        self._store: RecordStore | None = None

    def __call__(self, keys: list[str]) -> None:
        try:
            if not (self.meta / "rag" / "records").is_dir():
                return
            if self._store is None:
                self._store = (
                    self.front.ctx.records if self.front is not None else RecordStore(self.meta)
                )
            mark_stale(self._store, keys)
            if self.front is not None:
                self.front.written(keys)
        except Exception as error:  # marking never fails the mutation
            log.warning("marking %s stale failed: %s", keys[:3], error)


def _store_actor(observer: Any, param: Any, scope: str, meta: Path) -> Any:
    """The team's ``#VectorStore`` for a ``local`` store (None: cluster, or no team).

    Every tree of a team shares it; the tree's root is registered first so that the
    one backend the store routes ``workspace_chunks`` to files each tree's rows under
    its own ``<meta>/index/``.
    """
    from akgentic.plugin_api import needs_store_actor

    if param.backend == "local":
        from akgentic_workspace.rag.local_backend import register_tree

        register_tree(scope, str(meta))
    orchestrator = getattr(observer, "orchestrator", None)
    if orchestrator is None or not needs_store_actor(param):
        return None
    from akgentic.plugin_api import ensure_store_actor

    return ensure_store_actor(param, observer.proxy_ask(orchestrator))


def bind_retrieval(
    *,
    observer: Any,
    location: Any,
    index: WorkspaceRagIndex,
    search_param: WorkspaceRagSearch,
    listing: WorkspaceRagList,
    vector_store: Any,
    read_only: bool,
    docs_enabled: bool,
    actor_address: Any,
) -> RagFront:
    """Bind retrieval for one card (see module docstring); ValueError refuses the bind."""
    meta = Path(location.meta_dir)
    try:
        (meta / "rag").mkdir(parents=True, exist_ok=True)
        (meta / "locks").mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RetriableError(f"{UNAVAILABLE}: {error}") from None
    param, reason = resolve_param(vector_store, meta)
    sections: dict[str, Any] = {"chunking": chunking_of(index), "versions": dict(CODE_VERSIONS)}
    if param is not None:
        sections["embedder"] = {
            "provider": param.embedding_provider,
            "model": param.embedding_model,
            "dimension": param.dimension,
        }
        sections["backend"] = param.backend
        sections["tenant"] = param.tenant
    tree_id = publish_policy(meta, sections)
    if not read_only:
        _seed_ragignore(
            Path(location.tree),
            list(DEFAULT_RAGIGNORE if index.ragignore is None else index.ragignore),
        )
    team_id = getattr(observer, "team_id", None)
    scope = f"{location.relative}@{tree_id}"
    store_address = None
    if param is not None:
        store_address = _store_actor(observer, param, scope, meta)
    settings = RagSettings(
        tree=str(location.tree),
        meta=str(meta),
        scope=scope,
        index=index,
        search=search_param,
        listing=listing,
        store_param=param,
        keyword_reason=reason,
        docs_enabled=docs_enabled,
        team_id=None if team_id is None else str(team_id),
        store_address=store_address,
    )
    ctx = RagContext(settings)
    if actor_address is not None:
        actor_address.rag_configure(settings)
        return RagFront(ctx, actor_address, None)
    poster = _LocalPoster()
    pipeline = RagPipeline(ctx, poster)
    front = RagFront(ctx, None, pipeline)
    front.poster = poster
    poster(pipeline.drain)
    return front


def purge_workspace_index(workspace_path: str | os.PathLike[str], store: Any = None) -> int:
    """Remove a tree's rows (live, next, owed; scoped) before the tree itself is removed.

    ``workspace_path`` is the tree's absolute path; ``store`` the backend holding its
    rows (None = the tree's ``local`` database). Returns how many ids were removed.
    """
    import json

    tree = Path(workspace_path)
    meta = tree.with_name(tree.name + ".index")
    policy = json.loads((meta / "rag" / "policy.json").read_text(encoding="utf-8"))
    relative = "/".join(tree.parts[-3:])
    scope = f"{relative}@{policy['tree_id']}"
    records = RecordStore(meta)
    ids: list[str] = []
    for record in records.snapshot().values():
        for name in ("live", "next"):
            ids += [c["id"] for c in (record.get(name) or {}).get("chunks", [])]
        ids += list(record.get("owed") or [])
    if store is None:
        from akgentic_workspace.rag.local_backend import LocalBackend

        store = LocalBackend(str(meta))
        from akgentic.plugin_api import VectorStoreParam

        dimension = int((policy.get("embedder") or {}).get("dimension", 1))
        store.create_collection("workspace_chunks", VectorStoreParam(dimension=dimension))
    if ids:
        store.remove("workspace_chunks", ids, scope=scope)
    return len(ids)
