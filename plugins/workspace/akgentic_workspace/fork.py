"""A workspace forked with its team: the tree as it was at the fork point, copied.

The ``akgentic_team_fork`` hook of this plugin. For every tree a member of the
parent was bound to by the fork point (its ``WorkspaceAttached`` events), the
fork gets a tree of its own, equal to the parent's tree at the journal commit
that was the newest at the fork point, and a journal whose history ends there:

* the commit is found by time: the journal notes each commit's time in
  nanoseconds (``<leaf>.git/akgentic-times``); the fork takes the last commit
  made before the parent recorded the fork-point event. A change made by a
  tool call finishes (and is committed) before its return is recorded, so every
  call answered by the fork point is in the copy; one still in flight is
  reported interrupted to its agent, and what it had written may or may not be;
* the journal is cloned with its objects hard-linked (git objects never change)
  and its branch set to that commit; the tree is checked out from it, so it is
  a copy, never shared;
* a team's own tree (``_team/<team id>``) becomes the fork's by its id; a
  named tree (``workspace_id: coding``) gets a name of its own,
  ``coding.fork-<8 hex digits of the fork's id>``, written into the fork's
  cards (the step's ``rewrites``);
* files the journal ignores (``.gitignore``: ``__pycache__``, ``.venv``...) and
  the ``<leaf>.index`` sibling (locks, caches, retrieval records, rebuilt on
  use) are not copied.

Refused, naming the card: a tree without a journal (``git_journal`` off, or
gone), a journal whose times file or commit is corrupt, a tree keyed by team
metadata or shared across teams (it is not the team's to copy).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from akgentic.plugin_api import ForkRefusedError, ForkRequest, ForkStep
from akgentic_workspace.journal import BRANCH, TIMES_FILE
from akgentic_workspace.paths import SHARED_SCOPE, WorkspaceLocation, workspaces_root

__all__ = ["WorkspaceFork", "commit_at", "fork_steps", "nanoseconds"]

CARD = "workspace"
GIT_TIMEOUT_S = 60.0
_ATTACHED = "akgentic_workspace.params.WorkspaceAttached"
_NAMED = re.compile(r'"workspace_id":"([A-Za-z0-9._-]{1,128})"')
_KEYED = re.compile(r'"workspace_metadata_keys":\[\s*"')
_SHARED = '"workspace_sharable":true'
_FORK_SUFFIX = re.compile(r"\.fork-[0-9a-f]{8}$")
_SHA = re.compile(r"[0-9a-f]{40}")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _refuse(reason: str) -> ForkRefusedError:
    return ForkRefusedError(CARD, reason)


def _git(
    git_dir: Path | None,
    *args: str,
    work_tree: Path | None = None,
    index: Path | None = None,
    check: bool = True,
) -> str:
    """Run git (on ``git_dir``) without the user's configuration; stdout (raises on failure
    unless ``check`` is False)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0")
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    argv = ["git"] if git_dir is None else ["git", f"--git-dir={git_dir}"]
    if work_tree is not None:
        argv.append(f"--work-tree={work_tree}")
    done = subprocess.run(
        [*argv, *args],
        capture_output=True,
        timeout=GIT_TIMEOUT_S,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0 and check:
        problem = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        raise OSError(f"git {args[0]} failed: {problem}")
    return done.stdout.decode("utf-8", "replace")


def nanoseconds(moment: datetime) -> int:
    """``moment`` (timezone-aware) in integer nanoseconds since the epoch, exactly."""
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1000


def commit_at(git_dir: Path, at_ns: int, relative: str) -> str | None:
    """The journal's newest commit made at or before ``at_ns`` (``None``: none yet).

    Read from the times file; a journal without one (made before it existed)
    falls back on git's commit times, in whole seconds. Raises
    ``ForkRefusedError`` for a missing journal or a corrupt times file.
    """
    if not (git_dir / "HEAD").is_file():
        raise _refuse(
            f"cannot copy workspace {relative}: it has no journal (git_journal is off, or "
            "its journal is gone), so its tree at the fork point is unknown"
        )
    path = git_dir / TIMES_FILE
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        return _commit_by_git_time(git_dir, at_ns, relative)
    except (OSError, UnicodeDecodeError) as error:
        raise _refuse(f"cannot read the journal times of workspace {relative}: {error}") from None
    found: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        sha, _, stamp = line.partition(" ")
        if not _SHA.fullmatch(sha) or not stamp.isdigit():
            raise _refuse(
                f"the journal of workspace {relative} is corrupt: line {number} of "
                f"{TIMES_FILE} is not '<commit> <time>'"
            )
        if int(stamp) <= at_ns:
            found = sha
    return found


def _commit_by_git_time(git_dir: Path, at_ns: int, relative: str) -> str | None:
    try:
        listing = _git(git_dir, "log", "--format=%H %ct", BRANCH)
    except OSError as error:
        raise _refuse(f"the journal of workspace {relative} cannot be read: {error}") from None
    for line in listing.splitlines():  # newest first
        sha, _, seconds = line.partition(" ")
        if seconds.isdigit() and int(seconds) * 1_000_000_000 <= at_ns:
            return sha
    return None


@dataclass
class WorkspaceFork:
    """The fork of one tree: staged beside the fork's tree, renamed into place on publish."""

    parent: WorkspaceLocation
    child: WorkspaceLocation
    commit: str | None
    card: str = CARD
    rewrites: Mapping[str, str] = field(default_factory=dict)
    _made: list[Path] = field(default_factory=list, repr=False)

    @property
    def _stage_tree(self) -> Path:
        return self.child.tree.with_name(f"{self.child.leaf}.fork-tmp")

    @property
    def _stage_git(self) -> Path:
        return self.child.tree.with_name(f"{self.child.leaf}.git-fork-tmp")

    def prepare(self) -> None:
        """Clone the journal at the commit and check the tree out of it, both staged."""
        for final in (self.child.tree, self.child.git_dir):
            if final.exists():
                raise _refuse(f"cannot copy workspace {self.parent.relative}: {final} exists")
        stage_git, stage_tree = self._stage_git, self._stage_tree
        for stale in (stage_git, stage_tree):
            shutil.rmtree(stale, ignore_errors=True)
        self._made += [stage_git, stage_tree]
        stage_tree.parent.mkdir(parents=True, exist_ok=True)
        _git(
            None, "clone", "--bare", "--local", "--quiet", str(self.parent.git_dir), str(stage_git)
        )
        _git(stage_git, "config", "core.bare", "false")
        _git(stage_git, "config", "--remove-section", "remote.origin", check=False)
        stage_tree.mkdir(mode=0o700)
        if self.commit is None:
            _git(stage_git, "update-ref", "-d", BRANCH)
            (stage_git / TIMES_FILE).write_text("", encoding="ascii")
            return
        _git(stage_git, "update-ref", BRANCH, self.commit)
        self._copy_times(stage_git)
        index = stage_git / "akgentic-fork-index"
        _git(stage_git, "read-tree", self.commit, work_tree=stage_tree, index=index)
        _git(stage_git, "checkout-index", "-a", "-f", work_tree=stage_tree, index=index)
        index.unlink(missing_ok=True)

    def _copy_times(self, stage_git: Path) -> None:
        """The parent's times up to the commit (the fork's history ends there)."""
        kept: list[str] = []
        try:
            text = (self.parent.git_dir / TIMES_FILE).read_text(encoding="ascii")
        except FileNotFoundError:
            text = ""
        for line in text.splitlines():
            kept.append(line)
            if line.startswith(f"{self.commit} "):
                break
        (stage_git / TIMES_FILE).write_text("".join(f"{k}\n" for k in kept), encoding="ascii")

    def publish(self) -> None:
        """Rename the staged tree and journal to the fork's names."""
        os.rename(self._stage_tree, self.child.tree)
        self._made.append(self.child.tree)
        os.rename(self._stage_git, self.child.git_dir)
        self._made.append(self.child.git_dir)

    def discard(self) -> None:
        """Remove everything this fork made (staged or published)."""
        for path in reversed(self._made):
            shutil.rmtree(path, ignore_errors=True)
        self._made.clear()


def _named_leaf(leaf: str, fork: ForkRequest) -> str:
    base = _FORK_SUFFIX.sub("", leaf)
    suffix = f".fork-{fork.child_id.hex[:8]}"
    return base[: 128 - len(suffix)] + suffix


def _attached_paths(fork: ForkRequest) -> list[str]:
    found: list[str] = []
    for stored in fork.events_mentioning(_ATTACHED):
        attached: Any = getattr(stored.event, "event", None)
        path = getattr(attached, "workspace_path", None)
        if isinstance(path, str) and path not in found:
            found.append(path)
    return found


def fork_steps(fork: ForkRequest) -> list[ForkStep]:
    """One step per tree the parent's members were bound to by the fork point."""
    if not fork.mentions("akgentic_workspace."):
        return []
    if fork.mentions(_SHARED):
        raise _refuse("shares its tree across teams (workspace_sharable): a fork cannot copy it")
    texts = [text for _, text in fork.rows]
    if any(_KEYED.search(text) for text in texts):
        raise _refuse(
            "keys its tree by team metadata (workspace_metadata_keys): a fork cannot have "
            "its own copy"
        )
    named = set(_NAMED.findall("\n".join(texts)))
    rewrites: dict[str, str] = {}
    for leaf in sorted(named):
        new = _named_leaf(leaf, fork)
        rewrites[f'"workspace_id":"{leaf}"'] = f'"workspace_id":"{new}"'
        rewrites[f'/_id/{leaf}"'] = f'/_id/{new}"'
    root = workspaces_root()
    at_ns = nanoseconds(fork.at_time)
    steps: list[ForkStep] = []
    for relative in _attached_paths(fork):
        scope, kind, leaf = relative.split("/", 2)
        if scope == SHARED_SCOPE or kind == "_meta":
            raise _refuse(f"cannot copy workspace {relative}: it is not the team's own")
        if kind == "_team":
            new_leaf = fork.new_id(leaf)
        elif kind == "_id":
            new_leaf = _named_leaf(leaf, fork)
        else:
            raise _refuse(f"cannot copy workspace {relative}: unknown kind {kind!r}")
        parent = WorkspaceLocation(root, scope, kind, leaf)
        child = WorkspaceLocation(root, scope, kind, new_leaf)
        commit = commit_at(parent.git_dir, at_ns, relative)
        if commit is not None:
            try:
                _git(parent.git_dir, "cat-file", "-e", f"{commit}^{{commit}}")
            except OSError:
                raise _refuse(
                    f"the journal of workspace {relative} is corrupt: commit {commit[:12]} "
                    "is missing"
                ) from None
        steps.append(WorkspaceFork(parent, child, commit, rewrites=rewrites))
    if not steps and rewrites:
        # Named trees not bound yet at the fork point: the fork still binds its own.
        return [_NoTree(rewrites=rewrites)]
    return steps


@dataclass
class _NoTree:
    """Named trees not bound by the fork point: only the fork's own names are carried."""

    card: str = CARD
    rewrites: Mapping[str, str] = field(default_factory=dict)

    def prepare(self) -> None:
        """Nothing to stage."""

    def publish(self) -> None:
        """Nothing to publish."""

    def discard(self) -> None:
        """Nothing to remove."""
