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
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from pydantic import ConfigDict, TypeAdapter, ValidationError

from akgentic.vector.backend_support import (
    check_remove,
    check_search,
    check_team_delete,
    writer_team,
)
from akgentic.vector.blas_threads import single_blas_thread
from akgentic.vector.protocol import (
    SearchHit,
    SearchResult,
    VectorEntry,
    VectorQuery,
    clamp_score,
    is_shared,
    matches_filters,
    row_object_id,
)
from akgentic.vector.quantised import (
    QUANTISE_FROM_ROWS,
    Codes,
    approximate_scores,
    available,
    certified_candidates,
    quantise,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from akgentic.vector.param import VectorStoreParam

__all__ = [
    "Collection",
    "InMemoryBackend",
    "InMemoryStorage",
    "as_matrix",
    "decode_vectors",
    "encode_vectors",
]

_INITIAL_CAPACITY = 64
_TRANSPOSE_BLOCK = 64
_QUANTISE_BLOCK = 4096


def encode_vectors(matrix: NDArray[np.float32]) -> str:
    """A float32 matrix as base64 of its little-endian bytes."""
    return base64.b64encode(np.ascontiguousarray(matrix, dtype="<f4").tobytes()).decode("ascii")


def decode_vectors(data: str, dimension: int) -> NDArray[np.float32]:
    """The inverse of :func:`encode_vectors`: an ``(n, dimension)`` float32 matrix."""
    raw = np.frombuffer(_b64decode(data), dtype="<f4")
    return raw.reshape(-1, dimension).astype(np.float32, copy=False)


_BASE64_BYTES: TypeAdapter[bytes] = TypeAdapter(bytes, config=ConfigDict(val_json_bytes="base64"))


def _b64decode(data: str) -> bytes:
    """Base64 decoded by pydantic-core (ten times faster here than ``binascii``).

    Replaying a store decodes every vector it ever logged, so this is most of a
    restore's own cost. Anything the fast decoder refuses goes through the standard
    library, which decides (and words the error).
    """
    try:
        return _BASE64_BYTES.validate_json(f'"{data}"')
    except ValidationError:
        return base64.b64decode(data)


# A row's fields, in this order; one tuple per row (no per-row object on the hot path).
_FIELDS = ("ref_type", "ref_id", "text", "scope", "path", "ordinal")
_TEAM: Final = 6
_TENANT: Final = 7
_Row = tuple[str, str, str, str | None, str | None, int | None, str, str | None]


_REF_ID = itemgetter(1)
_SCOPE = itemgetter(3)


def _scope_codes(rows: Sequence[_Row], scopes: _Codes) -> int | list[int]:
    """The scope code of each row (one code when the batch has one scope)."""
    distinct = set(map(_SCOPE, rows))
    if len(distinct) == 1:
        return scopes.code(distinct.pop())
    codes = {value: scopes.code(value) for value in distinct}
    return list(map(codes.__getitem__, map(_SCOPE, rows)))


def _fields(row: _Row) -> dict[str, Any]:
    return dict(zip(_FIELDS, row, strict=False))


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


class Collection:
    """One collection: unit vectors as the columns of a ``(dimension, capacity)`` matrix.

    Column-major storage is what makes a search fast: ``q @ columns`` is BLAS's
    plain gemv, which streams the matrix once while the scores stay in cache, where
    the row-major product (a dot product per row) ran three to four times slower
    here. Capacity grows by half when full, so appends copy amortised O(1) per row.

    A large collection also keeps its rows as int8 codes (:mod:`akgentic.vector.quantised`),
    built by the first search that wants them and kept up to date from then on.
    """

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.columns: NDArray[np.float32] = np.zeros((dimension, _INITIAL_CAPACITY), np.float32)
        self.teams: NDArray[np.int32] = np.zeros(_INITIAL_CAPACITY, np.int32)
        self.scopes: NDArray[np.int32] = np.zeros(_INITIAL_CAPACITY, np.int32)
        self.rows: list[_Row] = []
        # (team, tenant) -> ref_id -> slot: the row id's inputs, without hashing per row.
        self.slots: dict[tuple[str, str | None], dict[str, int]] = {}
        # team code -> rows, so that a team owning every row needs no mask.
        self.team_rows: dict[int, int] = {}
        # The rows' int8 codes (capacity rows, row-major), once a search built them.
        self.codes: Codes | None = None

    @property
    def size(self) -> int:
        return len(self.rows)

    def vectors(self) -> NDArray[np.float32]:
        """The stored unit rows as a row-major ``(size, dimension)`` copy."""
        return np.ascontiguousarray(self.columns[:, : self.size].T)

    def _reserve(self, extra: int) -> None:
        needed = self.size + extra
        capacity = self.columns.shape[1]
        if needed <= capacity:
            return
        while capacity < needed:  # grow by half: amortised copies, at most a third unused
            capacity = capacity + capacity // 2
        n = self.size
        columns = np.empty((self.dimension, capacity), np.float32)
        columns[:, :n] = self.columns[:, :n]
        teams = np.zeros(capacity, np.int32)
        teams[:n] = self.teams[:n]
        scopes = np.zeros(capacity, np.int32)
        scopes[:n] = self.scopes[:n]
        self.columns, self.teams, self.scopes = columns, teams, scopes
        if self.codes is not None:
            grown = _empty_codes(capacity, self.dimension)
            _put_codes(grown, slice(0, n), _codes_of(self.codes, slice(0, n)))
            self.codes = grown

    def quantised(self) -> Codes:
        """The int8 codes of the rows (built on first use, then kept in step)."""
        n = self.size
        if self.codes is None:
            codes = _empty_codes(self.columns.shape[1], self.dimension)
            for first in range(0, n, _QUANTISE_BLOCK):
                stop = min(n, first + _QUANTISE_BLOCK)
                block = np.ascontiguousarray(self.columns[:, first:stop].T)
                _put_codes(codes, slice(first, stop), quantise(block))
            self.codes = codes
        return _codes_of(self.codes, slice(0, n))

    def _code(self, where: slice | NDArray[np.intp], unit: NDArray[np.float32]) -> None:
        """Keep the codes (when built) in step with rows written at ``where``."""
        if self.codes is not None:
            _put_codes(self.codes, where, quantise(unit))

    def upsert(
        self,
        rows: Sequence[_Row],
        vectors: NDArray[np.float32],
        team_code: int,
        scopes: _Codes,
    ) -> None:
        """Upsert rows of one team and tenant; the last duplicate of a batch wins.

        A replaced row keeps its slot (insertion order is the tie-break of a search).
        """
        if not rows:
            return
        team, tenant = rows[0][_TEAM], rows[0][_TENANT]
        ids = list(map(_REF_ID, rows))
        last = dict(zip(ids, range(len(rows)), strict=True))
        if len(last) == len(rows):
            picked: list[int] | None = None
            ordered: Sequence[_Row] = rows
        else:
            picked = list(last.values())
            ordered = [rows[i] for i in picked]
            ids = [ids[i] for i in picked]
        self._reserve(len(ordered))
        index = self.slots.setdefault((team, tenant), {})
        table = self.rows
        start = len(table)
        source = vectors if picked is None else vectors[np.asarray(picked, dtype=np.intp)]
        scope_codes = _scope_codes(ordered, scopes)
        if index.keys().isdisjoint(ids):  # appends only (the common case): slices
            end = start + len(ordered)
            table.extend(ordered)
            index.update(zip(ids, range(start, end), strict=True))
            self.team_rows[team_code] = self.team_rows.get(team_code, 0) + len(ordered)
            # Transposing in blocks of rows keeps both sides in cache (twice as fast).
            for first in range(0, len(ordered), _TRANSPOSE_BLOCK):
                stop = min(len(ordered), first + _TRANSPOSE_BLOCK)
                self.columns[:, start + first : start + stop] = source[first:stop].T
            self.teams[start:end] = team_code
            self.scopes[start:end] = scope_codes
            self._code(slice(start, end), source)
            return
        slots: list[int] = []
        for ref_id, row in zip(ids, ordered, strict=True):
            slot = index.get(ref_id)
            if slot is None:
                slot = index[ref_id] = len(table)
                table.append(row)
            else:
                table[slot] = row
            slots.append(slot)
        added = len(table) - start
        if added:
            self.team_rows[team_code] = self.team_rows.get(team_code, 0) + added
        where = np.asarray(slots, dtype=np.intp)
        self.columns[:, where] = source.T
        self.teams[where] = team_code
        self.scopes[where] = scope_codes
        self._code(where, source)

    def delete(self, slots: Iterable[int]) -> None:
        doomed = sorted(set(slots))
        if not doomed:
            return
        n = self.size
        keep = np.ones(n, bool)
        keep[doomed] = False
        kept = int(keep.sum())
        self.columns[:, :kept] = self.columns[:, :n][:, keep]
        self.teams[:kept] = self.teams[:n][keep]
        self.scopes[:kept] = self.scopes[:n][keep]
        if self.codes is not None:
            _put_codes(self.codes, slice(0, kept), _codes_of(self.codes, keep, n))
        gone = set(doomed)
        self.rows = [row for i, row in enumerate(self.rows) if i not in gone]
        self.slots = {}
        for slot, row in enumerate(self.rows):
            self.slots.setdefault((row[_TEAM], row[_TENANT]), {})[row[1]] = slot
        codes, counts = np.unique(self.teams[:kept], return_counts=True)
        self.team_rows = dict(zip(codes.tolist(), counts.tolist(), strict=True))


class InMemoryStorage:
    """Collections shared by every backend view over them (one per team in tests).

    All access runs under one lock: the engine is safe to share between threads.
    A collection of ``quantise_from`` rows or more is searched through its int8 codes
    first (same results, a quarter of the memory read); ``None`` never does.
    """

    def __init__(self, quantise_from: int | None = QUANTISE_FROM_ROWS) -> None:
        self.quantise_from = quantise_from
        self.lock = threading.RLock()
        self.collections: dict[str, Collection] = {}
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
                self.storage.collections[name] = Collection(config.dimension)
            elif existing.dimension != config.dimension:
                raise ValueError(
                    f"collection {name!r} exists with dimension {existing.dimension}, "
                    f"not {config.dimension}"
                )
            self._created.add(name)

    def _collection(self, name: str) -> Collection:
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
        vectors = as_matrix([e.vector for e in entries])
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
        team, tenant = self._team(collection), self.tenant
        rows = [
            (e.ref_type, e.ref_id, e.text, e.scope, e.path, e.ordinal, team, tenant)
            for e in entries
        ]
        return self._upsert(collection, rows, vectors, normalised)

    def add_rows(
        self, collection: str, rows: Sequence[Mapping[str, Any]], vectors: NDArray[np.float32]
    ) -> None:
        """Replay: upsert row field mappings with the unit float32 rows stored before.

        The bulk path of a restore (no :class:`VectorEntry` per row); ``rows`` are
        ``{"ref_type", "ref_id", "text"?, "scope"?, "path"?, "ordinal"?}`` mappings.
        """
        team, tenant = self._team(collection), self.tenant
        table = [
            (
                r["ref_type"],
                r["ref_id"],
                r.get("text", ""),
                r.get("scope"),
                r.get("path"),
                r.get("ordinal"),
                team,
                tenant,
            )
            for r in rows
        ]
        self._upsert(collection, table, vectors, True)

    def _upsert(
        self, collection: str, rows: list[_Row], vectors: NDArray[Any], normalised: bool
    ) -> NDArray[np.float32]:
        with self.storage.lock:
            target = self._collection(collection)
            if normalised and vectors.dtype == np.float32 and vectors.ndim == 2:
                if vectors.shape != (len(rows), target.dimension):
                    raise ValueError("replayed vectors do not match their rows")
                unit = vectors
            else:
                if vectors.shape[0] != len(rows):
                    raise ValueError("vectors do not match their rows")
                unit = _normalised(vectors, target.dimension)
            if rows:
                team_code = self.storage.teams.code(rows[0][_TEAM])
                target.upsert(rows, unit, team_code, self.storage.scopes)
            return unit

    def remove(
        self,
        collection: str,
        ref_ids: list[str],
        scope: str | None = None,
        path_prefix: str | None = None,
    ) -> None:
        """Delete the listed ids of this team that match ``scope`` and ``path_prefix``."""
        check_remove(collection, self.team_id, scope, path_prefix)
        with self.storage.lock:
            target = self._collection(collection)
            visible = self._visible(collection, target, scope)
            team = self._team(collection)
            wanted = set(ref_ids)
            doomed = []
            # The tenant is not a visibility boundary: every tenant's index of the team.
            for (owner, _tenant), index in target.slots.items():
                if owner != team:
                    continue
                for ref_id in wanted:
                    slot = index.get(ref_id)
                    if slot is None or (visible is not None and not visible[slot]):
                        continue
                    if _under(target.rows[slot][4], path_prefix):
                        doomed.append(slot)
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
        filters, threshold, _params = check_search(
            collection, self.team_id, top_k, scope, path_prefix, query
        )
        with self.storage.lock:
            target = self._collection(collection)
            vector = _normalised(as_matrix([query_vector]), target.dimension, "query vector")[0]
            n = target.size
            if n == 0:
                return SearchResult()
            visible = self._visible(collection, target, scope)
            if path_prefix is not None or filters:
                visible = self._filtered(target, visible, path_prefix, filters)
            if visible is not None and not visible.any():
                return SearchResult()
            with single_blas_thread():
                ranked = self._ranked(target, vector, visible, top_k)
            hits = []
            rows = target.rows
            for slot, raw in ranked:
                score = clamp_score(raw)
                if threshold is not None and score < threshold:
                    continue
                hits.append(SearchHit(score=score, **_fields(rows[slot])))
            return SearchResult(hits=hits)

    def _ranked(
        self,
        target: Collection,
        vector: NDArray[np.float32],
        visible: NDArray[np.bool_] | None,
        top_k: int,
    ) -> list[tuple[int, float]]:
        """``(slot, exact score)`` of the best ``top_k`` visible rows, best first."""
        n = target.size
        quantise_from = self.storage.quantise_from
        if quantise_from is not None and n >= quantise_from and available():
            codes = target.quantised()
            found = approximate_scores(codes, vector)
            if visible is not None:
                found.scores[~visible] = -np.inf
            slots = certified_candidates(codes, found, top_k)
            if slots is not None:
                exact = vector @ target.columns[:, slots]
                return _ranked_pairs(exact, slots, top_k)
        scores = vector @ target.columns[:, :n]
        if visible is None:
            return _ranked_pairs(scores, None, top_k)
        slots = np.flatnonzero(visible)
        return _ranked_pairs(scores[slots], slots, top_k)

    def count(self, collection: str) -> int:
        """Rows of ``collection`` visible to this team."""
        with self.storage.lock:
            target = self._collection(collection)
            visible = self._visible(collection, target, None)
            return target.size if visible is None else int(visible.sum())

    def list_collections(self) -> list[str]:
        """Every collection of the storage."""
        with self.storage.lock:
            return sorted(self.storage.collections)

    def delete_by_team(self, collection: str, team_id: str) -> int:
        """Delete every row written by ``team_id`` (refuses shared and missing collections)."""
        check_team_delete(collection)
        with self.storage.lock:
            target = self.storage.collections.get(collection)
            if target is None:
                raise ValueError(f"collection {collection!r} does not exist")
            code = self.storage.teams.find(team_id)
            if code is None or not target.team_rows.get(code):
                return 0
            doomed = np.flatnonzero(target.teams[: target.size] == code).tolist()
            target.delete(doomed)
            return len(doomed)

    def stored_ids(self, collection: str) -> list[str]:
        """The ids of the rows of ``collection`` (for the contract kit)."""
        with self.storage.lock:
            return [
                row_object_id(collection, row[_TEAM] or None, row[_TENANT], row[1])
                for row in self._collection(collection).rows
            ]

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
                        {**_fields(row), "team_id": row[_TEAM], "tenant": row[_TENANT]}
                        for row in target.rows
                    ],
                    "vectors": encode_vectors(target.vectors()),
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
                    matrix = as_matrix([r["vector"] for r in rows_data]).reshape(-1, dimension)
                target = Collection(dimension)
                rows: list[_Row] = [
                    (
                        r["ref_type"],
                        r["ref_id"],
                        r.get("text", ""),
                        r.get("scope"),
                        r.get("path"),
                        r.get("ordinal"),
                        r.get("team_id", self.team_id or ""),
                        r.get("tenant"),
                    )
                    for r in rows_data
                ]
                if rows:
                    unit = _normalised(matrix, dimension)
                    # One upsert per run of rows sharing a team and tenant, in order.
                    start = 0
                    for end in range(1, len(rows) + 1):
                        if end == len(rows) or rows[end][_TEAM:] != rows[start][_TEAM:]:
                            code = self.storage.teams.code(rows[start][_TEAM])
                            target.upsert(
                                rows[start:end], unit[start:end], code, self.storage.scopes
                            )
                            start = end
                self.storage.collections[name] = target
                self._created.add(name)

    # --------------------------------------------------------------- internals

    def _team(self, collection: str) -> str:
        """The team a row of this view is stored under (none in a shared collection)."""
        return writer_team(collection, self.team_id)

    def _visible(
        self, name: str, target: Collection, scope: str | None
    ) -> NDArray[np.bool_] | None:
        """The rows this view may see, or None for all of them (the common case)."""
        n = target.size
        mask: NDArray[np.bool_] | None = None
        if not is_shared(name) and self.team_id is not None:
            code = self.storage.teams.find(self.team_id)
            owned = 0 if code is None else target.team_rows.get(code, 0)
            if owned == 0:
                return np.zeros(n, bool)
            if owned != n:
                mask = target.teams[:n] == code
        if scope is not None:
            code = self.storage.scopes.find(scope)
            if code is None:
                return np.zeros(n, bool)
            in_scope = target.scopes[:n] == code
            mask = in_scope if mask is None else mask & in_scope
        return mask

    @staticmethod
    def _filtered(
        target: Collection,
        visible: NDArray[np.bool_] | None,
        path_prefix: str | None,
        filters: Mapping[str, list[Any]],
    ) -> NDArray[np.bool_]:
        mask = np.ones(target.size, bool) if visible is None else visible.copy()
        rows = target.rows
        for slot in np.flatnonzero(mask).tolist():
            row = rows[slot]
            if not _under(row[4], path_prefix) or not matches_filters(_fields(row), filters):
                mask[slot] = False
        return mask


def as_matrix(vectors: Sequence[Sequence[float]] | NDArray[Any]) -> NDArray[np.float64]:
    """``vectors`` as one float64 matrix, read in one pass.

    ``np.fromiter`` over the chained rows, after a width check, is the fastest way
    from Python floats to an array found here: ``np.array`` on a list of lists also
    probes every element for nesting, which costs it about as much as the conversion.
    """
    if isinstance(vectors, np.ndarray):
        matrix = vectors.astype(np.float64, copy=False)
    else:
        try:
            widths = set(map(len, vectors))
        except TypeError as exc:
            raise ValueError(f"vectors are not a rectangular list of numbers: {exc}") from None
        if len(widths) > 1:
            raise ValueError("vectors have different widths")
        width = widths.pop() if widths else 0
        try:
            flat = np.fromiter(
                chain.from_iterable(vectors), dtype=np.float64, count=width * len(vectors)
            )
        except (ValueError, TypeError) as exc:
            raise ValueError(f"vectors are not a rectangular list of numbers: {exc}") from None
        matrix = flat.reshape(len(vectors), width)
    if matrix.ndim != 2:
        raise ValueError("vectors are not a rectangular list of numbers")
    if matrix.shape[1] == 0:
        raise ValueError("vector is empty")
    return matrix


def _normalised(vectors: NDArray[Any], dimension: int, what: str = "vector") -> NDArray[np.float32]:
    if vectors.shape[1] == 0:
        raise ValueError(f"{what} is empty")
    if vectors.shape[1] != dimension:
        raise ValueError(
            f"{what} has {vectors.shape[1]} dimensions, the collection has {dimension}"
        )
    # A non-finite value makes its row's norm non-finite: only those rows are looked
    # at again (an overflowing square of a finite value is rescaled, not refused).
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    odd = ~np.isfinite(norms)
    if odd.any():
        rows = vectors[odd]
        if not np.isfinite(rows).all():
            raise ValueError(f"{what} holds a non-finite value")
        scale = np.abs(rows).max(axis=1)
        scaled = rows / scale[:, None]
        norms[odd] = np.sqrt(np.einsum("ij,ij->i", scaled, scaled)) * scale
    if (norms == 0).any() or not np.isfinite(norms).all():
        raise ValueError(f"{what} is all zeros and has no direction")
    # Scaled straight into float32: no float64 temporary the size of the batch.
    unit: NDArray[np.float32] = np.empty(vectors.shape, np.float32)
    np.multiply(vectors, (1.0 / norms)[:, None], out=unit, casting="same_kind")
    return unit


_CODE_FIELDS = ("codes", "scales", "errors", "norms")


def _empty_codes(capacity: int, dimension: int) -> Codes:
    vector = np.zeros(capacity, np.float32)
    return Codes(np.zeros((capacity, dimension), np.int8), vector, vector.copy(), vector.copy())


def _codes_of(codes: Codes, where: slice | NDArray[Any], n: int | None = None) -> Codes:
    """The codes of the rows at ``where`` (a boolean ``where`` covers the first ``n``)."""
    parts = [getattr(codes, name) for name in _CODE_FIELDS]
    if n is not None:
        parts = [part[:n] for part in parts]
    return Codes(*(part[where] for part in parts))


def _put_codes(codes: Codes, where: slice | NDArray[np.intp], rows: Codes) -> None:
    for name in _CODE_FIELDS:
        getattr(codes, name)[where] = getattr(rows, name)


def _ranked_pairs(
    values: NDArray[Any], slots: NDArray[np.intp] | None, k: int
) -> list[tuple[int, float]]:
    """The best ``k`` of ``values`` as ``(slot, value)``, by descending value then slot.

    ``values[i]`` is the score of slot ``slots[i]`` (of slot ``i`` when ``slots`` is None).
    """
    size = values.shape[0]
    if size > k:
        # Keep everything tied with the k-th best so the slot order can break ties.
        kth = values[np.argpartition(values, size - k)[size - k]]
        keep = np.flatnonzero(values >= kth)
    else:
        keep = np.arange(size)
    kept = values[keep]
    chosen = keep if slots is None else slots[keep]
    order = np.lexsort((chosen, -kept))[:k]
    return list(zip(chosen[order].tolist(), kept[order].tolist(), strict=True))


def _under(path: str | None, prefix: str | None) -> bool:
    return prefix is None or (path is not None and path.startswith(prefix))
