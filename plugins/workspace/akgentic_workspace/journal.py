"""The git journal: a linear history of a tree, kept in its ``<leaf>.git`` sibling.

Opt-in (``git_journal=True``). Every accepted mutation is committed with the agent as
author; whatever changed outside the tools is committed first as ``out-of-band``. The
journal follows the bytes: no failure here ever fails a mutation, and the write gate
is the same with the journal on or off. A commit that fails is not silent either: the
committing methods return a note saying so, which the tool appends to its answer (the
agent and the human both see it); the changes it missed are recorded by the next
commit that succeeds. Without git (or with a broken repository) it turns itself off
with one WARNING.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from akgentic_workspace.gitobjects import GitObjects, Ident, commit_body, read_ref, update_ref
from akgentic_workspace.journal_tree import (
    Node,
    NotLoose,
    WorkTree,
    load_tree,
    tree_from_listing,
    write_tree,
)
from akgentic_workspace.locks import MetaDir
from akgentic_workspace.paths import WorkspaceLocation

__all__ = ["BRANCH", "HUMAN", "OUT_OF_BAND", "TIMES_FILE", "Author", "Journal"]

log = logging.getLogger("akgentic_workspace.journal")

GIT_TIMEOUT_S = 15.0
SEEDED_IGNORE = (
    ".*.tmp",
    ".*.md",
    ".*.bmp",
    ".*.gif",
    ".*.jpeg",
    ".*.jpg",
    ".*.png",
    ".*.webp",
    "__pycache__/",
    "*.pyc",
    ".venv/",
    "node_modules/",
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
BRANCH = "refs/heads/master"
#: In ``<leaf>.git``: one line per journal commit, ``<sha> <time in ns>``, oldest first.
TIMES_FILE = "akgentic-times"
_OUT_OF_BAND_SUBJECT = "out-of-band: changes from outside the tools"


class _Repo:
    """What a process knows of one journal: the branch's snapshot and the work tree's stats."""

    def __init__(self, location: WorkspaceLocation) -> None:
        self.objects = GitObjects(location.git_dir)
        self.objects.make_fan_out()
        self.work = WorkTree(location.tree, location.git_dir, self.objects)
        self.head: str | None = None
        self.root = Node()
        self.loaded = False
        self.lock = threading.Lock()


_REPOS: dict[str, _Repo] = {}
_REPOS_LOCK = threading.Lock()


class JournalError(Exception):
    """A commit could not be recorded (the branch moved, or is locked by another git)."""


@dataclass
class _Attempt:
    """One locked journal operation: the repository (None if unreadable) and what failed."""

    repo: _Repo | None = None
    problem: str | None = None


@dataclass(frozen=True)
class Author:
    """Who a commit is by."""

    name: str
    email: str

    @classmethod
    def agent(cls, name: str, agent_id: str) -> Author:
        """An agent: its display name, ``<agent id>@akgentic``."""
        return cls(_clean_name(name), f"{agent_id}@akgentic")


OUT_OF_BAND = Author("out-of-band", "out-of-band@akgentic")
HUMAN = Author("human", "human@akgentic")
_INIT = Author("akgentic-journal", "journal@akgentic")


def _clean_name(name: str) -> str:
    cleaned = _CONTROL.sub("", name).replace("<", "").replace(">", "").strip()
    return cleaned or "unknown-agent"


def _clean_email(email: str) -> str:
    return _CONTROL.sub("", email).replace("<", "").replace(">", "").strip() or "unknown@akgentic"


def _collapse(text: str, limit: int = 500) -> str:
    flat = _CONTROL.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[:limit] + " …"


class Journal:
    """One card's journal over one tree; :attr:`enabled` False makes every call a no-op."""

    def __init__(self, location: WorkspaceLocation, meta: MetaDir, *, requested: bool) -> None:
        self.location = location
        self.meta = meta
        self._git_dir = location.git_dir
        self.enabled = False
        self._warned = False
        if not requested:
            log.debug("git journal off for %s (not requested)", location.relative)
            return
        self.enabled = True
        self._git = shutil.which("git")
        if self._git is None:
            self._off("git is not on PATH")
            return
        if location.leaf.casefold().endswith(".git"):
            self._off("the workspace name ends in .git")
            return
        self._init()

    # ------------------------------------------------------------ plumbing

    def _off(self, reason: str) -> None:
        self.enabled = False
        if not self._warned:
            self._warned = True
            log.warning("git journal off for %s: %s", self.location.relative, reason)

    def _env(self, author: Author | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="0",
        )
        if author is not None:
            env.update(
                GIT_AUTHOR_NAME=author.name,
                GIT_AUTHOR_EMAIL=author.email,
                GIT_COMMITTER_NAME=author.name,
                GIT_COMMITTER_EMAIL=author.email,
            )
        return env

    def _run(
        self, *args: str, author: Author | None = None, work_tree: bool = True
    ) -> subprocess.CompletedProcess[bytes] | None:
        assert self._git is not None
        argv = [self._git, f"--git-dir={self.location.git_dir}"]
        if work_tree:
            argv.append(f"--work-tree={self.location.tree}")
        argv += ["-c", "commit.gpgsign=false", "-c", "core.quotepath=off", *args]
        try:
            return subprocess.run(
                argv,
                capture_output=True,
                timeout=GIT_TIMEOUT_S,
                env=self._env(author),
                cwd=self.location.tree,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            self._off(f"git {args[0]} timed out after {GIT_TIMEOUT_S:g} s")
        except OSError as error:
            self._off(f"git could not be started ({error})")
        return None

    def _init(self) -> None:
        git_dir = self.location.git_dir
        with self.meta.journal_lock():
            if git_dir.exists():
                if not (git_dir / "HEAD").is_file():
                    self._off(f"{git_dir} exists but is not a git repository (left untouched)")
                return
            made = self._run(
                "init", "--quiet", "--bare", "-b", "master", str(git_dir), work_tree=False
            )
            if made is None or made.returncode != 0:
                self._off(f"git init failed: {_stderr(made)}")
                return
            configured = self._run("config", "core.bare", "false", work_tree=False)
            if configured is None or configured.returncode != 0:
                self._off(f"git config failed: {_stderr(configured)}")
                return
            ignore = self.location.tree / ".gitignore"
            if not ignore.exists():
                ignore.write_text("\n".join(SEEDED_IGNORE) + "\n", encoding="utf-8")
            self._commit_locked(_INIT, "init: .gitignore", None, [".gitignore"])

    # ------------------------------------------------------------ in-process commits

    def _repo(self) -> _Repo:
        """This tree's journal state, shared by every card of this process."""
        key = str(self.location.git_dir)
        with _REPOS_LOCK:
            repo = _REPOS.get(key)
            if repo is None:
                repo = _REPOS[key] = _Repo(self.location)
            return repo

    def _sync(self, repo: _Repo) -> None:
        """Bring the picture of the branch up to date with what is on disk."""
        current = read_ref(self._git_dir, BRANCH)
        if repo.loaded and current == repo.head:
            return
        repo.loaded = False
        root = Node() if current is None else self._load_commit(repo, current)
        repo.head, repo.root, repo.loaded = current, root, True

    def _load_commit(self, repo: _Repo, commit: str) -> Node:
        found = repo.objects.read(commit)
        if found is not None and found[0] == "commit":
            first = found[1].split(b"\n", 1)[0]
            if first.startswith(b"tree "):
                try:
                    return load_tree(repo.objects, first[5:].decode("ascii"), repo.root)
                except NotLoose:
                    pass
        listing = self._run("ls-tree", "-r", "-z", "--full-tree", commit, work_tree=False)
        if listing is None or listing.returncode != 0:
            raise OSError(f"the journal's commit {commit} cannot be read: {_stderr(listing)}")
        return tree_from_listing(listing.stdout)

    def _record(
        self, repo: _Repo, root: Node, author: Author, subject: str, body: str | None
    ) -> bool:
        """Commit snapshot ``root`` on top of the branch; False when there is nothing new."""
        tree = write_tree(repo.objects, root)
        if repo.head is not None and tree == write_tree(repo.objects, repo.root):
            return False
        message = _CONTROL.sub(" ", subject) + (f"\n\n{body}" if body else "")
        ident = Ident(author.name, _clean_email(author.email))
        commit = repo.objects.write("commit", commit_body(tree, repo.head, ident, message))
        if not update_ref(self._git_dir, BRANCH, commit, repo.head):
            repo.loaded = False
            raise JournalError("the branch moved or is locked by another git")
        repo.head, repo.root = commit, root
        self._note_time(commit)
        return True

    def _note_time(self, commit: str) -> None:
        """Append ``<commit> <ns since the epoch>`` to the journal's times file.

        A fork finds the commit of a tree at an event by these times (git's own
        are in whole seconds). Called under the journal lock, so lines follow the
        branch's order; a failure to write is logged, never fails the change.
        """
        try:
            with open(self._git_dir / TIMES_FILE, "a", encoding="ascii") as times:
                times.write(f"{commit} {time.time_ns()}\n")
        except OSError as error:
            log.warning("journal times of %s not written: %s", self.location.relative, error)

    def _problem(self, what: str, error: Exception) -> str:
        """Log a failure and say it in words for the tool's answer."""
        log.warning("journal %s in %s: %r", what, self.location.relative, error)
        return (
            f"[journal: {what} ({type(error).__name__}: {error}). The change itself is on "
            "disk; the history misses it until a later journal commit succeeds.]"
        )

    @contextlib.contextmanager
    def _locked(self) -> Iterator[_Attempt]:
        """The journal lock, the shared state in step with disk; ``repo`` None if unreadable."""
        attempt = _Attempt()
        repo = self._repo()
        with self.meta.journal_lock(), repo.lock:
            try:
                self._sync(repo)
            except Exception as error:  # the journal follows the bytes: never fail the change
                attempt.problem = self._problem("unreadable", error)
                yield attempt
                return
            attempt.repo = repo
            try:
                yield attempt
            except Exception as error:
                repo.loaded = False
                attempt.problem = self._problem("commit failed", error)

    def _commit_locked(
        self, author: Author, subject: str, body: str | None, paths: Sequence[str] | None
    ) -> bool:
        repo = self._repo()
        with repo.lock:
            try:
                self._sync(repo)
                if paths is None:
                    root, _ = repo.work.scan(repo.root)
                else:
                    root, _ = repo.work.apply(repo.root, paths)
                return self._record(repo, root, author, subject, body)
            except Exception as error:
                repo.loaded = False
                log.warning("journal commit failed in %s: %s", self.location.relative, error)
                return False

    # ------------------------------------------------------------ public

    def dirty_paths(self) -> list[str]:
        """Paths that differ from the last commit (a move gives both names)."""
        if not self.enabled:
            return []
        found: list[str] = []
        with self._locked() as attempt:
            if attempt.repo is not None:
                found = attempt.repo.work.scan(attempt.repo.root, store=False)[1]
        return sorted(set(found))

    def commit_out_of_band(self) -> str | None:
        """Commit whatever changed outside the tools, as ``out-of-band``; a note if it failed."""
        if not self.enabled:
            return None
        with self._locked() as attempt:
            repo = attempt.repo
            if repo is not None:
                root, changed = repo.work.scan(repo.root)
                if changed:
                    self._record(repo, root, OUT_OF_BAND, _OUT_OF_BAND_SUBJECT, None)
        return attempt.problem

    def commit(
        self, capability: str, paths: Sequence[str], author: Author, body: str | None = None
    ) -> str | None:
        """Commit exactly ``paths`` as ``author`` (``<cap>: <path>`` / ``<cap>: <n> files``).

        Returns a note when the commit failed (None otherwise).
        """
        if not self.enabled or not paths:
            return None
        unique = sorted(set(paths))
        subject = (
            f"{capability}: {unique[0]}"
            if len(unique) == 1
            else f"{capability}: {len(unique)} files"
        )
        with self._locked() as attempt:
            repo = attempt.repo
            if repo is not None:
                root, _ = repo.work.apply(repo.root, unique)
                if root is not repo.root:
                    self._record(repo, root, author, subject, _collapse(body) if body else None)
        return attempt.problem

    def commit_run(self, command: str, author: Author) -> str | None:
        """Commit what an exec run changed as ``author``; a note when that failed."""
        if not self.enabled:
            return None
        with self._locked() as attempt:
            repo = attempt.repo
            if repo is not None:
                root, found = repo.work.scan(repo.root)
                changed = sorted(set(found))
                if changed:
                    subject = (
                        f"exec: {changed[0]}"
                        if len(changed) == 1
                        else f"exec: {len(changed)} files"
                    )
                    self._record(repo, root, author, subject, _collapse(command))
        return attempt.problem

    def last_author(self, key: str) -> str | None:
        """The author name of the last commit touching ``key`` (None when unknown)."""
        if not self.enabled:
            return None
        done = self._run("log", "-1", "--format=%an", "--", key)
        if done is None or done.returncode != 0:
            return None
        name = done.stdout.decode("utf-8", "replace").strip()
        return name or None

    def log(self) -> list[tuple[str, str, str]]:
        """``(author name, author email, subject)`` of every commit, oldest first."""
        if not self.enabled:
            return []
        done = self._run("log", "--reverse", "--format=%an%x00%ae%x00%s")
        if done is None or done.returncode != 0:
            return []
        rows = []
        for line in done.stdout.decode("utf-8", "replace").splitlines():
            name, email, subject = [*line.split("\x00"), "", "", ""][:3]
            rows.append((name, email, subject))
        return rows


def _stderr(done: subprocess.CompletedProcess[bytes] | None) -> str:
    if done is None:
        return "no answer"
    return done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
