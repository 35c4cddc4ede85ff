"""File operations on a tree that never follow a link: every component opened with
``O_NOFOLLOW`` relative to its parent's descriptor.
Walking a whole tree is :func:`akgentic_workspace.treewalk.descend`.

A canonical key (see :mod:`akgentic_workspace.paths`) names a path whose links were
already resolved inside the tree; if a component has turned into a link since, opening
it fails and the operation is refused. Code running in the sandbox can plant links;
the host side never follows them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

from akgentic.plugin_api import RetriableError
from akgentic_workspace.exchange import exchange_then_unlink, replace_flushes_for_nothing
from akgentic_workspace.paths import ESCAPE_MESSAGE
from akgentic_workspace.treewalk import TreeMoved, descend

__all__ = [
    "MAX_FILE_BYTES",
    "STAGING_PATTERN",
    "Entry",
    "Staged",
    "TooLarge",
    "TreeFiles",
]

#: Files larger than this are neither read nor written whole by the tools.
MAX_FILE_BYTES = 16 * 1024 * 1024
#: ``.<name>.<32 hex>.tmp``: a write being staged in the target's directory.
STAGING_PATTERN = re.compile(r"^\..+\.[0-9a-f]{32}\.tmp$")
STAGING_MAX_AGE_S = 30.0
#: The bytes a staging name adds to the target's: ``.``, ``.<32 hex>.tmp``.
_STAGING_AFFIX_BYTES = len(f"..{'0' * 32}.tmp")

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _refuse_link() -> RetriableError:
    return RetriableError(ESCAPE_MESSAGE)


@dataclass(frozen=True)
class Entry:
    """What is at a key, seen without following a link."""

    kind: str  # "file", "dir", "link", "other", "missing"
    size: int = 0
    mode: int = 0
    mtime: float = 0.0


@dataclass
class Staged:
    """A staged replacement, ready to be published over ``key``."""

    key: str
    dir_fd: int
    name: str
    staging: str
    #: A regular file was at the name when staging began.
    replaces: bool = False


class TreeFiles:
    """Link-safe file operations under one tree (a real, resolved directory)."""

    def __init__(self, tree: Path) -> None:
        self.tree = Path(os.path.realpath(tree))
        self._tree_str = str(self.tree)
        # Decided once per tree: see akgentic_workspace.exchange.
        self._exchange = replace_flushes_for_nothing(self.tree)

    # ------------------------------------------------------------ walking

    def open_directory(self, parts: list[str], *, create: bool = False) -> int:
        """A descriptor on the directory ``parts`` (created when asked); the caller closes it."""
        fd = os.open(self._tree_str, _DIR_FLAGS)
        try:
            for part in parts:
                try:
                    nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=fd)
                    nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as error:
                    if error.errno == errno.ELOOP:
                        raise _refuse_link() from None
                    if error.errno == errno.ENOTDIR:
                        if _is_link(fd, part):
                            raise _refuse_link() from None
                        raise NotADirectoryError(errno.ENOTDIR, "Not a directory", part) from None
                    raise
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextlib.contextmanager
    def directory(self, parts: list[str], *, create: bool = False) -> Iterator[int]:
        """:meth:`open_directory` as a context manager."""
        fd = self.open_directory(parts, create=create)
        try:
            yield fd
        finally:
            os.close(fd)

    @staticmethod
    def split(key: str) -> tuple[list[str], str]:
        """``("a/b/c")`` -> ``(["a", "b"], "c")``."""
        parts = key.split("/") if key else []
        return parts[:-1], (parts[-1] if parts else "")

    def entry(self, key: str) -> Entry:
        """What is at ``key``; a missing parent counts as missing."""
        if not key:
            return Entry("dir")
        parents, name = self.split(key)
        try:
            with self.directory(parents) as fd:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return Entry("missing")
        return Entry(_kind(info.st_mode), info.st_size, info.st_mode, info.st_mtime)

    # ------------------------------------------------------------ reading

    def read_bytes(self, key: str, limit: int = MAX_FILE_BYTES) -> bytes:
        """The bytes of the regular file at ``key``.

        Raises:
            FileNotFoundError, IsADirectoryError: nothing, or a directory, is there.
            RetriableError: a link, a FIFO/socket/device, or a file over ``limit``.
        """
        parents, name = self.split(key)
        with self.directory(parents) as dir_fd:
            return self.read_bytes_at(dir_fd, name, key, limit)

    def read_bytes_at(self, dir_fd: int, name: str, key: str, limit: int = MAX_FILE_BYTES) -> bytes:
        """:meth:`read_bytes` of ``name`` in an already opened directory of the tree."""
        fd, info = _open_regular(dir_fd, name, key)
        try:
            if info.st_size > limit:
                raise TooLarge(info.st_size)
            return _read_up_to(fd, None)
        finally:
            os.close(fd)

    def read_head(self, key: str, limit: int) -> tuple[bytes, int]:
        """At most ``limit`` bytes of the regular file at ``key``, and its size.

        The file is opened once, every segment with ``O_NOFOLLOW`` and the last one
        non-blocking, and checked on the opened descriptor: what is read is what was
        checked. Raises as :meth:`read_bytes` does, never :class:`TooLarge`.
        """
        parents, name = self.split(key)
        with self.directory(parents) as dir_fd:
            fd, info = _open_regular(dir_fd, name, key)
        try:
            return _read_up_to(fd, limit), info.st_size
        finally:
            os.close(fd)

    # ------------------------------------------------------------ writing

    def stage(self, key: str, data: bytes, own: int | None = None) -> Staged:
        """Write ``data`` to a fresh staging file beside ``key`` (parents created).

        ``own``, when given, is the target's directory already opened by this call's
        walk; it passes to the returned :class:`Staged` (closed on every error too).
        The caller publishes (:meth:`publish`) or discards (:meth:`discard`) it.
        """
        parents, name = self.split(key)
        if own is None:
            own = self.open_directory(parents, create=True)
        try:
            info = os.stat(name, dir_fd=own, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None:
            if stat.S_ISDIR(info.st_mode):
                os.close(own)
                raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
            if stat.S_ISLNK(info.st_mode):
                os.close(own)
                raise _refuse_link()
            if not stat.S_ISREG(info.st_mode):
                os.close(own)
                raise RetriableError(f"{key} is not a regular file")
        budget = 255 - _STAGING_AFFIX_BYTES
        stem = name.encode("utf-8")[:budget].decode("utf-8", "ignore")
        staging = f".{stem}.{secrets.token_hex(16)}.tmp"
        try:
            fd = os.open(
                staging,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o666,
                dir_fd=own,
            )
        except OSError:
            os.close(own)
            raise
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if info is not None:
                os.fchmod(fd, stat.S_IMODE(info.st_mode))
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(staging, dir_fd=own)
            os.close(own)
            raise
        os.close(fd)
        return Staged(key=key, dir_fd=own, name=name, staging=staging, replaces=info is not None)

    def publish(self, staged: Staged) -> None:
        """Replace the target with the staged file (atomic within the directory)."""
        try:
            if (
                staged.replaces
                and self._exchange
                and exchange_then_unlink(staged.dir_fd, staged.staging, staged.name)
            ):
                return
            os.replace(
                staged.staging, staged.name, src_dir_fd=staged.dir_fd, dst_dir_fd=staged.dir_fd
            )
        except FileNotFoundError:
            raise RetriableError(
                f"a staged file vanished while {staged.key} was being written (something "
                "removed it); nothing was changed — retry exactly the same change"
            ) from None
        except OSError as error:
            self.discard(staged)
            raise RetriableError(
                f"The change was not published: the operating system denied replacing "
                f"{staged.key} ({error.strerror}). The path itself is fine; the file is not "
                "replaceable here."
            ) from None
        finally:
            with contextlib.suppress(OSError):
                os.close(staged.dir_fd)

    def discard(self, staged: Staged) -> None:
        """Remove a staging file that will not be published."""
        with contextlib.suppress(OSError):
            os.unlink(staged.staging, dir_fd=staged.dir_fd)
        with contextlib.suppress(OSError):
            os.close(staged.dir_fd)

    def unlink(self, key: str) -> None:
        """Remove the file or link at ``key`` (a link itself, never its target)."""
        parents, name = self.split(key)
        with self.directory(parents) as fd:
            os.unlink(name, dir_fd=fd)

    def make_dirs(self, key: str) -> None:
        """Create ``key`` and its parents (idempotent); a file in the way raises."""
        with self.directory(key.split("/") if key else [], create=True):
            pass

    def remove_tree(self, key: str) -> int:
        """Remove the directory ``key`` and everything under it; returns files removed.

        Links under it are unlinked, never followed.
        """
        parents, name = self.split(key)
        count = 0
        with self.directory(parents) as fd:
            sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
            try:
                for visit in descend(sub, key, leave=True):
                    if visit.leaving:
                        for entry in visit.dirs:
                            os.rmdir(entry.name, dir_fd=visit.fd)
                    elif visit.opened:
                        for entry in visit.others:
                            os.unlink(entry.name, dir_fd=visit.fd)
                            count += 1
            finally:
                os.close(sub)
            os.rmdir(name, dir_fd=fd)
        return count

    def remove_empty_dir(self, key: str) -> None:
        """Remove an empty directory (OSError ENOTEMPTY otherwise)."""
        parents, name = self.split(key)
        with self.directory(parents) as fd:
            os.rmdir(name, dir_fd=fd)

    # ------------------------------------------------------------ walking the tree

    def walk(self, top: str = "") -> Generator[tuple[str, list[os.DirEntry[str]]], None, None]:
        """``(dir key, entries)`` for ``top`` and every directory under it, links unfollowed.

        The entries are valid for stat only until the walk resumes.
        """
        try:
            fd = self.open_directory(top.split("/") if top else [])
        except (OSError, RetriableError):
            return
        try:
            for visit in descend(fd, top):
                if visit.opened:
                    yield visit.key, sorted([*visit.dirs, *visit.others], key=lambda e: e.name)
        finally:
            os.close(fd)

    def sweep_staging(self, now: float | None = None) -> int:
        """Remove staging files older than 30 s anywhere in the tree; returns how many."""
        limit = (time.time() if now is None else now) - STAGING_MAX_AGE_S
        removed = 0
        try:
            for key, entries in self.walk():
                for entry in entries:
                    if not STAGING_PATTERN.match(entry.name):
                        continue
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISREG(info.st_mode) and info.st_mtime < limit:
                        with contextlib.suppress(OSError):
                            self.unlink(f"{key}/{entry.name}" if key else entry.name)
                            removed += 1
        except TreeMoved:
            pass  # a tidy-up: what the moved part holds is swept next time
        return removed


class TooLarge(RetriableError):  # noqa: N818 - a refusal the tools translate
    """A file over the size limit of a read (its size is ``size``)."""

    def __init__(self, size: int) -> None:
        self.size = size
        super().__init__(f"file of {size} bytes")


TooLarge = TooLarge


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_regular(dir_fd: int, name: str, key: str) -> tuple[int, os.stat_result]:
    """``name`` opened without following a link or blocking; refused unless a regular file."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _refuse_link() from None
        raise
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        if not stat.S_ISREG(info.st_mode):
            raise RetriableError(f"{key} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def _read_up_to(fd: int, limit: int | None) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left is None or left > 0:
        chunk = os.read(fd, 1 << 20 if left is None else min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        if left is not None:
            left -= len(chunk)
    return b"".join(chunks)
