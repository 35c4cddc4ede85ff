"""The ``#VectorStore`` actor: a team's owner of backends whose rows live in the process.

It exists only when :func:`~akgentic.vector.registry.needs_store_actor` says so
(``inmemory``, and backends such as the workspace's ``local`` that ask for an owner
actor while keeping their rows themselves: their changes are not logged here).
Consumers call it through a proxy with the methods of
:class:`~akgentic.vector.protocol.VectorBackend`.

Durability without snapshots: the original copied the whole index into the actor's
state on every write, so one added row re-serialised every vector. Here the state
holds only the collection settings; each mutation is published as one
:class:`VectorStoreChange` event carrying just that mutation (vectors as base64
float32). The event log therefore grows by the size of each change, never by the
size of the index, and a resume rebuilds the index by replaying the actor's own
events (the restorer hands them to :meth:`VectorStoreActor.init_llm_context`),
after :meth:`~VectorStoreActor.init_state` has re-created the collections.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field
from pydantic_core import from_json

from akgentic.core.agent import Akgent
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.errors import RetriableError
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.core.utils.serializer import SerializableBaseModel
from akgentic.vector.param import VectorStoreParam
from akgentic.vector.protocol import (
    CollectionStatus,
    SearchResult,
    VectorBackend,
    VectorEntry,
    VectorQuery,
)
from akgentic.vector.registry import build_backend, needs_store_actor

if TYPE_CHECKING:
    from akgentic.core.actor_address import ActorAddress

__all__ = [
    "STORE_ACTOR_NAME",
    "VectorStoreActor",
    "VectorStoreChange",
    "VectorStoreConfig",
    "VectorStoreState",
    "ensure_store_actor",
    "find_store_actor",
]

logger = logging.getLogger(__name__)

STORE_ACTOR_NAME = "#VectorStore"
_ROW_FIELDS = ("ref_type", "ref_id", "text", "scope", "path", "ordinal")


class VectorStoreConfig(BaseConfig):
    """Name and role of the store actor; nothing else is configured on it."""


class VectorStoreState(BaseState):
    """What the store checkpoints: collection settings, never rows.

    ``backend_states`` is read only, for snapshots written in the original form
    (whole indexes in the state); this actor never fills it.
    """

    collection_configs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    collection_statuses: dict[str, CollectionStatus] = Field(default_factory=dict)
    backend_states: dict[str, dict[str, Any]] = Field(default_factory=dict)


class VectorStoreChange(SerializableBaseModel):
    """One mutation of the store, as written to the event log.

    ``rows`` holds the rows' fields without their vectors as one compact JSON array
    (one string, so the log's readers and writers do not walk thousands of dicts);
    ``vectors`` holds all the batch's vectors as one base64 string of little-endian
    float32 (``dimension`` wide).
    """

    op: Literal["create", "add", "remove", "delete_team"]
    collection: str
    config: dict[str, Any] | None = None
    rows: str = "[]"
    dimension: int = 0
    vectors: str = ""
    ref_ids: list[str] = Field(default_factory=list)
    scope: str | None = None
    path_prefix: str | None = None
    team_id: str | None = None


class VectorStoreActor(Akgent[VectorStoreConfig, VectorStoreState]):
    """Owns the team's actor-state backends; routes each collection to its backend."""

    def on_start(self) -> None:
        """Empty state, no backend yet (built on first use per backend and root)."""
        self.state = VectorStoreState().observer(self)
        self._backends: dict[tuple[str, str | None], VectorBackend] = {}
        self._routes: dict[str, tuple[str, str | None]] = {}

    # ----------------------------------------------------------- collections

    def create_collection(self, name: str, config: VectorStoreParam) -> None:
        """Create ``name`` on the backend ``config`` names; records the settings."""
        backend = self._open(config)
        try:
            backend.create_collection(name, config)
        except ValueError:
            raise
        except Exception as exc:
            raise RetriableError(f"creating collection {name!r} failed: {exc}") from exc
        self._routes[name] = (config.backend, config.root)
        dumped = config.model_dump(mode="json")
        if self.state.collection_configs.get(name) != dumped:
            self.state.collection_configs[name] = dumped
            self.state.collection_statuses[name] = CollectionStatus.READY
            self.state.notify_state_change()
            self.notify_event(VectorStoreChange(op="create", collection=name, config=dumped))

    # ------------------------------------------------------------------ writes

    def add(self, collection: str, entries: list[VectorEntry]) -> None:
        """Upsert ``entries`` and record the change (nothing is recorded on failure)."""
        backend = self._route(collection)
        try:
            matrix = _matrix(entries)
            add_matrix = getattr(backend, "add_matrix", None)
            if matrix is not None and add_matrix is not None:
                # Record the rows as stored, so a replay rebuilds the same bits.
                matrix = add_matrix(collection, entries, matrix)
            else:
                backend.add(collection, entries)
        except ValueError:
            raise
        except Exception as exc:
            raise RetriableError(f"adding to collection {collection!r} failed: {exc}") from exc
        if entries and self._logged(collection):
            self.notify_event(_add_change(collection, entries, matrix))

    def remove(
        self,
        collection: str,
        ref_ids: list[str],
        scope: str | None = None,
        path_prefix: str | None = None,
    ) -> None:
        """Delete rows; a refused argument is a RetriableError, other failures a no-op."""
        try:
            backend = self._route(collection)
            backend.remove(collection, ref_ids, scope=scope, path_prefix=path_prefix)
        except ValueError as exc:
            raise RetriableError(str(exc)) from exc
        except Exception:
            logger.warning("remove from %r failed", collection, exc_info=True)
            return
        if not self._logged(collection):
            return
        self.notify_event(
            VectorStoreChange(
                op="remove",
                collection=collection,
                ref_ids=list(ref_ids),
                scope=scope,
                path_prefix=path_prefix,
            )
        )

    def delete_by_team(self, collection: str, team_id: str) -> int:
        """Admin: delete ``team_id``'s rows of ``collection``."""
        removed = self._route(collection).delete_by_team(collection, team_id)
        if removed and self._logged(collection):
            self.notify_event(
                VectorStoreChange(op="delete_team", collection=collection, team_id=team_id)
            )
        return removed

    # ------------------------------------------------------------------- reads

    def search(
        self,
        collection: str,
        query_vector: list[float],
        top_k: int,
        scope: str | None = None,
        path_prefix: str | None = None,
        query: VectorQuery | None = None,
    ) -> SearchResult:
        """Search; a refused argument is a RetriableError, other failures no hits."""
        try:
            backend = self._route(collection)
            return backend.search(
                collection, query_vector, top_k, scope=scope, path_prefix=path_prefix, query=query
            )
        except ValueError as exc:
            raise RetriableError(str(exc)) from exc
        except Exception:
            logger.warning("search of %r failed", collection, exc_info=True)
            return SearchResult()

    def count(self, collection: str) -> int:
        """Rows of ``collection``."""
        return self._route(collection).count(collection)

    def list_collections(self) -> list[str]:
        """Collections this store holds."""
        return sorted(self._routes)

    # ----------------------------------------------------------------- restore

    def init_state(self, state: VectorStoreState) -> None:
        """Take the restored settings and re-create every collection (empty).

        Replaces any backend built before the restore (a consumer's ``on_start`` may
        already have created its collection on this fresh actor), and loads indexes
        saved in the original whole-state form.
        """
        super().init_state(state)
        self._backends.clear()
        self._routes.clear()
        for name, dumped in self.state.collection_configs.items():
            self._recreate(name, dumped)
        for name, saved in self.state.backend_states.items():
            route = self._routes.get(name)
            backend = self._backends.get(route) if route is not None else None
            restore = getattr(backend, "restore_state", None)
            if restore is not None:
                restore(saved)
        self.state.backend_states = {}

    def init_llm_context(self, events: list[EventMessage]) -> None:
        """Rebuild the index from this actor's own change events, in log order.

        Consecutive adds to one collection are replayed as one bulk upsert (the same
        result as one by one: a re-added row keeps its first slot and takes its last
        fields), so a restore pays one index update per run of adds, not per event.
        """
        changes = [e.event for e in events if isinstance(e.event, VectorStoreChange)]
        run: list[VectorStoreChange] = []
        for change in changes:
            if change.op == "add" and (not run or _same_run(run[0], change)):
                run.append(change)
                continue
            self._replay_adds(run)
            run = [change] if change.op == "add" else []
            if change.op != "add":
                self._replay(change)
        self._replay_adds(run)

    def _replay(self, change: VectorStoreChange) -> None:
        try:
            self._apply(change)
        except Exception:
            logger.warning(
                "replaying a %s of %r failed; skipped", change.op, change.collection, exc_info=True
            )

    def _replay_adds(self, run: list[VectorStoreChange]) -> None:
        if len(run) > 1:
            try:
                backend = self._route(run[0].collection)
                add_rows = getattr(backend, "add_rows", None)
                if add_rows is not None:
                    import numpy as np

                    from akgentic.vector.engine import decode_vectors

                    rows: list[dict[str, Any]] = []
                    blocks = []
                    for change in run:
                        block = _rows(change)
                        matrix = decode_vectors(change.vectors, change.dimension)
                        if matrix.shape[0] != len(block):
                            raise ValueError("a change's vectors do not match its rows")
                        rows.extend(block)
                        blocks.append(matrix)
                    add_rows(run[0].collection, rows, np.concatenate(blocks))
                    return
            except Exception:
                logger.debug("bulk replay failed; replaying change by change", exc_info=True)
        for change in run:
            self._replay(change)

    # --------------------------------------------------------------- internals

    def _open(self, config: VectorStoreParam) -> VectorBackend:
        key = (config.backend, config.root)
        backend = self._backends.get(key)
        if backend is None:
            try:
                backend = build_backend(config, team_id=str(self.team_id), root=config.root)
            except ValueError:
                raise
            except Exception as exc:
                raise RetriableError(
                    f"the {config.backend!r} vector backend cannot be built: {exc}"
                ) from exc
            self._backends[key] = backend
        return backend

    def _logged(self, collection: str) -> bool:
        """Whether ``collection``'s rows live in this actor, so its changes go to the log.

        A backend that keeps its own durable rows (``persists_in_actor_state=False``,
        such as the workspace's ``local``) is only owned here; logging its vectors
        would duplicate them and make a resume replay them all.
        """
        from akgentic.vector.registry import get_backend_spec

        route = self._routes.get(collection)
        if route is None:
            return True
        return bool(get_backend_spec(route[0]).persists_in_actor_state)

    def _route(self, collection: str) -> VectorBackend:
        key = self._routes.get(collection)
        backend = self._backends.get(key) if key is not None else None
        if backend is None:
            raise ValueError(f"collection {collection!r} was never created in this store")
        return backend

    def _recreate(self, name: str, dumped: dict[str, Any]) -> None:
        config = VectorStoreParam.model_validate(dumped)
        self._open(config).create_collection(name, config)
        self._routes[name] = (config.backend, config.root)
        self.state.collection_configs[name] = dumped
        self.state.collection_statuses[name] = CollectionStatus.READY

    def _apply(self, change: VectorStoreChange) -> None:
        if change.op == "create" and change.config is not None:
            if change.collection not in self._routes:
                self._recreate(change.collection, change.config)
            return
        backend = self._route(change.collection)
        if change.op == "add":
            from akgentic.vector.engine import decode_vectors

            matrix = decode_vectors(change.vectors, change.dimension)
            add_rows = getattr(backend, "add_rows", None)
            if add_rows is not None:
                add_rows(change.collection, _rows(change), matrix)
                return
            entries = [VectorEntry(vector=[], **row) for row in json.loads(change.rows)]
            add_matrix = getattr(backend, "add_matrix", None)
            if add_matrix is not None:
                add_matrix(change.collection, entries, matrix, normalised=True)
            else:
                for entry, vector in zip(entries, matrix.tolist(), strict=True):
                    entry.vector = vector
                backend.add(change.collection, entries)
        elif change.op == "remove":
            backend.remove(
                change.collection,
                change.ref_ids,
                scope=change.scope,
                path_prefix=change.path_prefix,
            )
        elif change.op == "delete_team" and change.team_id is not None:
            backend.delete_by_team(change.collection, change.team_id)


def _rows(change: VectorStoreChange) -> list[dict[str, Any]]:
    """The logged rows of an add, parsed by pydantic-core (``json`` decides what it refuses)."""
    try:
        rows: list[dict[str, Any]] = from_json(change.rows)
    except ValueError:
        rows = json.loads(change.rows)
    return rows


def _same_run(first: VectorStoreChange, change: VectorStoreChange) -> bool:
    return first.collection == change.collection and first.dimension == change.dimension


def _matrix(entries: list[VectorEntry]) -> Any:
    """The batch's vectors as one float64 matrix, or None when they are not rectangular."""
    if not entries:
        return None
    import numpy as np

    width = len(entries[0].vector)
    if width == 0 or any(len(e.vector) != width for e in entries):
        return None
    flat = np.fromiter(
        (value for e in entries for value in e.vector), dtype=np.float64, count=width * len(entries)
    )
    return flat.reshape(len(entries), width)


def _add_change(collection: str, entries: list[VectorEntry], matrix: Any) -> VectorStoreChange:
    from akgentic.vector.engine import encode_vectors

    rows = []
    for entry in entries:
        row: dict[str, Any] = {"ref_type": entry.ref_type, "ref_id": entry.ref_id}
        row["text"] = entry.text
        for name in ("scope", "path", "ordinal"):
            value = getattr(entry, name)
            if value is not None:
                row[name] = value
        rows.append(row)
    if matrix is None:
        matrix = _matrix(entries)
    return VectorStoreChange(
        op="add",
        collection=collection,
        rows=json.dumps(rows, ensure_ascii=True, separators=(",", ":")),  # lone surrogates too
        dimension=int(matrix.shape[1]),
        vectors=encode_vectors(matrix),
    )


def ensure_store_actor(
    param: VectorStoreParam | None, orchestrator_proxy: Any
) -> ActorAddress | None:
    """The team's ``#VectorStore``, created once, when ``param``'s backend needs one.

    Cards call it (with the orchestrator's proxy) before creating their own actor.
    A no-op returning None for cluster backends and declined stores.
    """
    if not needs_store_actor(param):
        return None
    address: ActorAddress = orchestrator_proxy.getChildrenOrCreate(
        VectorStoreActor, config=VectorStoreConfig(name=STORE_ACTOR_NAME, role="ToolActor")
    )
    return address


def find_store_actor(actor: Any) -> ActorAddress:
    """The team's ``#VectorStore`` as a consumer actor's ``on_start`` looks it up.

    Raises RuntimeError when it is missing: the card's ``observer()`` must have called
    :func:`ensure_store_actor` before creating the consumer.
    """
    address: ActorAddress | None = actor.get_team_member(STORE_ACTOR_NAME)
    if address is None:
        raise RuntimeError(
            f"{STORE_ACTOR_NAME} is not in the team: call ensure_store_actor() before "
            "creating the actor that uses it"
        )
    return address
