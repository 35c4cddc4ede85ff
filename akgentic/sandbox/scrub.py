"""What a run may not leave in the tree on the host: setuid/setgid bits, device nodes.

A backend maps the sandbox user to an unprivileged identity and mounts the tree
``nosuid,nodev`` where it can, yet a file made inside is a file on the host: a
``chmod 6755`` copy of a shell owned by the host user akgentic runs as (root, in a
container or CI) would be a setuid-root shell for anyone who can reach the tree.
:func:`scrub_tree` runs after every run, once nothing of the sandbox is left to race
it, and clears both; every backend calls it. FIFOs, sockets and links are left alone.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ScrubReport", "scrub_tree"]

_log = logging.getLogger(__name__)
_SPECIAL = stat.S_ISUID | stat.S_ISGID
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class ScrubReport:
    """What :func:`scrub_tree` changed (paths relative to the tree) and what it could not."""

    stripped: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def _strip(name: str, dir_fd: int, info: os.stat_result) -> bool:
    """Clear the setuid/setgid bits of ``name`` without following a link; False if it moved."""
    fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino) or stat.S_ISLNK(now.st_mode):
            return False
        # chmod through the descriptor's magic link: fchmod refuses an O_PATH descriptor,
        # and opening for reading would need a permission the file may not grant.
        os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(now.st_mode) & ~_SPECIAL)
        return True
    finally:
        os.close(fd)


def _visit(entry: os.DirEntry[str], dir_fd: int, where: str, report: ScrubReport) -> os.stat_result:
    """Scrub one entry (not a link); return the status it was seen with."""
    info = entry.stat(follow_symlinks=False)
    mode, name = info.st_mode, entry.name
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        os.unlink(name, dir_fd=dir_fd)
        report.removed.append(where)
    elif mode & _SPECIAL:
        if stat.S_ISREG(mode) and info.st_nlink > 1:
            # the inode is shared with a path outside this entry: changing its mode
            # would change that file too, so the entry goes instead
            os.unlink(name, dir_fd=dir_fd)
            report.removed.append(where)
        elif _strip(name, dir_fd, info):
            report.stripped.append(where)
        else:
            report.failed.append(f"{where}: replaced while being scrubbed")
    return info


def _scan(
    root_fd: int, relative: str, ident: tuple[int, int], report: ScrubReport
) -> list[tuple[str, tuple[int, int]]]:
    """Scrub the entries of one directory; return its subdirectories to visit next.

    The directory is opened from the tree's root by the path its entries were seen
    at, then checked to be that same directory, so a link swapped in meanwhile is
    never followed; no descriptor is held past the call, whatever the depth.
    """
    subdirs: list[tuple[str, tuple[int, int]]] = []
    prefix = "" if relative == "." else relative + "/"
    try:
        fd = os.open(relative, _DIR_FLAGS, dir_fd=root_fd)
    except OSError as exc:
        report.failed.append(f"{relative}: {exc.strerror or exc}")
        return subdirs
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != ident:
            report.failed.append(f"{relative}: replaced while being scrubbed")
            return subdirs
        with os.scandir(fd) as entries:
            for entry in entries:
                where = prefix + entry.name
                try:
                    if entry.is_symlink():
                        continue
                    info = _visit(entry, fd, where, report)
                    if stat.S_ISDIR(info.st_mode):
                        subdirs.append((where, (info.st_dev, info.st_ino)))
                except FileNotFoundError:
                    continue  # removed meanwhile (by the host side): nothing to scrub
                except OSError as exc:
                    report.failed.append(f"{where}: {exc.strerror or exc}")
    finally:
        os.close(fd)
    return subdirs


def scrub_tree(tree: Path) -> ScrubReport:
    """Strip setuid/setgid bits and remove device nodes under ``tree`` (links not followed).

    Never raises for one entry: what could not be fixed is logged as a warning and
    listed in :attr:`ScrubReport.failed`.
    """
    report = ScrubReport()
    try:
        fd = os.open(tree, _DIR_FLAGS)
    except FileNotFoundError:
        return report
    except OSError as exc:
        report.failed.append(f".: {exc.strerror or exc}")
        _log.warning("sandbox tree %s could not be scrubbed: %s", tree, exc)
        return report
    try:
        root = os.fstat(fd)
        if root.st_mode & _SPECIAL:
            try:
                os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(root.st_mode) & ~_SPECIAL)
                report.stripped.append(".")
            except OSError as exc:
                report.failed.append(f".: {exc.strerror or exc}")
        pending = [(".", (root.st_dev, root.st_ino))]
        while pending:  # a stack, not recursion: a tree may be deeper than any limit
            relative, ident = pending.pop()
            pending += _scan(fd, relative, ident, report)
    finally:
        os.close(fd)
    if report.failed:
        _log.warning("sandbox tree %s not fully scrubbed: %s", tree, "; ".join(report.failed))
    return report
