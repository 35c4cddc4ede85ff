"""What is wrong with a SQLite store's file, in one line that says what to do.

:func:`check_file` refuses, before SQLite opens anything, a path that cannot be a
database (under an existing file, a directory) or a file whose header is not
SQLite's; :func:`fault` words a ``sqlite3`` failure (damaged file, read-only
location...) as a :class:`~akgentic.team.errors.StoreUnreadableError`.
"""

from __future__ import annotations

from pathlib import Path

from akgentic.team.errors import StoreUnreadableError

__all__ = ["check_file", "fault"]

_MAGIC = b"SQLite format 3\x00"


def fault(path: Path | None, exc: BaseException) -> StoreUnreadableError:
    """One line saying what is wrong with the database at ``path`` and what to do."""
    where = ":memory:" if path is None else str(path)
    text = str(exc).strip() or type(exc).__name__
    lowered = text.lower()
    if "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
        return StoreUnreadableError(
            f"cannot use the SQLite store {where} ({text}): this user cannot write the file or "
            "its directory; make both writable, or copy the store somewhere writable"
        )
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return StoreUnreadableError(
            f"{where} is not a readable SQLite database ({text}): it is damaged or another kind "
            "of file; restore it from a backup or point --store at another file"
        )
    return StoreUnreadableError(f"the SQLite store {where} failed: {text}")


def check_file(path: Path) -> None:
    """Refuse, before SQLite touches it, a path that cannot be (or is not) a database."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise StoreUnreadableError(
                    f"cannot create the SQLite store {path}: {parent} is a file, not a "
                    "directory; choose a path outside it"
                )
            break
    if path.is_dir():
        raise StoreUnreadableError(
            f"{path} is a directory, not a SQLite database file; name a file inside it"
        )
    if path.exists():
        try:
            with path.open("rb") as handle:
                header = handle.read(len(_MAGIC))
        except OSError as exc:
            raise StoreUnreadableError(f"cannot read the SQLite store {path}: {exc}") from None
        if header and header != _MAGIC:
            raise StoreUnreadableError(
                f"{path} is not a SQLite database (its header is wrong: a damaged file or "
                "another kind of file); restore it from a backup or point --store at another file"
            )
