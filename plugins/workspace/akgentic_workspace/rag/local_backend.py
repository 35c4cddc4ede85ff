"""The ``local`` vector backend: rows in SQLite beside the tree, a per-process matrix cache.

Each collection has its own directory, ``<root>/index/<collection>/``, holding one
SQLite file of its rows.

Every ``add``/``remove`` is one SQLite transaction over the batch's rows (O(batch)),
which also bumps a change counter. Each process keeps the rows of a database in an
:class:`~akgentic.vector.engine.InMemoryStorage`; a call first compares the
counter with the one the cache was built at and reloads when another process wrote.
A crash keeps the previous committed state.

A database is opened under an exclusive ``flock`` on ``rows.sqlite3.lock`` beside it,
so one process at a time creates the file, switches it to WAL and runs the schema.
Switching a new file to WAL reads its header and then upgrades to a write lock; when
two processes do that at once, SQLite refuses one at once ("database is locked")
without waiting, as waiting would deadlock in rollback-journal mode. After the
switch, every write starts as ``BEGIN IMMEDIATE`` or an autocommit statement on a
WAL database, where the busy timeout applies.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from akgentic.plugin_api import SearchResult, VectorEntry, VectorQuery, is_shared, row_object_id

if TYPE_CHECKING:
    from akgentic.plugin_api import BackendContext, VectorStoreParam

__all__ = ["LocalBackend", "make_local_backend", "register_tree"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS collections (name TEXT PRIMARY KEY, dimension INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rows (
    collection TEXT NOT NULL, object_id TEXT NOT NULL, ref_type TEXT, ref_id TEXT, text TEXT,
    scope TEXT, path TEXT, ordinal INTEGER, team_id TEXT, tenant TEXT, vector BLOB,
    PRIMARY KEY (collection, object_id));
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('version', 0);
"""


class _Database:
    """One SQLite file and this process's cache of its rows."""

    def __init__(self, path: Path) -> None:
        from akgentic.plugin_api import InMemoryStorage

        path.parent.mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        side = os.open(
            f"{path}{SETUP_LOCK_SUFFIX}",
            os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
            0o600,
        )
        try:
            fcntl.flock(side, fcntl.LOCK_EX)  # released by the close below
            self.conn = sqlite3.connect(str(path), timeout=60.0, check_same_thread=False)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            with self.conn:
                self.conn.executescript(_SCHEMA)
        finally:
            os.close(side)
        self.storage = InMemoryStorage()
        self.version = -1

    def current(self) -> int:
        row = self.conn.execute("SELECT v FROM meta WHERE k='version'").fetchone()
        return int(row[0])

    def sync(self) -> None:
        """Reload the cache when the database changed since it was built."""
        version = self.current()
        if version != self.version:
            self._reload()
            self.version = version

    def _reload(self) -> None:
        import numpy as np

        from akgentic.plugin_api import Collection

        storage = self.storage
        storage.collections.clear()
        for name, dimension in self.conn.execute("SELECT name, dimension FROM collections"):
            target = Collection(int(dimension))
            rows: list[tuple[str, str, str, str | None, str | None, int | None, str, str | None]]
            rows = []
            blobs: list[bytes] = []
            for r in self.conn.execute(
                "SELECT ref_type, ref_id, text, scope, path, ordinal, team_id, tenant,"
                " vector FROM rows WHERE collection=? ORDER BY rowid",
                (name,),
            ):
                rows.append((r[0], r[1], r[2], r[3], r[4], r[5], r[6] or "", r[7]))
                blobs.append(r[8])
            if rows:
                unit = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(
                    len(rows), int(dimension)
                )
                # The engine upserts one team and tenant at a time: runs of rows, in order.
                start = 0
                for end in range(1, len(rows) + 1):
                    if end == len(rows) or rows[end][6:] != rows[start][6:]:
                        code = storage.teams.code(rows[start][6])
                        target.upsert(rows[start:end], unit[start:end].copy(), code, storage.scopes)
                        start = end
            storage.collections[name] = target

    def commit(self, statements: list[tuple[str, list[tuple[Any, ...]]]]) -> None:
        """Run the statements and bump the counter in one transaction."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            for sql, params in statements:
                self.conn.executemany(sql, params)
            self.conn.execute("UPDATE meta SET v = v + 1 WHERE k='version'")
            version = self.current()
        # Our own write keeps the cache valid only if nobody wrote in between.
        self.version = version if version == self.version + 1 else -1


_databases: dict[str, _Database] = {}
_databases_lock = threading.Lock()

#: The file of a collection's rows inside ``<root>/index/<collection>/``.
ROWS_FILE = "rows.sqlite3"
#: Beside the rows file: the lock one process holds while it opens and sets up the file.
SETUP_LOCK_SUFFIX = ".lock"


def _collection_dir(root: str, collection: str) -> Path:
    """``<root>/index/<collection>``; a name that is not one path segment is refused."""
    if not collection or collection in (".", "..") or "/" in collection or "\\" in collection:
        raise ValueError(f"collection name {collection!r} is not a single path segment")
    return Path(root) / "index" / collection


def _database(root: str, collection: str, *, create: bool) -> _Database | None:
    """The process-wide handle of one collection's database (None: absent, not created)."""
    path = _collection_dir(root, collection) / ROWS_FILE
    key = str(path)
    with _databases_lock:
        db = _databases.get(key)
        if db is None:
            if not create and not path.is_file():
                return None
            db = _databases[key] = _Database(path)
        return db


_tree_roots: dict[str, str] = {}


def register_tree(scope: str, root: str) -> None:
    """Tell this process's ``local`` backends that rows of ``scope`` live under ``root``.

    A team's one ``#VectorStore`` serves every tree of the team through a single
    route per collection; the rows carry their scope, so a backend built for one
    tree's root files another tree's rows (and answers its searches and removals)
    under that tree's own ``<root>/index/``.
    """
    with _databases_lock:
        _tree_roots[scope] = root


class LocalBackend:
    """A team's (and tenant's) view over the collections under ``<root>/index/``.

    Each collection is its own SQLite file, so a tree's collections never contend for
    one write lock and removing a collection's directory removes just its rows.
    """

    def __init__(self, root: str, team_id: str | None = None, tenant: str | None = None) -> None:
        self.root = root
        self.team_id = team_id or None
        self.tenant = tenant
        self._views: dict[str, tuple[_Database, Any]] = {}
        self._siblings: dict[str, LocalBackend] = {}

    def _at(self, scope: str | None) -> LocalBackend:
        """The backend of the tree ``scope`` belongs to (this one unless registered elsewhere)."""
        if scope is None:
            return self
        root = _tree_roots.get(scope)
        if root is None or root == self.root:
            return self
        sibling = self._siblings.get(root)
        if sibling is None:
            sibling = self._siblings[root] = LocalBackend(root, self.team_id, self.tenant)
        return sibling

    def _adopt(self, collection: str, origin: LocalBackend) -> None:
        """Create ``collection`` here at the width it has on ``origin`` (which routed to us)."""
        if collection in self._views:
            return
        db, _ = origin._need(collection)
        with db.lock:
            db.sync()
            existing = db.storage.collections.get(collection)
        if existing is None:
            raise ValueError(f"collection {collection!r} does not exist")
        from akgentic.plugin_api import VectorStoreParam

        self.create_collection(collection, VectorStoreParam(dimension=existing.dimension))

    def _open(self, collection: str, *, create: bool = False) -> tuple[_Database, Any] | None:
        from akgentic.plugin_api import InMemoryBackend

        opened = self._views.get(collection)
        if opened is None:
            db = _database(self.root, collection, create=create)
            if db is None:
                return None
            view = InMemoryBackend(db.storage, team_id=self.team_id, tenant=self.tenant)
            opened = self._views[collection] = (db, view)
        return opened

    def _need(self, collection: str) -> tuple[_Database, Any]:
        opened = self._open(collection)
        if opened is None:
            raise ValueError(f"collection {collection!r} does not exist")
        return opened

    def create_collection(self, name: str, config: VectorStoreParam) -> None:
        """Create ``name`` if absent; another width raises ValueError."""
        opened = self._open(name, create=True)
        assert opened is not None
        db, view = opened
        with db.lock:
            db.sync()
            existing = db.storage.collections.get(name)
            if existing is not None and existing.dimension != config.dimension:
                raise ValueError(
                    f"collection {name!r} exists with dimension {existing.dimension}, "
                    f"not {config.dimension}"
                )
            if existing is None:
                db.commit(
                    [
                        (
                            "INSERT OR IGNORE INTO collections VALUES (?, ?)",
                            [(name, config.dimension)],
                        )
                    ]
                )
                db.version = -1
                db.sync()
            view.create_collection(name, config)

    def add(self, collection: str, entries: list[VectorEntry]) -> None:
        """Upsert the batch in one transaction (per tree, when the batch spans trees)."""
        from akgentic.plugin_api import as_matrix

        groups: dict[int, tuple[LocalBackend, list[VectorEntry]]] = {}
        for entry in entries:
            target = self._at(entry.scope)
            groups.setdefault(id(target), (target, []))[1].append(entry)
        if len(groups) > 1 or (groups and self not in (g[0] for g in groups.values())):
            for target, part in groups.values():
                target._adopt(collection, self)
                target.add(collection, part)
            return
        db, view = self._need(collection)
        with db.lock:
            db.sync()
            if not entries:
                view.add(collection, entries)
                return
            unit = view.add_matrix(collection, entries, as_matrix([e.vector for e in entries]))
            team = "" if is_shared(collection) else (self.team_id or "")
            params = []
            for entry, vector in zip(entries, unit, strict=True):
                oid = self._oid(collection, entry.ref_id)
                params.append(
                    (collection, oid, entry.ref_type, entry.ref_id, entry.text,
                     entry.scope, entry.path, entry.ordinal, team, self.tenant, vector.tobytes())
                )  # fmt: skip
            try:
                db.commit([("INSERT OR REPLACE INTO rows VALUES (?,?,?,?,?,?,?,?,?,?,?)", params)])
            except Exception:
                db.version = -1
                raise

    def _oid(self, collection: str, ref_id: str) -> str:
        return row_object_id(collection, self.team_id, self.tenant, ref_id)

    def remove(
        self,
        collection: str,
        ref_ids: list[str],
        scope: str | None = None,
        path_prefix: str | None = None,
    ) -> None:
        """Delete the listed ids matching the predicates, in one transaction."""
        owner = self._at(scope)
        if owner is not self:
            owner._adopt(collection, self)
            owner.remove(collection, ref_ids, scope=scope, path_prefix=path_prefix)
            return
        db, view = self._need(collection)
        with db.lock:
            db.sync()
            target = db.storage.collections.get(collection)
            wanted = set(ref_ids)
            before = [] if target is None else [r for r in target.rows if r[1] in wanted]
            view.remove(collection, ref_ids, scope=scope, path_prefix=path_prefix)
            if target is None:
                return
            gone = [
                (collection, row_object_id(collection, r[6] or None, r[7], r[1]))
                for r in before
                if r[1] not in target.slots.get((r[6], r[7]), {})
            ]
            if gone:
                try:
                    db.commit([("DELETE FROM rows WHERE collection=? AND object_id=?", gone)])
                except Exception:
                    db.version = -1
                    raise

    def search(
        self,
        collection: str,
        query_vector: list[float],
        top_k: int,
        scope: str | None = None,
        path_prefix: str | None = None,
        query: VectorQuery | None = None,
    ) -> SearchResult:
        """Cosine top-``top_k`` over the cached rows."""
        owner = self._at(scope)
        if owner is not self:
            owner._adopt(collection, self)
            return owner.search(
                collection, query_vector, top_k, scope=scope, path_prefix=path_prefix, query=query
            )
        db, view = self._need(collection)
        with db.lock:
            db.sync()
            result: SearchResult = view.search(
                collection, query_vector, top_k, scope=scope, path_prefix=path_prefix, query=query
            )
            return result

    def count(self, collection: str) -> int:
        """Rows visible to this view."""
        db, view = self._need(collection)
        with db.lock:
            db.sync()
            return int(view.count(collection))

    def list_collections(self) -> list[str]:
        """Every collection with a directory under ``<root>/index/``."""
        base = Path(self.root) / "index"
        if not base.is_dir():
            return []
        return sorted(d.name for d in base.iterdir() if (d / ROWS_FILE).is_file())

    def delete_by_team(self, collection: str, team_id: str) -> int:
        """Admin: delete ``team_id``'s rows of a team-scoped collection."""
        db, view = self._need(collection)
        with db.lock:
            db.sync()
            removed = int(view.delete_by_team(collection, team_id))
            if removed:
                db.commit(
                    [("DELETE FROM rows WHERE collection=? AND team_id=?", [(collection, team_id)])]
                )
            return removed

    def stored_ids(self, collection: str) -> list[str]:
        """Row ids of ``collection`` (for the contract kit)."""
        opened = self._open(collection)
        if opened is None:
            return []
        db, view = opened
        with db.lock:
            db.sync()
            return list(view.stored_ids(collection))


def make_local_backend(context: BackendContext) -> LocalBackend:
    """The factory of the ``local`` spec; a missing ``root`` is a ValueError."""
    root = context.root
    if not root:
        raise ValueError(
            "the 'local' vector backend needs a root directory (the workspace card sets it "
            "to the tree's <leaf>.index sibling); other cards cannot use it"
        )
    tenant = context.config.tenant if context.config is not None else None
    return LocalBackend(root, team_id=context.team_id, tenant=tenant)
