"""What a run may not leave in the tree on the host: setuid/setgid bits, device nodes.

A backend maps the sandbox user to an unprivileged identity and mounts the tree
``nosuid,nodev`` where it can, yet a file made inside is a file on the host: a
``chmod 6755`` copy of a shell owned by the host user akgentic runs as (root, in a
container or CI) would be a setuid-root shell for anyone who can reach the tree.
:func:`scrub_tree` runs after every run, once nothing of the sandbox is left to race
it, and clears both; every backend calls it. FIFOs, sockets and links are left alone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ScrubReport", "scrub_tree"]

_log = logging.getLogger(__name__)
_SPECIAL = stat.S_ISUID | stat.S_ISGID


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


def _visit(name: str, dir_fd: int, where: str, report: ScrubReport) -> None:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        return
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


def scrub_tree(tree: Path) -> ScrubReport:
    """Strip setuid/setgid bits and remove device nodes under ``tree`` (links not followed).

    Never raises for one entry: what could not be fixed is logged as a warning and
    listed in :attr:`ScrubReport.failed`.
    """
    report = ScrubReport()
    errors: list[OSError] = []
    with contextlib.suppress(FileNotFoundError):
        root = os.stat(tree, follow_symlinks=False)
        if root.st_mode & _SPECIAL and not stat.S_ISLNK(root.st_mode):
            os.chmod(tree, stat.S_IMODE(root.st_mode) & ~_SPECIAL)
            report.stripped.append(".")
    for top, dirs, files, dir_fd in os.fwalk(tree, onerror=errors.append, follow_symlinks=False):
        relative = os.path.relpath(top, tree)
        for name in (*dirs, *files):
            where = name if relative == "." else f"{relative}/{name}"
            try:
                _visit(name, dir_fd, where, report)
            except OSError as exc:
                report.failed.append(f"{where}: {exc.strerror or exc}")
    report.failed += [f"{e.filename}: {e.strerror or e}" for e in errors]
    if report.failed:
        _log.warning("sandbox tree %s not fully scrubbed: %s", tree, "; ".join(report.failed))
    return report
