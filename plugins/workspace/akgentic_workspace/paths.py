"""Where a workspace lives, and turning a tool's path argument into a safe key.

A tree is ``<root>/<scope>/<kind>/<leaf>``; beside it, never inside, sit ``<leaf>.git``
(the journal) and ``<leaf>.index`` (locks, the exec lease, caches). The rules for each
segment are here, checked when a card is built (``workspace_id``) or bound (the rest).

A path argument is normalised (:func:`normalise_argument`), then resolved against the
tree one component at a time so that links inside the tree are followed only while
they stay inside (:meth:`TreePaths.canonical`). The result, the *canonical key*, is
what gates, locks and the journal use; files are then opened component by component
with ``O_NOFOLLOW`` (:mod:`akgentic_workspace.files`), so a link planted meanwhile is
refused rather than followed.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from akgentic.plugin_api import RetriableError

__all__ = [
    "ESCAPE_MESSAGE",
    "KIND_NAMES",
    "ROOT_ENV",
    "SHARED_KINDS_ENV",
    "SHARED_SCOPE",
    "TreePaths",
    "WorkspaceLocation",
    "check_leaf",
    "check_scope",
    "encode_metadata_value",
    "metadata_leaf",
    "normalise_argument",
    "permitted_shared_kinds",
    "validate_workspace_id",
    "workspaces_root",
]

ROOT_ENV = "AKGENTIC_WORKSPACES_ROOT"
SHARED_KINDS_ENV = "AKGENTIC_WORKSPACE_SHARED_KINDS"
SHARED_SCOPE = "_shared"
KIND_NAMES = ("_shared", "_team", "_id", "_meta")
MOUNT_PREFIX = "/workspace/"
ESCAPE_MESSAGE = "Path escapes workspace root — use a path relative to the workspace"

_ID_GRAMMAR = re.compile(r"[A-Za-z0-9._-]{1,128}")
_SHARABLE = {"team": "_team", "id": "_id", "meta": "_meta"}
_MAX_LINKS = 40


def workspaces_root(environ: Mapping[str, str] | None = None) -> Path:
    """``AKGENTIC_WORKSPACES_ROOT`` (default ``./workspaces``), made absolute now."""
    env = os.environ if environ is None else environ
    return Path(os.path.abspath(env.get(ROOT_ENV) or "workspaces"))


def _check_segment(value: str, what: str) -> None:
    if not value:
        raise ValueError(f"{what} is empty")
    if value.startswith("."):
        raise ValueError(f"{what} {value!r} starts with '.'")
    for bad, name in (("/", "'/'"), ("\\", "'\\'"), ("\x00", "a NUL byte")):
        if bad in value:
            raise ValueError(f"{what} {value!r} contains {name}")
    if value.casefold() in KIND_NAMES:
        raise ValueError(f"{what} {value!r} is a reserved workspace name")


def check_scope(value: str) -> None:
    """Refuse a principal that cannot be a directory of its own (ValueError)."""
    _check_segment(value, "workspace owner")


def check_leaf(value: str) -> None:
    """Refuse a leaf that is not one segment or would look like a sibling (ValueError)."""
    if value == SHARED_SCOPE:
        return  # a legal leaf: only the scope segment reserves it
    _check_segment(value, "workspace name")
    folded = value.casefold()
    for suffix, role in ((".git", "journal"), (".index", "index")):
        if folded.endswith(suffix):
            owner = value[: -len(suffix)]
            raise ValueError(
                f"workspace name {value!r} ends in {suffix!r}: it would be taken for the "
                f"{role} of workspace {owner!r}"
            )


def validate_workspace_id(value: str) -> str:
    """The ``workspace_id`` grammar: 1-128 of ``[A-Za-z0-9._-]`` plus the leaf rules."""
    if not _ID_GRAMMAR.fullmatch(value):
        raise ValueError(
            f"workspace_id {value!r} must be 1 to 128 characters of letters, digits, '.', "
            "'_' and '-'"
        )
    check_leaf(value)
    return value


def encode_metadata_value(value: str) -> str:
    """Percent-encode (UTF-8) every character outside ``[A-Za-z0-9.]``."""
    out = []
    for char in value:
        if char.isascii() and (char.isalnum() or char == "."):
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out)


def metadata_leaf(keys: Sequence[str], metadata: Any) -> str:
    """The ``_meta`` leaf for ``keys`` over the team's metadata (ValueError when missing)."""
    if metadata is None:
        raise ValueError("workspace_metadata_keys needs team metadata, and the team has none")
    values = metadata if isinstance(metadata, Mapping) else _as_mapping(metadata)
    parts = []
    for key in dict.fromkeys(keys):
        if key not in values:
            known = ", ".join(sorted(map(str, values))) or "none"
            raise ValueError(f"team metadata has no key {key!r} (keys: {known})")
        value = values[key]
        text = "" if value is None else str(value)
        if not text:
            raise ValueError(f"team metadata key {key!r} is empty")
        parts.append(f"{key}-{encode_metadata_value(text)}")
    leaf = "__".join(parts)
    if len(leaf.encode("utf-8")) > 255:
        raise ValueError("the metadata-keyed workspace name is longer than 255 bytes")
    check_leaf(leaf)
    return leaf


def _as_mapping(metadata: Any) -> Mapping[str, Any]:
    dump = getattr(metadata, "model_dump", None)
    if callable(dump):
        dumped = dump()
        if isinstance(dumped, Mapping):
            return dumped
    raise ValueError(f"team metadata of type {type(metadata).__name__} has no keys")


def permitted_shared_kinds(environ: Mapping[str, str] | None = None) -> set[str]:
    """The kinds ``AKGENTIC_WORKSPACE_SHARED_KINDS`` permits (``_team``/``_id``/``_meta``).

    Raises:
        ValueError: a token is not a kind; the whole value is then invalid.
    """
    env = os.environ if environ is None else environ
    kinds = set()
    for token in (env.get(SHARED_KINDS_ENV) or "").split(","):
        name = token.strip().casefold()
        if not name:
            continue
        if name not in _SHARABLE:
            raise ValueError(
                f"{SHARED_KINDS_ENV}: {token.strip()!r} is not a workspace kind; accepted, "
                "comma-separated: 'id', 'meta', 'team'"
            )
        kinds.add(_SHARABLE[name])
    return kinds


@dataclass(frozen=True)
class WorkspaceLocation:
    """One tree on disk: ``root/scope/kind/leaf`` and its two siblings."""

    root: Path
    scope: str
    kind: str
    leaf: str

    @property
    def relative(self) -> str:
        """``scope/kind/leaf``: the name of the workspace in events and actor names."""
        return f"{self.scope}/{self.kind}/{self.leaf}"

    @property
    def tree(self) -> Path:
        """The directory agents see."""
        return self.root / self.scope / self.kind / self.leaf

    @property
    def git_dir(self) -> Path:
        """The journal's repository (a sibling)."""
        return self.tree.with_name(f"{self.leaf}.git")

    @property
    def meta_dir(self) -> Path:
        """Locks, the exec lease and caches (a sibling)."""
        return self.tree.with_name(f"{self.leaf}.index")


def normalise_argument(path: str) -> str:
    """Rules 1-3 for a path argument: the tree-relative normal form (``""`` = root).

    Raises:
        RetriableError: a NUL byte, an absolute path other than ``/workspace/...``, or a
            path that climbs out with ``..``.
    """
    if "\x00" in path:
        raise RetriableError("Path contains a NUL byte")
    if path in ("", "."):
        return ""
    if path == MOUNT_PREFIX.rstrip("/") or path.startswith(MOUNT_PREFIX):
        path = path[len(MOUNT_PREFIX) :] or "."
    if path.startswith("/"):
        raise RetriableError(ESCAPE_MESSAGE)
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        raise RetriableError(ESCAPE_MESSAGE)
    return "" if normal == "." else normal


class TreePaths:
    """Resolves path arguments against one tree (rule 4 and 5 of the path rules)."""

    def __init__(self, tree: Path) -> None:
        self.tree = Path(os.path.realpath(tree))
        self._prefix = str(self.tree) + os.sep

    def canonical(self, path: str) -> str:
        """The canonical key of ``path``: links inside the tree resolved, never leaving it.

        Raises:
            RetriableError: the path (or a link on the way) leaves the tree.
        """
        return self._resolve(normalise_argument(path).split("/") if path else [], 0)

    def key_of_normal(self, normal: str) -> str:
        """:meth:`canonical` for an already-normalised relative path."""
        return self._resolve(normal.split("/") if normal else [], 0)

    def _resolve(self, parts: list[str], hops: int) -> str:
        done: list[str] = []
        pending = [p for p in parts if p not in ("", ".")]
        while pending:
            part = pending.pop(0)
            if part == "..":
                if not done:
                    raise RetriableError(ESCAPE_MESSAGE)
                done.pop()
                continue
            here = os.path.join(str(self.tree), *done, part)
            try:
                link = os.readlink(here)
            except (FileNotFoundError, NotADirectoryError):
                done.append(part)
                done.extend(p for p in pending if p not in ("", "."))
                result = posixpath.normpath("/".join(done))
                if result == ".." or result.startswith("../"):
                    raise RetriableError(ESCAPE_MESSAGE) from None
                return "" if result == "." else result
            except OSError:
                done.append(part)  # not a link (EINVAL): an ordinary component
                continue
            hops += 1
            if hops > _MAX_LINKS:
                raise RetriableError(f"Too many levels of links in {'/'.join([*done, part])}")
            if os.path.isabs(link):
                target = os.path.normpath(link)
                if target == str(self.tree):
                    done = []
                elif target.startswith(self._prefix):
                    done = target[len(self._prefix) :].split(os.sep)
                else:
                    raise RetriableError(ESCAPE_MESSAGE)
                continue
            pending = [p for p in link.split("/") if p not in ("", ".")] + pending
        return "/".join(done)
