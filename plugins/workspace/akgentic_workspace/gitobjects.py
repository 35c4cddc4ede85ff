"""Git's on-disk formats, written in-process: loose objects, trees, commits and the ref.

The journal commits without spawning git: a loose object is ``<kind> <size>\\0<body>``
compressed with zlib and named by its SHA-1 under ``objects/xx/yyyy...``; the branch
moves with git's own protocol (create ``<ref>.lock`` exclusively, check the old value,
rename over the ref), so a ``git`` run by a person at the same time cannot interleave
with us. What is written is ordinary git: ``git log`` and ``git fsck`` read it as any
repository.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "GitObjects",
    "Ident",
    "commit_body",
    "read_ref",
    "tree_body",
    "update_ref",
]

#: git's own default for loose objects (``core.looseCompression``): speed over size.
_LEVEL = 1
_REF_LOCK_WAIT_S = 1.0
_CHUNK = 1 << 20
_STALE_REF_LOCK_S = 30.0


class GitObjects:
    """The loose-object store of one repository."""

    def __init__(self, git_dir: Path) -> None:
        self.root = git_dir / "objects"
        self._root = str(self.root)

    def make_fan_out(self) -> None:
        """Create the 256 ``objects/xx`` directories up front (once per process and tree).

        A commit then costs no ``mkdir`` on the hot path; git reads the empty ones as it
        reads its own.
        """
        try:
            present = set(os.listdir(self._root))
        except OSError:
            return
        for index in range(256):
            fan = f"{index:02x}"
            if fan not in present:
                with contextlib.suppress(OSError):
                    os.mkdir(f"{self._root}/{fan}")

    def path(self, sha: str) -> str:
        """Where the loose object ``sha`` lives."""
        return f"{self._root}/{sha[:2]}/{sha[2:]}"

    def has(self, sha: str) -> bool:
        """Whether ``sha`` is stored as a loose object."""
        return os.path.exists(self.path(sha))

    def write(self, kind: str, body: bytes, *, store: bool = True) -> str:
        """Store an object (a no-op when present); returns its hex SHA-1.

        ``store=False`` only names it.
        """
        header = f"{kind} {len(body)}\0".encode()
        digest = hashlib.sha1(header)
        digest.update(body)
        sha = digest.hexdigest()
        if store and not self.has(sha):
            packer = zlib.compressobj(_LEVEL)
            self._place(sha, [packer.compress(header), packer.compress(body), packer.flush()])
        return sha

    def write_file(self, fd: int, size: int, *, store: bool = True) -> str | None:
        """Store the ``size`` bytes of an open file as a blob without holding them whole.

        None when the file did not have ``size`` bytes (it changed while being read).
        """
        header = f"blob {size}\0".encode()
        digest = hashlib.sha1(header)
        seen = 0
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
            seen += len(chunk)
        if seen != size:
            return None
        sha = digest.hexdigest()
        if store and not self.has(sha):
            os.lseek(fd, 0, os.SEEK_SET)
            packer = zlib.compressobj(_LEVEL)
            parts = [packer.compress(header)]
            parts.extend(packer.compress(chunk) for chunk in iter(lambda: os.read(fd, _CHUNK), b""))
            parts.append(packer.flush())
            self._place(sha, parts)
        return sha

    def _place(self, sha: str, parts: list[bytes]) -> None:
        fan = f"{self._root}/{sha[:2]}"
        temp = f"{fan}/tmp_obj_{secrets.token_hex(8)}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        try:
            fd = os.open(temp, flags, 0o444)
        except FileNotFoundError:
            os.makedirs(fan, exist_ok=True)
            fd = os.open(temp, flags, 0o444)
        try:
            for part in parts:
                view = memoryview(part)
                while view:
                    view = view[os.write(fd, view) :]
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        os.close(fd)
        os.replace(temp, self.path(sha))  # same bytes whoever wins a race

    def read(self, sha: str) -> tuple[str, bytes] | None:
        """``(kind, body)`` of a loose object; None when it is not loose (packed, absent)."""
        try:
            with open(self.path(sha), "rb") as handle:
                raw = zlib.decompress(handle.read())
        except (FileNotFoundError, NotADirectoryError):
            return None
        header, _, body = raw.partition(b"\0")
        kind, _, _ = header.partition(b" ")
        return kind.decode("ascii"), body


@dataclass(frozen=True)
class Ident:
    """A commit identity: ``name <email>``, already free of ``<``, ``>`` and newlines."""

    name: str
    email: str


def _ident_line(role: str, who: Ident, when: float) -> str:
    offset = time.localtime(when).tm_gmtoff
    sign = "+" if offset >= 0 else "-"
    hours, minutes = divmod(abs(offset) // 60, 60)
    return f"{role} {who.name} <{who.email}> {int(when)} {sign}{hours:02d}{minutes:02d}"


def commit_body(tree: str, parent: str | None, who: Ident, message: str) -> bytes:
    """A commit object's body; author and committer are both ``who``, now."""
    now = time.time()
    lines = [f"tree {tree}"]
    if parent:
        lines.append(f"parent {parent}")
    lines.append(_ident_line("author", who, now))
    lines.append(_ident_line("committer", who, now))
    text = "\n".join(lines) + "\n\n" + message.rstrip("\n") + "\n"
    return text.encode("utf-8")


def tree_body(entries: list[tuple[bytes, str, str]]) -> bytes:
    """A tree object's body from ``(name, mode, hex sha)``, in git's order.

    git sorts a directory's entries by name as if every subtree's name ended in ``/``.
    """
    ordered = sorted(entries, key=lambda e: e[0] + b"/" if e[1] == "40000" else e[0])
    return b"".join(
        mode.encode("ascii") + b" " + name + b"\0" + bytes.fromhex(sha)
        for name, mode, sha in ordered
    )


def read_ref(git_dir: Path, ref: str) -> str | None:
    """The commit a branch points at: its loose file, else ``packed-refs``; None if unborn."""
    try:
        value = (git_dir / ref).read_text(encoding="ascii").strip()
    except (FileNotFoundError, NotADirectoryError):
        value = ""
    if value:
        return value
    try:
        packed = (git_dir / "packed-refs").read_text(encoding="ascii")
    except FileNotFoundError:
        return None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and len(sha) == 40:
            return sha
    return None


def update_ref(git_dir: Path, ref: str, new: str, old: str | None) -> bool:
    """Move ``ref`` from ``old`` to ``new`` under ``<ref>.lock``; False when it moved meanwhile.

    The lock file is git's: while it exists, neither git nor we touch the ref. One left
    by a crashed writer is taken over once it is older than 30 s.
    """
    path = git_dir / ref
    lock = path.with_name(path.name + ".lock")
    deadline = time.monotonic() + _REF_LOCK_WAIT_S
    while True:
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            if _stale(lock):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(lock)
                continue
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
    try:
        current = read_ref(git_dir, ref)
        if current == old:
            os.write(fd, f"{new}\n".encode("ascii"))
    finally:
        os.close(fd)
    if current != old:
        os.unlink(lock)
        return False
    try:
        os.replace(lock, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        raise
    return True


def _stale(lock: Path) -> bool:
    try:
        return time.time() - lock.stat().st_mtime > _STALE_REF_LOCK_S
    except FileNotFoundError:
        return False
