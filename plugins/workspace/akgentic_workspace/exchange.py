"""Publishing a staged file over an existing one without a synchronous writeback.

On ext4, ``rename(2)`` over an existing file (our ``os.replace`` of a staged edit) makes
the kernel start writing the staged file's data out inside the call (``auto_da_alloc``).
With a journal that buys crash safety: the data reaches the disk before the rename is
committed. Without a journal there is no such ordering to buy, so the call only waits
for a block request to be queued on a disk other processes keep busy: measured here,
that wait is most of a one-line edit.

On ext4 mounted without a journal, :func:`exchange_then_unlink` publishes with
``renameat2(RENAME_EXCHANGE)`` instead (the name now shows the new file, atomically,
exactly as with a rename) and unlinks the old file, which the exchange left under the
staging name. Everywhere else, and on any surprise, the caller keeps ``os.replace``.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import stat
from pathlib import Path
from typing import Any

__all__ = ["exchange_then_unlink", "replace_flushes_for_nothing"]

_RENAME_EXCHANGE = 2
_renameat2: Any = None
_loaded = False


def _function() -> Any:
    global _renameat2, _loaded
    if not _loaded:
        _loaded = True
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            function = libc.renameat2
        except (OSError, AttributeError):  # no glibc >= 2.28 here: keep os.replace
            return None
        function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
        function.argtypes += [ctypes.c_uint]
        function.restype = ctypes.c_int
        _renameat2 = function
    return _renameat2


def replace_flushes_for_nothing(tree: Path) -> bool:
    """True when ``tree`` is on ext4 without a journal (and ``renameat2`` is callable).

    The block device comes from the tree's ``st_dev``; its ext4 entry in sysfs says
    whether a journal thread exists. Anything unreadable answers False.
    """
    try:
        device = os.stat(tree).st_dev
        block = os.path.realpath(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}")
        journal = Path("/sys/fs/ext4", os.path.basename(block), "journal_task").read_text()
    except OSError:
        return False
    return journal.strip() == "<none>" and _function() is not None


def exchange_then_unlink(dir_fd: int, staging: str, name: str) -> bool:
    """Swap ``staging`` in as ``name`` and remove what was there; False to fall back.

    False (nothing changed) when the exchange is refused or when what the exchange
    took out was not a regular file: then it is swapped back, so that ``os.replace``
    gives the usual answer for a directory or replaces a link as a link.
    """
    function = _function()
    if function is None:
        return False
    source, target = os.fsencode(staging), os.fsencode(name)
    if function(dir_fd, source, dir_fd, target, _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        if code in (errno.ENOENT, errno.EINVAL, errno.ENOSYS, errno.EXDEV, errno.EPERM):
            return False
        raise OSError(code, os.strerror(code), name)
    try:
        old = os.stat(staging, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        old = None
    if old is None or not stat.S_ISREG(old.st_mode):
        # Something other than a file was put at the name by another hand: undo. If
        # even that fails, the new file is the one published at the name.
        return bool(function(dir_fd, source, dir_fd, target, _RENAME_EXCHANGE) != 0)
    # The published file is in place; a staging file that cannot go is swept at bind.
    with contextlib.suppress(OSError):
        os.unlink(staging, dir_fd=dir_fd)
    return True
