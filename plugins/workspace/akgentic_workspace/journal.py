"""The git journal: a linear history of a tree, kept in its ``<leaf>.git`` sibling.

Opt-in (``git_journal=True``). Every accepted mutation is committed with the agent as
author; whatever changed outside the tools is committed first as ``out-of-band``. The
journal follows the bytes: no failure here ever fails a mutation, and the write gate
is the same with the journal on or off. Without git (or with a broken repository) it
turns itself off with one WARNING.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from akgentic_workspace.locks import MetaDir
from akgentic_workspace.paths import WorkspaceLocation

__all__ = ["HUMAN", "OUT_OF_BAND", "Author", "Journal"]

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


def _collapse(text: str, limit: int = 500) -> str:
    flat = _CONTROL.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[:limit] + " …"


class Journal:
    """One card's journal over one tree; :attr:`enabled` False makes every call a no-op."""

    def __init__(self, location: WorkspaceLocation, meta: MetaDir, *, requested: bool) -> None:
        self.location = location
        self.meta = meta
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

    def _commit_locked(
        self, author: Author, subject: str, body: str | None, paths: Sequence[str] | None
    ) -> bool:
        spec = ["--", *paths] if paths is not None else []
        added = self._run("add", "-A", *spec)
        if added is None:
            return False
        if added.returncode != 0:
            log.warning("git add failed in %s: %s", self.location.relative, _stderr(added))
            return False
        message = subject + (f"\n\n{body}" if body else "") + "\n"
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".msg", delete=False) as f:
            f.write(message)
        try:
            args = ["commit", "--quiet", "--no-verify", "-F", f.name]
            if paths is not None:
                args += ["--", *paths]
            done = self._run(*args, author=author)
        finally:
            os.unlink(f.name)
        if done is None:
            return False
        if done.returncode != 0:
            text = (done.stdout + done.stderr).decode("utf-8", "replace")
            if "nothing to commit" in text or "nothing added" in text or "no changes added" in text:
                return False
            if "did not match any file" in text:
                return False
            log.warning("git commit failed in %s: %s", self.location.relative, text.strip())
            return False
        return True

    # ------------------------------------------------------------ public

    def dirty_paths(self) -> list[str]:
        """Paths that differ from the last commit (renames give the new name)."""
        if not self.enabled:
            return []
        status = self._run("status", "--porcelain", "-uall", "-z")
        if status is None or status.returncode != 0:
            return []
        fields = status.stdout.decode("utf-8", "replace").split("\x00")
        paths, skip = [], False
        for item in fields:
            if skip:
                skip = False
                continue
            if len(item) < 4:
                continue
            code, path = item[:2], item[3:]
            if "R" in code or "C" in code:
                skip = True  # the next field is the old name
            paths.append(path)
        return paths

    def commit_out_of_band(self) -> None:
        """Commit whatever changed outside the tools, as ``out-of-band``."""
        if not self.enabled:
            return
        with self.meta.journal_lock():
            if self.dirty_paths():
                self._commit_locked(
                    OUT_OF_BAND, "out-of-band: changes from outside the tools", None, None
                )

    def commit(
        self, capability: str, paths: Sequence[str], author: Author, body: str | None = None
    ) -> None:
        """Commit exactly ``paths`` as ``author`` (``<cap>: <path>`` / ``<cap>: <n> files``)."""
        if not self.enabled or not paths:
            return
        unique = sorted(set(paths))
        subject = (
            f"{capability}: {unique[0]}"
            if len(unique) == 1
            else f"{capability}: {len(unique)} files"
        )
        with self.meta.journal_lock():
            self._commit_locked(author, subject, _collapse(body) if body else None, unique)

    def commit_run(self, command: str, author: Author) -> int:
        """Commit what an exec run changed as ``author``; returns how many paths."""
        if not self.enabled:
            return 0
        with self.meta.journal_lock():
            changed = self.dirty_paths()
            if not changed:
                return 0
            subject = f"exec: {changed[0]}" if len(changed) == 1 else f"exec: {len(changed)} files"
            self._commit_locked(author, subject, _collapse(command), None)
            return len(changed)

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
