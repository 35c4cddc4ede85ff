"""The in-memory vector engine: one contiguous float32 matrix per collection.

Rows are stored L2-normalised, so a search is one matrix-vector product. Row slots
keep insertion order (an upsert keeps the slot of the row it replaces), which is
what ties sort by. Team and scope are interned to integer codes held in arrays
beside the matrix, so the common predicates are vectorised masks; path prefixes
and field filters are evaluated per candidate row only when a query uses them.

This module imports numpy; the plugin module that registers the backend does not.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from akgentic.vector.protocol import (
    SearchHit,
    SearchResult,
    VectorEntry,
    VectorQuery,
    check_filters,
    check_path_prefix,
    check_top_k,
    is_shared,
    matches_filters,
    require_scope,
    require_team,
    row_id_factory,
    row_object_id,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from akgentic.vector.param import VectorStoreParam

__all__ = ["InMemoryBackend", "InMemoryStorage", "decode_vectors", "encode_vectors"]

_INITIAL_CAPACITY = 64


def encode_vectors(matrix: NDArray[np.float32]) -> str:
    """A float32 matrix as base64 of its little-endian bytes."""
    return base64.b64encode(np.ascontiguousarray(matrix, dtype="<f4").tobytes()).decode("ascii")


def decode_vectors(data: str, dimension: int) -> NDArray[np.float32]:
    """The inverse of :func:`encode_vectors`: an ``(n, dimension)`` float32 matrix."""
    raw = np.frombuffer(base64.b64decode(data), dtype="<f4")
    return raw.reshape(-1, dimension).astype(np.float32, copy=False)


@dataclass
class _Row:
    ref_type: str
    ref_id: str
    text: str
    scope: str | None
    path: str | None
    ordinal: int | None
    team_id: str
    tenant: str | None
    object_id: str

    def fields(self) -> dict[str, Any]:
        return {
            "ref_type": self.ref_type,
            "ref_id": self.ref_id,
            "text": self.text,
            "scope": self.scope,
            "path": self.path,
            "ordinal": self.ordinal,
        }


class _Codes:
    """Interns strings (and None) to small integers for vectorised masks."""

    def __init__(self) -> None:
        self._codes: dict[str | None, int] = {}

    def code(self, value: str | None) -> int:
        code = self._codes.get(value)
        if code is None:
            code = self._codes[value] = len(self._codes)
        return code

    def find(self, value: str | None) -> int | None:
        return self._codes.get(value)


class _Collection:
    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.matrix: NDArray[np.float32] = np.zeros((_INITIAL_CAPACITY, dimension), np.float32)
        self.teams: NDArray[np.int32] = np.zeros(_INITIAL_CAPACITY, np.int32)
        self.scopes: NDArray[np.int32] = np.zeros(_INITIAL_CAPACITY, np.int32)
        self.rows: list[_Row] = []
        self.slots: dict[str, int] = {}

    @property
    def size(self) -> int:
        return len(self.rows)

    def _reserve(self, extra: int) -> None:
        needed = self.size + extra
        capacity = self.matrix.shape[0]
        if needed <= capacity:
            return
        while capacity < needed:  # grow by half: amortised copies, at most a third unused
            capacity = capacity + capacity // 2
        matrix = np.zeros((capacity, self.dimension), np.float32)
        matrix[: self.size] = self.matrix[: self.size]
        teams = np.zeros(capacity, np.int32)
        teams[: self.size] = self.teams[: self.size]
        scopes = np.zeros(capacity, np.int32)
        scopes[: self.size] = self.scopes[: self.size]
        self.matrix, self.teams, self.scopes = matrix, teams, scopes

    def upsert(
        self, rows: Sequence[_Row], vectors: NDArray[np.float32], teams: _Codes, scopes: _Codes
    ) -> None:
        # The last duplicate of a batch wins: keep only each id's last position.
        last: dict[str, int] = {}
        for i, row in enumerate(rows):
            last[row.object_id] = i
        picked = list(last.values())
        self._reserve(len(picked))
        slots: list[int] = []
        table, index = self.rows, self.slots
        for i in picked:
            row = rows[i]
            slot = index.get(row.object_id)
            if slot is None:
                slot = index[row.object_id] = len(table)
                table.append(row)
            else:
                table[slot] = row
            slots.append(slot)
        where = np.asarray(slots, dtype=np.intp)
        self.matrix[where] = vectors[np.asarray(picked, dtype=np.intp)]
        self.teams[where] = [teams.code(rows[i].team_id) for i in picked]
        self.scopes[where] = [scopes.code(rows[i].scope) for i in picked]

    def delete(self, slots: Iterable[int]) -> None:
        doomed = sorted(set(slots))
        if not doomed:
            return
        keep = np.ones(self.size, bool)
        keep[doomed] = False
        kept = int(keep.sum())
        self.matrix[:kept] = self.matrix[: self.size][keep]
        self.teams[:kept] = self.teams[: self.size][keep]
        self.scopes[:kept] = self.scopes[: self.size][keep]
        gone = set(doomed)
        self.rows = [row for i, row in enumerate(self.rows) if i not in gone]
        self.slots = {row.object_id: i for i, row in enumerate(self.rows)}


class InMemoryStorage:
    """Collections shared by every backend view over them (one per team in tests).

    All access runs under one lock: the engine is safe to share between threads.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.collections: dict[str, _Collection] = {}
        self.teams = _Codes()
        self.scopes = _Codes()


class InMemoryBackend:
    """The ``inmemory`` backend: a team's (and tenant's) view over an :class:`InMemoryStorage`.

    ``tenant`` is accepted and ignored for visibility, as the spec says, but is part of
    the row id so that ids agree with the cluster backends.
    """

    def __init__(
        self,
        storage: InMemoryStorage | None = None,
        team_id: str | None = None,
        tenant: str | None = None,
    ) -> None:
        self.storage = storage if storage is not None else InMemoryStorage()
        self.team_id = team_id or None
        self.tenant = tenant
        self._created: set[str] = set()

    # ------------------------------------------------------------ collections

    def create_collection(self, name: str, config: VectorStoreParam) -> None:
        """Create ``name`` at ``config.dimension`` (a no-op if it exists with that width)."""
        with self.storage.lock:
            existing = self.storage.collections.get(name)
            if existing is None:
                self.storage.collections[name] = _Collection(config.dimension)
            elif existing.dimension != config.dimension:
                raise ValueError(
                    f"collection {name!r} exists with dimension {existing.dimension}, "
                    f"not {config.dimension}"
                )
            self._created.add(name)

    def _collection(self, name: str) -> _Collection:
        collection = self.storage.collections.get(name)
        if collection is None or name not in self._created:
            raise ValueError(f"collection {name!r} was never created by this backend")
        return collection

    # ------------------------------------------------------------------ writes

    def add(self, collection: str, entries: list[VectorEntry]) -> None:
        """Upsert ``entries``; every vector is checked before anything is written."""
        if not entries:
            with self.storage.lock:
                self._collection(collection)
            return
        vectors = _as_matrix([e.vector for e in entries])
        self.add_matrix(collection, entries, vectors)

    def add_matrix(
        self,
        collection: str,
        entries: Sequence[VectorEntry],
        vectors: NDArray[Any],
        *,
        normalised: bool = False,
    ) -> NDArray[np.float32]:
        """Upsert ``entries`` whose vectors are the rows of ``vectors`` (their own are unused).

        Returns the unit float32 rows as stored. ``normalised=True`` stores float32 rows
        that already are (a replay of what this method returned) bit for bit.
        """
        with self.storage.lock:
            target = self._collection(collection)
            if normalised and vectors.dtype == np.float32 and vectors.ndim == 2:
                if vectors.shape != (len(entries), target.dimension):
                    raise ValueError("replayed vectors do not match their rows")
                unit = vectors
            else:
                unit = _normalised(vectors, target.dimension)
            team = "" if is_shared(collection) else (self.team_id or "")
            row_id = row_id_factory(collection, self.team_id, self.tenant)
            rows = [
                _Row(
                    ref_type=e.ref_type,
                    ref_id=e.ref_id,
                    text=e.text,
                    scope=e.scope,
                    path=e.path,
                    ordinal=e.ordinal,
                    team_id=team,
                    tenant=self.tenant,
                    object_id=row_id(e.ref_id),
                )
                for e in entries
            ]
            target.upsert(rows, unit, self.storage.teams, self.storage.scopes)
            return unit

    def remove(
        self,
        collection: str,
        ref_ids: list[str],
        scope: str | None = None,
        path_prefix: str | None = None,
    ) -> None:
        """Delete the listed ids of this team that match ``scope`` and ``path_prefix``."""
        check_path_prefix(path_prefix)
        require_scope(collection, scope)
        require_team(collection, self.team_id)
        wanted = set(ref_ids)
        with self.storage.lock:
            target = self._collection(collection)
            mask = self._mask(collection, target, scope)
            doomed = [
                slot
                for slot in np.flatnonzero(mask).tolist()
                if target.rows[slot].ref_id in wanted
                and _under(target.rows[slot].path, path_prefix)
            ]
            target.delete(doomed)

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
        """Cosine top-``top_k`` of the visible rows; ties keep insertion order."""
        check_top_k(top_k)
        check_path_prefix(path_prefix)
        filters = check_filters(query)
        require_scope(collection, scope)
        require_team(collection, self.team_id)
        threshold = query.score_threshold if query is not None else None
        with self.storage.lock:
            target = self._collection(collection)
            vector = _normalised(_as_matrix([query_vector]), target.dimension, "query vector")[0]
            n = target.size
            if n == 0:
                return SearchResult()
            # numpy's own single-threaded kernel: a threaded BLAS gemv hands work to a
            # second thread, which on a busy machine costs more than the scan itself.
            scores = np.einsum("ij,j->i", target.matrix[:n], vector)
            mask = self._mask(collection, target, scope)
            if path_prefix is not None or filters:
                for slot in np.flatnonzero(mask).tolist():
                    row = target.rows[slot]
                    if not _under(row.path, path_prefix) or not matches_filters(
                        row.fields(), filters
                    ):
                        mask[slot] = False
            candidates = np.flatnonzero(mask)
            if candidates.size == 0:
                return SearchResult()
            picked = _top(scores, candidates, top_k)
            hits = []
            for slot in picked.tolist():
                score = float(min(1.0, max(0.0, scores[slot])))
                if threshold is not None and score < threshold:
                    continue
                row = target.rows[slot]
                hits.append(SearchHit(score=score, **row.fields()))
            return SearchResult(hits=hits)

    def count(self, collection: str) -> int:
        """Rows of ``collection`` visible to this team."""
        with self.storage.lock:
            target = self._collection(collection)
            if is_shared(collection):
                return target.size
            return int(self._mask(collection, target, None).sum())

    def list_collections(self) -> list[str]:
        """Every collection of the storage."""
        with self.storage.lock:
            return sorted(self.storage.collections)

    def delete_by_team(self, collection: str, team_id: str) -> int:
        """Delete every row written by ``team_id`` (refuses shared and missing collections)."""
        if is_shared(collection):
            raise ValueError(
                f"Collection '{collection}' is shared across teams; its rows are never "
                "deleted by team"
            )
        with self.storage.lock:
            target = self.storage.collections.get(collection)
            if target is None:
                raise ValueError(f"collection {collection!r} does not exist")
            code = self.storage.teams.find(team_id)
            if code is None:
                return 0
            doomed = np.flatnonzero(target.teams[: target.size] == code).tolist()
            target.delete(doomed)
            return len(doomed)

    def stored_ids(self, collection: str) -> list[str]:
        """The ids of the rows of ``collection`` (for the contract kit)."""
        with self.storage.lock:
            return [row.object_id for row in self._collection(collection).rows]

    # ------------------------------------------------------------------- state

    def get_state(self) -> dict[str, Any]:
        """Every collection this backend created, vectors as base64 float32 (JSON-safe)."""
        with self.storage.lock:
            collections: dict[str, Any] = {}
            for name in sorted(self._created):
                target = self.storage.collections[name]
                collections[name] = {
                    "dimension": target.dimension,
                    "rows": [
                        {**row.fields(), "team_id": row.team_id, "tenant": row.tenant}
                        for row in target.rows
                    ],
                    "vectors": encode_vectors(target.matrix[: target.size]),
                }
            return {"format": "f32-base64", "collections": collections}

    def restore_state(self, state: dict[str, Any]) -> None:
        """Replace the collections named in ``state`` (also the list-of-floats form)."""
        with self.storage.lock:
            for name, data in (state.get("collections") or {}).items():
                dimension = int(data["dimension"])
                rows_data = list(data.get("rows") or [])
                matrix: NDArray[Any]
                if "vectors" in data:
                    matrix = decode_vectors(data["vectors"], dimension)
                else:
                    matrix = _as_matrix([r["vector"] for r in rows_data]).reshape(-1, dimension)
                target = _Collection(dimension)
                rows = [
                    _Row(
                        ref_type=r["ref_type"],
                        ref_id=r["ref_id"],
                        text=r.get("text", ""),
                        scope=r.get("scope"),
                        path=r.get("path"),
                        ordinal=r.get("ordinal"),
                        team_id=r.get("team_id", self.team_id or ""),
                        tenant=r.get("tenant"),
                        object_id=row_object_id(
                            name, r.get("team_id") or None, r.get("tenant"), r["ref_id"]
                        ),
                    )
                    for r in rows_data
                ]
                if rows:
                    unit = _normalised(matrix, dimension)
                    target.upsert(rows, unit, self.storage.teams, self.storage.scopes)
                self.storage.collections[name] = target
                self._created.add(name)

    # --------------------------------------------------------------- internals

    def _mask(self, name: str, target: _Collection, scope: str | None) -> NDArray[np.bool_]:
        n = target.size
        mask: NDArray[np.bool_]
        if is_shared(name) or self.team_id is None:
            mask = np.ones(n, bool)
        else:
            code = self.storage.teams.find(self.team_id)
            mask = np.zeros(n, bool) if code is None else target.teams[:n] == code
        if scope is not None:
            code = self.storage.scopes.find(scope)
            mask = np.zeros(n, bool) if code is None else mask & (target.scopes[:n] == code)
        return mask


def _as_matrix(vectors: Sequence[Sequence[float]]) -> NDArray[np.float64]:
    try:
        matrix = np.array(vectors, dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"vectors are not a rectangular list of numbers: {exc}") from None
    if matrix.ndim != 2:
        if matrix.size == 0:
            raise ValueError("vector is empty")
        raise ValueError("vectors have different widths")
    return matrix


def _normalised(vectors: NDArray[Any], dimension: int, what: str = "vector") -> NDArray[np.float32]:
    if vectors.shape[1] == 0:
        raise ValueError(f"{what} is empty")
    if vectors.shape[1] != dimension:
        raise ValueError(
            f"{what} has {vectors.shape[1]} dimensions, the collection has {dimension}"
        )
    if not np.isfinite(vectors).all():
        raise ValueError(f"{what} holds a non-finite value")
    norms = np.linalg.norm(vectors, axis=1)
    if (norms == 0).any():
        raise ValueError(f"{what} is all zeros and has no direction")
    unit: NDArray[np.float32] = (vectors / norms[:, None]).astype(np.float32)
    return unit


def _top(scores: NDArray[Any], candidates: NDArray[np.intp], k: int) -> NDArray[np.intp]:
    """The best ``k`` candidate slots, by descending score then ascending slot."""
    values = scores[candidates]
    if candidates.size > k:
        # Keep everything tied with the k-th best so the slot order can break ties.
        kth = np.partition(values, candidates.size - k)[candidates.size - k]
        keep = values >= kth
        candidates, values = candidates[keep], values[keep]
    order = np.lexsort((candidates, -values))
    return candidates[order][:k]


def _under(path: str | None, prefix: str | None) -> bool:
    return prefix is None or (path is not None and path.startswith(prefix))
