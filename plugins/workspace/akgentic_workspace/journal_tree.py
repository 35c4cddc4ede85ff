"""The journal's picture of a tree: committed snapshots and reading the work tree into one.

A :class:`Node` is a directory of a commit (names to subtrees or ``(mode, blob sha)``);
snapshots share unchanged nodes, so a new commit rewrites only the directories on the
changed paths. :class:`WorkTree` reads the tree the way ``git add -A`` would (ignore
rules, links recorded as links, executable bit) but walks it with ``O_NOFOLLOW`` from
directory descriptors, so a link planted by sandboxed code is recorded, never followed.
Nothing here recurses: a tree thousands of directories deep is read, stored and
compared with explicit stacks (:func:`akgentic_workspace.treewalk.descend` on disk).
A stat cache keeps unchanged files from being read again; a file modified within the
timestamp granularity of its last hashing is hashed again ("racy" in git's words).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from akgentic_workspace.files import STAGING_PATTERN
from akgentic_workspace.gitignore import IgnoreFile, is_ignored, parse_ignore
from akgentic_workspace.gitobjects import GitObjects, tree_body
from akgentic_workspace.treewalk import Visit, descend

__all__ = ["Blob", "Node", "NotLoose", "WorkTree", "keys_under", "load_tree", "write_tree"]

Blob = tuple[str, str]  # (git mode, hex sha)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: Files modified this close to their hashing are hashed again next time.
_RACY_NS = 20_000_000
_IN_MEMORY = 32 << 20


class Node:
    """A directory of a snapshot; ``sha`` is its tree object once known."""

    __slots__ = ("entries", "sha")

    def __init__(self, entries: dict[str, Node | Blob] | None = None, sha: str | None = None):
        self.entries: dict[str, Node | Blob] = entries if entries is not None else {}
        self.sha = sha


class NotLoose(Exception):  # noqa: N818 - a signal to the loader, not an error
    """An object of the snapshot is not a loose object (packed by a ``git gc``)."""


def load_tree(objects: GitObjects, sha: str, previous: Node | None) -> Node:
    """The snapshot of tree ``sha``, reusing ``previous``'s nodes where they are the same."""
    if previous is not None and previous.sha == sha:
        return previous
    root = Node(sha=sha)
    # Nodes are filled in place, so the tree is read top down with no recursion.
    work: list[tuple[Node, Node | None]] = [(root, previous)]
    while work:
        node, prior = work.pop()
        assert node.sha is not None
        found = objects.read(node.sha)
        if found is None or found[0] != "tree":
            raise NotLoose(node.sha)
        body, pos = found[1], 0
        old = prior.entries if prior is not None else {}
        while pos < len(body):
            space = body.index(b" ", pos)
            nul = body.index(b"\0", space)
            mode = body[pos:space].decode("ascii")
            name = os.fsdecode(body[space + 1 : nul])
            child = body[nul + 1 : nul + 21].hex()
            pos = nul + 21
            if mode != "40000":
                node.entries[name] = (mode, child)
                continue
            same = old.get(name)
            reuse = same if isinstance(same, Node) else None
            if reuse is not None and reuse.sha == child:
                node.entries[name] = reuse
            else:
                sub = node.entries[name] = Node(sha=child)
                work.append((sub, reuse))
    return root


def tree_from_listing(listing: bytes) -> Node:
    """A snapshot from ``git ls-tree -r -z`` output (the fallback for packed objects)."""
    root = Node()
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, _, rest = meta.partition(b" ")
        sha = rest.partition(b" ")[2].decode("ascii")
        parts = os.fsdecode(path).split("/")
        node = root
        for part in parts[:-1]:
            nxt = node.entries.get(part)
            if not isinstance(nxt, Node):
                nxt = node.entries[part] = Node()
            node = nxt
        node.entries[parts[-1]] = (mode.decode("ascii"), sha)
    return root


def write_tree(objects: GitObjects, node: Node) -> str:
    """Store every tree object of ``node`` not yet stored; returns the root tree's sha."""
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        current, children_done = stack.pop()
        if current.sha is not None:
            continue
        if not children_done:
            stack.append((current, True))
            stack.extend(
                (value, False)
                for value in current.entries.values()
                if isinstance(value, Node) and value.sha is None
            )
            continue
        rows = []
        for name, value in current.entries.items():
            if isinstance(value, Node):
                assert value.sha is not None
                rows.append((os.fsencode(name), "40000", value.sha))
            else:
                rows.append((os.fsencode(name), value[0], value[1]))
        current.sha = objects.write("tree", tree_body(rows))
    assert node.sha is not None
    return node.sha


def keys_under(node: Node, prefix: str) -> Iterator[str]:
    """Every file key of ``node``, prefixed by its directory key."""
    stack = [(iter(node.entries.items()), prefix)]
    while stack:
        entries, base = stack[-1]
        step = next(entries, None)
        if step is None:
            stack.pop()
            continue
        name, value = step
        key = f"{base}/{name}" if base else name
        if isinstance(value, Node):
            stack.append((iter(value.entries.items()), key))
        else:
            yield key


def _report(key: str, old: Node | Blob | None, new: Node | Blob | None, out: list[str]) -> None:
    """Record what changed at ``key`` that a recursion into a new directory did not."""
    if isinstance(old, Node) and isinstance(new, Node):
        return
    if isinstance(old, Node):
        out.extend(keys_under(old, key))
    elif old is not None and old != new:
        out.append(key)
    if isinstance(new, tuple) and new != old and key not in out[-1:]:
        out.append(key)


def _stamp(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode)


def _file_mode(mode: int) -> str:
    return "100755" if mode & stat.S_IXUSR else "100644"


def _skipped(name: str) -> bool:
    return name.casefold() == ".git" or STAGING_PATTERN.match(name) is not None


class _Dir:
    """A directory being scanned: what it was, its ignore rules, what it holds now."""

    __slots__ = ("ignored", "ignores", "key", "mark", "name", "new", "node", "parent", "prior")

    def __init__(
        self,
        node: Node | None,
        ignores: list[IgnoreFile],
        ignored: bool,
        parent: _Dir | None,
        name: str,
        prior: Node | Blob | None,
    ) -> None:
        self.node = node
        self.ignores = ignores
        self.ignored = ignored
        self.parent = parent
        self.name = name
        #: What the parent's snapshot had at this name (a file, perhaps).
        self.prior = prior
        self.key: str = f"{parent.key}/{name}" if parent is not None and parent.key else name
        self.new: dict[str, Node | Blob] = {}
        self.mark = 0


def _settle(state: _Dir, value: Node | None, changed: list[str]) -> None:
    """Hand a finished subdirectory's snapshot to its parent."""
    assert state.parent is not None
    if value is not None:
        state.parent.new[state.name] = value
    if value is not state.prior:
        _report(state.key, state.prior, value, changed)


class WorkTree:
    """Reads one work tree into snapshots (see the module docstring)."""

    def __init__(self, tree: Path, git_dir: Path, objects: GitObjects) -> None:
        self.tree = Path(os.path.realpath(tree))
        self.git_dir = git_dir
        self._info = str(git_dir / "info")
        self.objects = objects
        self._stats: dict[str, tuple[tuple[int, ...], str]] = {}
        self._ignores: dict[str, tuple[tuple[int, ...], IgnoreFile | None]] = {}

    # ------------------------------------------------------------ ignore files

    def _ignore_in(self, dir_fd: int, base: str, name: str = ".gitignore") -> IgnoreFile | None:
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except OSError:
            self._ignores.pop(base, None)
            return None
        try:
            info = os.fstat(fd)
            stamp = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            cached = self._ignores.get(base)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            if not stat.S_ISREG(info.st_mode) or info.st_size > (1 << 20):
                parsed = None
            else:
                text = os.read(fd, info.st_size + 1).decode("utf-8", "replace")
                parsed = IgnoreFile(base, tuple(parse_ignore(text)))
        finally:
            os.close(fd)
        self._ignores[base] = (stamp, parsed)
        return parsed

    def _root_ignores(self, tree_fd: int) -> list[IgnoreFile]:
        found: list[IgnoreFile] = []
        try:
            info_fd = os.open(self._info, _DIR_FLAGS)
        except OSError:
            info_fd = -1
        if info_fd >= 0:
            try:
                exclude = self._ignore_in(info_fd, "\0exclude", "exclude")
            finally:
                os.close(info_fd)
            if exclude is not None:
                found.append(IgnoreFile("", exclude.rules))
        own = self._ignore_in(tree_fd, "")
        if own is not None:
            found.append(own)
        return found

    # ------------------------------------------------------------ blobs

    def _blob(
        self, dir_fd: int, name: str, key: str, info: os.stat_result, prior: object, store: bool
    ) -> Blob | None:
        is_link = stat.S_ISLNK(info.st_mode)
        mode = "120000" if is_link else _file_mode(info.st_mode)
        stamp = _stamp(info)
        cached = self._stats.get(key)
        if cached is not None and cached[0] == stamp:
            blob = (mode, cached[1])
            if blob == prior or not store or self.objects.has(cached[1]):
                return blob
        hashed_at = time.time_ns()
        if is_link:
            try:
                target = os.readlink(name, dir_fd=dir_fd)
            except OSError:
                return None
            sha = self.objects.write("blob", os.fsencode(target), store=store)
        else:
            try:
                fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
            except OSError:
                return None
            try:
                opened = os.fstat(fd)
                if not stat.S_ISREG(opened.st_mode):
                    return None
                stamp = _stamp(opened)
                if opened.st_size <= _IN_MEMORY:
                    data = _read_exactly(fd, opened.st_size)
                    maybe = None if data is None else self.objects.write("blob", data, store=store)
                else:
                    maybe = self.objects.write_file(fd, opened.st_size, store=store)
            finally:
                os.close(fd)
            if maybe is None:
                return None  # changed while read: dirty, hashed again next time
            sha = maybe
        if stamp[1] + _RACY_NS < hashed_at:
            self._stats[key] = (stamp, sha)
        else:
            self._stats.pop(key, None)
        return (mode, sha)

    # ------------------------------------------------------------ scanning

    def scan(self, head: Node, *, store: bool = True) -> tuple[Node, list[str]]:
        """The whole tree as a snapshot over ``head``, and the keys that differ."""
        changed: list[str] = []
        with self._open_tree() as fd:
            ignores = self._root_ignores(fd)
            top = _Dir(head, ignores, False, None, "", head)
            new = self._scan_from(fd, "", top, changed, store, own_ignore=False)
        return (new if new is not None else Node()), changed

    @contextlib.contextmanager
    def _open_tree(self) -> Iterator[int]:
        fd = os.open(self.tree, _DIR_FLAGS)
        try:
            yield fd
        finally:
            os.close(fd)

    def _scan_from(
        self, fd: int, key: str, top: _Dir, changed: list[str], store: bool, *, own_ignore: bool
    ) -> Node | None:
        """The snapshot of directory ``fd`` (``key``) over ``top.node``; one walk, no recursion."""
        states = {key: top}
        result: Node | None = None
        left = False
        for visit in descend(fd, key, leave=True):
            state = states.pop(visit.key) if visit.leaving or not visit.opened else None
            if state is None:
                here = states[visit.key]
                if own_ignore or visit.key != key:
                    self._own_ignores(visit.fd, visit.key, here)
                self._enter(visit, here, states, changed, store)
                continue
            value = self._leave(state, changed) if visit.opened else None
            if state.parent is None:
                result, left = value, True
            else:
                _settle(state, value, changed)
        if not left:  # the top could not be listed: everything under it is gone
            result = self._leave(top, changed, listed=False)
        return result

    def _own_ignores(self, fd: int, key: str, here: _Dir) -> None:
        if not here.ignored:
            own = self._ignore_in(fd, key)
            if own is not None:
                here.ignores = [*here.ignores, own]

    def _enter(
        self, visit: Visit, here: _Dir, states: dict[str, _Dir], changed: list[str], store: bool
    ) -> None:
        here.mark = len(changed)
        old = here.node.entries if here.node is not None else {}
        new = here.new
        stats = self._stats
        fd, key = visit.fd, visit.key
        for entry in visit.others:
            name = entry.name
            if name[0] == "." and _skipped(name):
                continue
            child = f"{key}/{name}" if key else name
            prior = old.get(name)
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            mode = info.st_mode
            if prior.__class__ is tuple and stat.S_ISREG(mode):
                # The common case, unchanged tracked file: one stat, no read.
                cached = stats.get(child)
                if (
                    cached is not None
                    and cached[1] == prior[1]
                    and cached[0] == _stamp(info)
                    and _file_mode(mode) == prior[0]
                ):
                    new[name] = prior
                    continue
            value: Node | Blob | None = None
            if (stat.S_ISREG(mode) or stat.S_ISLNK(mode)) and (
                isinstance(prior, tuple)
                or not (here.ignored or is_ignored(here.ignores, child, False))
            ):
                value = self._blob(fd, name, child, info, prior, store)
            if value is not None:
                new[name] = value
            if value is not prior:
                _report(child, prior, value, changed)
        entered = []
        for entry in visit.dirs:
            name = entry.name
            if name[0] == "." and _skipped(name):
                continue
            child = f"{key}/{name}" if key else name
            prior = old.get(name)
            prior_node = prior if isinstance(prior, Node) else None
            inside_ignored = here.ignored or is_ignored(here.ignores, child, True)
            if inside_ignored and prior_node is None:
                if prior is not None:
                    _report(child, prior, None, changed)
                continue
            states[child] = _Dir(prior_node, here.ignores, inside_ignored, here, name, prior)
            entered.append(entry)
        visit.dirs[:] = entered

    @staticmethod
    def _leave(state: _Dir, changed: list[str], *, listed: bool = True) -> Node | None:
        if not listed:
            state.mark = len(changed)
        key = state.key
        old = state.node.entries if state.node is not None else {}
        for name, prior in old.items():
            if name not in state.new:
                _report(f"{key}/{name}" if key else name, prior, None, changed)
        if len(changed) == state.mark and state.node is not None:
            return state.node
        return Node(state.new) if state.new else None

    def _scan_child(
        self,
        fd: int,
        name: str,
        key: str,
        prior: Node | Blob | None,
        ignores: list[IgnoreFile],
        ignored: bool,
        changed: list[str],
        store: bool,
    ) -> Node | None:
        prior_node = prior if isinstance(prior, Node) else None
        inside_ignored = ignored or is_ignored(ignores, key, True)
        if inside_ignored and prior_node is None:
            return None
        try:
            sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            return None  # turned into a link or vanished: nothing to follow
        try:
            top = _Dir(prior_node, ignores, inside_ignored, None, "", prior)
            top.key = key
            return self._scan_from(sub, key, top, changed, store, own_ignore=True)
        finally:
            os.close(sub)

    # ------------------------------------------------------------ chosen paths

    def apply(self, head: Node, keys: Sequence[str]) -> tuple[Node, list[str]]:
        """``head`` with exactly ``keys`` (files or directories) taken from the work tree."""
        changed: list[str] = []
        root = head
        for key in sorted(set(keys)):
            parts = [p for p in key.split("/") if p]
            if not parts:
                return self.scan(head)
            if any(_skipped(p) for p in parts):
                continue
            value = self._read_path(parts, _lookup(root, parts), changed)
            root = _replace(root, parts, value) or Node()
        return root, changed

    def _read_path(
        self, parts: list[str], prior: Node | Blob | None, changed: list[str]
    ) -> Node | Blob | None:
        key = "/".join(parts)
        with self._open_tree() as tree_fd:
            ignores = self._root_ignores(tree_fd)
            ignored = False
            fd = os.dup(tree_fd)
            try:
                for index, part in enumerate(parts[:-1]):
                    here = "/".join(parts[: index + 1])
                    ignored = ignored or is_ignored(ignores, here, True)
                    try:
                        nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                    except OSError:
                        _report(key, prior, None, changed)
                        return None
                    os.close(fd)
                    fd = nxt
                    if not ignored:
                        own = self._ignore_in(fd, here)
                        if own is not None:
                            ignores = [*ignores, own]
                name = parts[-1]
                try:
                    info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    _report(key, prior, None, changed)
                    return None
                value: Node | Blob | None
                if stat.S_ISDIR(info.st_mode):
                    value = self._scan_child(fd, name, key, prior, ignores, ignored, changed, True)
                elif stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                    if not isinstance(prior, tuple) and (
                        ignored or is_ignored(ignores, key, False)
                    ):
                        return prior  # untracked and ignored: git add would refuse it
                    value = self._blob(fd, name, key, info, prior, True)
                else:
                    value = None
                _report(key, prior, value, changed)
                return value
            finally:
                os.close(fd)


def _lookup(root: Node, parts: list[str]) -> Node | Blob | None:
    node: Node | Blob | None = root
    for part in parts:
        if not isinstance(node, Node):
            return None
        node = node.entries.get(part)
    return node


def _replace(node: Node | None, parts: list[str], value: Node | Blob | None) -> Node | None:
    """``node`` with ``value`` at ``parts`` (copy on write; None = an empty directory)."""
    chain: list[tuple[Node | None, str]] = []
    current: Node | None = node
    for name in parts[:-1]:
        chain.append((current, name))
        below = current.entries.get(name) if current is not None else None
        current = below if isinstance(below, Node) else None
    chain.append((current, parts[-1]))
    replacement: Node | Blob | None = value
    for holder, name in reversed(chain):
        existing = holder.entries.get(name) if holder is not None else None
        if replacement is existing or (isinstance(replacement, tuple) and replacement == existing):
            replacement = holder  # unchanged from here up
            continue
        entries = dict(holder.entries) if holder is not None else {}
        if replacement is None:
            entries.pop(name, None)
        else:
            entries[name] = replacement
        replacement = Node(entries) if entries else None
    assert not isinstance(replacement, tuple)
    return replacement


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, seen = [], 0
    while chunk := os.read(fd, max(size - seen, 0) + 1):
        chunks.append(chunk)
        seen += len(chunk)
        if seen > size:
            return None
    return b"".join(chunks) if seen == size else None


ListTree = Callable[[str], bytes | None]
