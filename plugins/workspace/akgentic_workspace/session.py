"""One agent's view of one tree: its reads, its observations and the write gate.

A mutation of an existing file is admitted only when the live bytes are exactly what
this agent last saw (``Observation``), checked under the file's lock together with the
write. Every mutation goes through :meth:`WorkspaceSession._mutate`: busy check on the
exec lease, out-of-band commit, path locks, decide and publish, then the agent's commit.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from akgentic.plugin_api import RetriableError
from akgentic_workspace.edits import apply_edit, unified_diff
from akgentic_workspace.files import MAX_FILE_BYTES, Staged, TooLarge, TreeFiles
from akgentic_workspace.journal import HUMAN, OUT_OF_BAND, Author, Journal
from akgentic_workspace.locks import MetaDir
from akgentic_workspace.params import EditItem
from akgentic_workspace.patches import FilePatch, PatchError, apply_hunks, parse_patch
from akgentic_workspace.paths import TreePaths, WorkspaceLocation, normalise_argument
from akgentic_workspace.reading import render_window, split_lines

__all__ = ["DIFF_LINE_CAP", "Observation", "WorkspaceSession", "sha256"]

DIFF_LINE_CAP = 200

_NOT_READ_WRITE = "it already exists and you have not read it — read it before overwriting"
_NOT_READ_EDIT = "it already exists and you have not read it — read it before editing"
_PARTIAL = "you read only part of it"
_CHANGED = "it changed since you read it"
_DELETED = "it was deleted since you read it"
_NO_EXACT = "it changed since you read it and your old_string no longer matches it exactly"
_NO_CONTEXT = "it changed since you read it and none of your patch's context could be found"


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Observation:
    """What an agent last saw of a file: the digest, and whether it saw all of it."""

    sha: str
    full: bool


class _Observations:
    """LRU of canonical key -> Observation; lookups do not refresh recency."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._map: OrderedDict[str, Observation] = OrderedDict()

    def get(self, key: str) -> Observation | None:
        return self._map.get(key)

    def record(self, key: str, data: bytes, full: bool) -> None:
        self._map.pop(key, None)
        self._map[key] = Observation(sha256(data), full)
        while len(self._map) > self.capacity:
            self._map.popitem(last=False)

    def drop(self, key: str) -> None:
        self._map.pop(key, None)

    def under(self, directory: str) -> list[str]:
        prefix = directory + "/" if directory else ""
        return [key for key in self._map if key.startswith(prefix)]

    def clear(self) -> None:
        self._map.clear()


def _decode(key: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RetriableError(
            f"Cannot read {key} as text: byte 0x{data[error.start]:02x} at offset "
            f"{error.start} is not valid UTF-8"
        ) from None


def _with_endings(live: bytes | None, content: str) -> bytes:
    """An existing file keeps its dominant line ending; a new file is verbatim."""
    if live is not None:
        crlf = live.count(b"\r\n")
        if crlf > live.count(b"\n") - crlf:
            content = content.replace("\r\n", "\n").replace("\n", "\r\n")
    return content.encode("utf-8")


class WorkspaceSession:
    """The tools' engine for one card (one agent) over one tree."""

    def __init__(
        self,
        location: WorkspaceLocation,
        *,
        agent_id: str,
        agent_name: str,
        journal: bool,
        max_observations: int = 256,
    ) -> None:
        self.location = location
        self.files = TreeFiles(location.tree)
        self.paths = TreePaths(location.tree)
        self.meta = MetaDir(location.meta_dir)
        self.journal = Journal(location, self.meta, requested=journal)
        self.agent_id = agent_id
        self.agent_name = agent_name
        self.observations = _Observations(max_observations)
        #: Called with the touched keys after each published mutation (never fails it).
        self.mutation_hooks: list[Callable[[list[str]], None]] = []

    @property
    def author(self) -> Author:
        """This agent as a commit author."""
        return Author.agent(self.agent_name, self.agent_id)

    def key(self, path: str) -> str:
        """The canonical key of a path argument (RetriableError when it escapes)."""
        return self.paths.canonical(path)

    # ------------------------------------------------------------ live bytes

    def live(self, key: str) -> bytes | None:
        """The file's bytes now, None when absent; directories and oddities raise."""
        try:
            return self.files.read_bytes(key, MAX_FILE_BYTES)
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise RetriableError(f"Is a directory: {key}") from None
        except NotADirectoryError:
            return None
        except TooLarge as error:
            raise RetriableError(f"{key} is {error.size} bytes, over the 16 MiB limit") from None

    def live_at(self, key: str) -> tuple[bytes | None, int | None]:
        """:meth:`live`, and the file's directory left open for staging (or None).

        One walk of the path serves both the gate's read and the staging; the caller
        passes the descriptor to :meth:`_stage` or closes it.
        """
        parents, name = self.files.split(key)
        try:
            dir_fd = self.files.open_directory(parents)
        except (FileNotFoundError, NotADirectoryError):
            return None, None
        try:
            return self.files.read_bytes_at(dir_fd, name, key, MAX_FILE_BYTES), dir_fd
        except FileNotFoundError:
            return None, dir_fd
        except BaseException as error:
            os.close(dir_fd)
            if isinstance(error, IsADirectoryError):
                raise RetriableError(f"Is a directory: {key}") from None
            if isinstance(error, NotADirectoryError):
                return None, None
            if isinstance(error, TooLarge):
                raise RetriableError(
                    f"{key} is {error.size} bytes, over the 16 MiB limit"
                ) from None
            raise

    # ------------------------------------------------------------ reading

    def read_text(self, path: str, offset: int, limit: int, *, record: bool = True) -> str:
        """Numbered lines of a text file; records what was seen."""
        key = self.key(path)
        try:
            data = self.files.read_bytes(key, MAX_FILE_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            raise RetriableError(f"File not found: {key or path}") from None
        except IsADirectoryError:
            raise RetriableError(f"'{key or '.'}' is a directory; use workspace_list") from None
        except TooLarge as error:
            raise RetriableError(
                f"{key} is {error.size} bytes, over the 16 MiB read limit; search it with "
                "workspace_grep or inspect it with workspace_exec"
            ) from None
        text = _decode(key, data)
        window = render_window(split_lines(text), offset, limit)
        if record:
            self.observations.record(key, data, window.full)
        return window.text

    # ------------------------------------------------------------ the gate

    def _refusal(
        self, key: str, reason: str, live: bytes | None, *, proposed: bytes | None = None
    ) -> RetriableError:
        lines = [f"Refused to modify {key}: {reason}."]
        if live is not None and self.journal.enabled:
            last = self.journal.last_author(key)
            if (last == OUT_OF_BAND.name and reason in (_CHANGED, _PARTIAL)) or (
                last == OUT_OF_BAND.name and "no longer matches" in reason
            ):
                lines.append(
                    "No agent in this team wrote what is there now — it came from outside "
                    "the workspace tools."
                )
            elif last:
                lines.append(f"It was last written by agent '{last}'.")
        if reason == _DELETED:
            lines.append(
                f"Read the file again (it no longer exists: list {key}'s directory), then retry."
            )
        else:
            lines.append(f"Read the file again with workspace_read('{key}'), then retry.")
        if proposed is not None and live is not None:
            diff = unified_diff(
                key,
                live.decode("utf-8", "replace"),
                proposed.decode("utf-8", "replace"),
                "live",
                "proposed",
            )
            lines.extend(diff[:DIFF_LINE_CAP])
            if len(diff) > DIFF_LINE_CAP:
                lines.append(f"... {len(diff) - DIFF_LINE_CAP} more diff line(s) not shown")
        elif live is not None:
            count = len(split_lines(live.decode("utf-8", "replace")))
            lines.append(f"The live file has {count} line(s) and digest {sha256(live)}.")
        return RetriableError("\n".join(lines))

    def _check_replace(
        self, key: str, live: bytes | None, *, proposed: bytes | None, unread_ok: bool
    ) -> None:
        """The write/delete column of the decision table (raises the refusal)."""
        seen = self.observations.get(key)
        if seen is None:
            if live is not None and not unread_ok:
                raise self._refusal(key, _NOT_READ_WRITE, live, proposed=proposed)
            return
        if live is None:
            self.observations.drop(key)
            raise self._refusal(key, _DELETED, None)
        if sha256(live) != seen.sha:
            raise self._refusal(key, _CHANGED, live, proposed=proposed)
        if not seen.full:
            raise self._refusal(key, _PARTIAL, live, proposed=proposed)

    def _edit_mode(self, key: str, live: bytes | None) -> bool:
        """The edit column: returns True when only exact matching is allowed."""
        if live is None:
            if self.observations.get(key) is not None:
                self.observations.drop(key)
                raise self._refusal(key, _DELETED, None)
            raise RetriableError(f"File not found: {key}")
        seen = self.observations.get(key)
        if seen is None:
            raise self._refusal(key, _NOT_READ_EDIT, live)
        return sha256(live) != seen.sha

    def _mutate(
        self,
        capability: str,
        keys: Sequence[str],
        body: Callable[[], tuple[str, list[str]]],
        human: bool,
    ) -> str:
        with self.meta.not_busy(), self._journal_order():
            before = self.journal.commit_out_of_band()
            with self.meta.path_locks(keys):
                result, touched = body()
            after = self.journal.commit(capability, touched, HUMAN if human else self.author)
        for hook in self.mutation_hooks:
            with contextlib.suppress(Exception):  # a hook never fails the mutation
                hook(touched)
        # A journal failure does not fail the change, but it is said, not only logged.
        notes = [note for note in (before, after) if note]
        return "\n".join([result, *notes])

    def _journal_order(self) -> contextlib.AbstractContextManager[None]:
        """With a journal, the whole mutation under its lock: one commit per change, in order.

        Without it, a writer in another process could scan the tree between this write
        and its commit and record the change as ``out-of-band``.
        """
        if self.journal.enabled:
            return self.meta.journal_lock()
        return contextlib.nullcontext()

    def _publish(self, staged: list[Staged]) -> None:
        for index, item in enumerate(staged):
            try:
                self.files.publish(item)
            except RetriableError:
                for rest in staged[index + 1 :]:
                    self.files.discard(rest)
                raise

    def _stage(self, key: str, data: bytes, own: int | None = None) -> Staged:
        try:
            return self.files.stage(key, data, own)
        except IsADirectoryError:
            raise RetriableError(f"Is a directory: {key}") from None
        except NotADirectoryError:
            raise RetriableError(f"Not a directory: a parent of {key} is a file") from None
        except PermissionError as error:
            raise RetriableError(
                f"The change was not published: the operating system denied writing {key} "
                f"({error.strerror}). The path itself is fine."
            ) from None

    # ------------------------------------------------------------ mutations

    def write(self, path: str, content: str, *, human: bool = False) -> str:
        """Create or replace a whole file behind the gate."""
        key = self.key(path)
        if not key:
            raise RetriableError("Is a directory: .")
        if len(content) > MAX_FILE_BYTES or len(content.encode("utf-8")) > MAX_FILE_BYTES:
            raise RetriableError(f"content for {key} is over the 16 MiB write limit")

        def body() -> tuple[str, list[str]]:
            live, dir_fd = self.live_at(key)
            try:
                data = _with_endings(live, content)
                if not human:
                    self._check_replace(key, live, proposed=data, unread_ok=False)
            except BaseException:
                _close(dir_fd)
                raise
            staged = self._stage(key, data, dir_fd)
            self._publish([staged])
            self.observations.record(key, data, True)
            return f"Written: {key}", [key]

        return self._mutate("write", [key], body, human)

    def delete(self, path: str, *, human: bool = False) -> str:
        """Remove a file (a link itself, never its target); no prior read needed."""
        key = self.key_no_final_link(path)
        entry = self.files.entry(key)
        if entry.kind == "dir":
            raise RetriableError(f"Is a directory: {key} — use workspace_rmdir")

        def body() -> tuple[str, list[str]]:
            now = self.files.entry(key)
            if now.kind == "missing":
                if self.observations.get(key) is not None and not human:
                    self.observations.drop(key)
                    raise self._refusal(key, _DELETED, None)
                raise RetriableError(f"File not found: {key}")
            if now.kind == "dir":
                raise RetriableError(f"Is a directory: {key} — use workspace_rmdir")
            if now.kind == "file" and not human:
                self._check_replace(key, self.live(key), proposed=None, unread_ok=True)
            self.files.unlink(key)
            self.observations.drop(key)
            return f"Deleted: {key}", [key]

        return self._mutate("delete", [key], body, human)

    def key_no_final_link(self, path: str) -> str:
        """The key of ``path`` with its parents resolved but its last component kept."""
        normal = normalise_argument(path)
        if not normal:
            return ""
        parent, _, name = normal.rpartition("/")
        parent_key = self.paths.key_of_normal(parent) if parent else ""
        return f"{parent_key}/{name}" if parent_key else name

    def edit(self, path: str, old: str, new: str, replace_all: bool) -> str:
        """One replacement through the cascade (or exact only on a changed file)."""
        key = self.key(path)
        if old == "":
            return "[ERROR] old_string is empty — use workspace_write"

        def decide(live: bytes | None) -> str | tuple[str, str]:
            """The early answer, or the live text and its edited text."""
            exact_only = self._edit_mode(key, live)
            assert live is not None
            text = _decode(key, live)
            outcome = apply_edit(text, old, new, replace_all=replace_all, exact_only=exact_only)
            if outcome.text is None:
                if exact_only and outcome.error == "missing":
                    raise self._refusal(key, _NO_EXACT, live)
                return _edit_error(key, outcome.error, outcome.count)
            if outcome.text == text:
                return f"(no change) {key}"
            return text, outcome.text

        def body() -> tuple[str, list[str]]:
            live, dir_fd = self.live_at(key)
            try:
                decided = decide(live)
            except BaseException:
                _close(dir_fd)
                raise
            if isinstance(decided, str):
                _close(dir_fd)
                return decided, []
            text, edited = decided
            data = edited.encode("utf-8")
            self._publish([self._stage(key, data, dir_fd)])
            self.observations.record(key, data, True)
            return "\n".join(unified_diff(key, text, edited)), [key]

        return self._mutate("edit", [key], body, False)

    def multi_edit(self, edits: Sequence[EditItem]) -> str:
        """Every edit in order over every file, all or nothing."""
        keyed = [(self.key(item.path), item) for item in edits]
        order = list(dict.fromkeys(key for key, _ in keyed))

        def body() -> tuple[str, list[str]]:
            originals: dict[str, str] = {}
            current: dict[str, str] = {}
            exact: dict[str, bool] = {}
            for key, item in keyed:
                if key not in current:
                    live = self.live(key)
                    exact[key] = self._edit_mode(key, live)
                    assert live is not None
                    originals[key] = current[key] = _decode(key, live)
                if item.old_string == "":
                    return "[ERROR] old_string is empty — use workspace_write", []
                outcome = apply_edit(
                    current[key], item.old_string, item.new_string,
                    replace_all=item.replace_all, exact_only=exact[key],
                )  # fmt: skip
                if outcome.text is None:
                    if exact[key] and outcome.error == "missing":
                        raise self._refusal(
                            key,
                            _NO_EXACT,
                            originals[key].encode("utf-8"),
                        )
                    return _edit_error(key, outcome.error, outcome.count), []
                current[key] = outcome.text
            changed = [key for key in order if current[key] != originals[key]]
            if not changed:
                return "(no changes applied)", []
            staged = [self._stage(key, current[key].encode("utf-8")) for key in changed]
            self._publish(staged)
            for key in changed:
                self.observations.record(key, current[key].encode("utf-8"), True)
            diffs = ["\n".join(unified_diff(key, originals[key], current[key])) for key in changed]
            return "\n".join(diffs), changed

        return self._mutate("multi_edit", order, body, False)

    def patch(self, patch_text: str) -> str:
        """Apply a unified diff over one or more files, all or nothing."""
        try:
            sections = parse_patch(patch_text)
        except PatchError as error:
            return (
                f"[ERROR] {error.path}: {error.reason}" if error.path else f"[ERROR] {error.reason}"
            )
        if not sections:
            return "[ERROR] no file patches found"
        keyed: list[tuple[str, FilePatch]] = [(self.key(s.path), s) for s in sections]
        keys = list(dict.fromkeys(key for key, _ in keyed))

        def body() -> tuple[str, list[str]]:
            results: dict[str, bytes | None] = {}
            report: list[str] = []
            for key, section in keyed:
                live = results[key] if key in results else self.live(key)
                pure_add = all(h.pure_add for h in section.hunks)
                if section.deletes:
                    if live is None:
                        raise RetriableError(f"File not found: {key}")
                    self._check_replace(key, live, proposed=None, unread_ok=True)
                    results[key] = None
                    report.append(f"deleted: {key}")
                    continue
                if live is None or (section.creates and pure_add):
                    new_text = "\n".join(t for h in section.hunks for t in h.new_block)
                    tail = section.hunks[-1].new_no_newline if section.hunks else False
                    new_text += "" if tail or not new_text else "\n"
                    if live is not None:
                        self._check_replace(key, live, proposed=new_text.encode(), unread_ok=False)
                    elif not section.creates and not pure_add:
                        raise RetriableError(f"File not found: {key}")
                    results[key] = (
                        _with_endings(live, new_text) if live is not None else new_text.encode()
                    )
                    report.append(f"{'updated' if live is not None else 'created'}: {key}")
                    continue
                exact_only = self._edit_mode(key, live)
                text = _decode(key, live)
                try:
                    updated = apply_hunks(text, section)
                except PatchError as error:
                    if exact_only:
                        raise self._refusal(
                            key,
                            _NO_CONTEXT,
                            live,
                        ) from None
                    return f"[ERROR] {key}: {error.reason}", []
                results[key] = updated.encode("utf-8")
                report.append(f"updated: {key}")
            writes: list[tuple[str, bytes]] = [(k, v) for k, v in results.items() if v is not None]
            self._publish([self._stage(k, data) for k, data in writes])
            for k, data in writes:
                self.observations.record(k, data, True)
            for k in [k for k, v in results.items() if v is None]:
                self.files.unlink(k)
                self.observations.drop(k)
            return "\n".join(report), list(results)

        return self._mutate("patch", keys, body, False)

    def mkdir(self, path: str) -> str:
        """Create a directory and its parents (idempotent); not gated."""
        key = self.key(path)
        with self.meta.not_busy():
            try:
                self.files.make_dirs(key)
            except (NotADirectoryError, FileExistsError):
                raise RetriableError(f"Not a directory: a file is in the way of {key}") from None
        return f"Created: {key or '.'}"

    def rmdir(self, path: str, recursive: bool, force: bool, *, human: bool = False) -> str:
        """Remove a directory, refusing when a view under it is stale (unless forced)."""
        if force and not recursive:
            raise RetriableError("force requires recursive=true")
        key = self.key_no_final_link(path)
        if not key:
            raise RetriableError("Cannot remove the workspace root")
        entry = self.files.entry(key)
        if entry.kind == "link":
            raise RetriableError(f"{key} is a link, not a directory; use workspace_delete")
        if entry.kind == "missing":
            raise RetriableError(f"Directory not found: {key}")
        if entry.kind != "dir":
            raise RetriableError(f"Not a directory: {key} — use workspace_delete")
        viewed = self.observations.under(key)

        def body() -> tuple[str, list[str]]:
            if not recursive:
                try:
                    self.files.remove_empty_dir(key)
                except OSError:
                    raise RetriableError(f"Directory not empty: {key}") from None
                return f"Removed: {key}", [key]
            if not force and not human:
                for view in viewed:
                    live = self.live(view)
                    seen = self.observations.get(view)
                    if seen is not None and (live is None or sha256(live) != seen.sha):
                        raise self._refusal(view, _CHANGED if live is not None else _DELETED, live)
            count = self.files.remove_tree(key)
            for view in viewed:
                self.observations.drop(view)
            suffix = f" ({count} files, forced)" if force else f" ({count} files)"
            return f"Removed: {key}{suffix}", [key]

        return self._mutate("rmdir", viewed, body, human)


def _close(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def _edit_error(key: str, error: str | None, count: int) -> str:
    if error == "ambiguous":
        return (
            f"[ERROR] old_string matches {count} places in {key}; add context or pass "
            "replace_all=true"
        )
    if error == "empty":
        return "[ERROR] old_string is empty — use workspace_write"
    return f"[ERROR] old_string not found in {key}"
