"""``WorkspaceTool``: the team filesystem card (files behind a write gate, journal, exec)."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from typing import Any

from pydantic import Field, PrivateAttr, field_validator, model_validator

from akgentic.plugin_api import (
    COMMAND,
    LLM_CONTEXT,
    TOOL_CALL,
    Capability,
    CapabilityCard,
    RestOfLine,
    RetriableError,
    VectorStoreParam,
)
from akgentic_workspace import documents, oserrors
from akgentic_workspace.actor import ACTOR_PREFIX, TOOL_ACTOR_ROLE, WorkspaceActor, WorkspaceConfig
from akgentic_workspace.execution import (
    ExecConfig,
    ExecService,
    RunHandle,
    check_cwd,
    status_of,
    wait_for_run,
)
from akgentic_workspace.files import MAX_FILE_BYTES, TooLarge, TreeFiles
from akgentic_workspace.listing import render_list
from akgentic_workspace.params import (
    DocumentReader,
    EditItem,
    ExpandMediaRefs,
    Resource,
    WorkspaceAttached,
    WorkspaceDelete,
    WorkspaceEdit,
    WorkspaceExec,
    WorkspaceGlob,
    WorkspaceGrep,
    WorkspaceList,
    WorkspaceMkdir,
    WorkspaceMultiEdit,
    WorkspacePatch,
    WorkspaceRead,
    WorkspaceRmdir,
    WorkspaceView,
    WorkspaceWrite,
    _ExecResultCommand,
)
from akgentic_workspace.paths import (
    SHARED_SCOPE,
    WorkspaceLocation,
    check_leaf,
    check_scope,
    metadata_leaf,
    permitted_shared_kinds,
    validate_workspace_id,
    workspaces_root,
)
from akgentic_workspace.rag.models import WorkspaceRagIndex, WorkspaceRagList, WorkspaceRagSearch
from akgentic_workspace.reading import checked_patterns, render_glob, render_grep
from akgentic_workspace.session import WorkspaceSession

__all__ = ["WorkspaceTool"]

log = logging.getLogger("akgentic_workspace")


class WorkspaceTool(CapabilityCard):
    """Read and write a tree shared by the team, behind a write gate; optional journal, exec.

    A tree is ``<AKGENTIC_WORKSPACES_ROOT>/<scope>/<kind>/<leaf>``: the team's own
    (``_team``), a named one (``workspace_id``), or one keyed by team metadata. A
    mutation of an existing file is admitted only while the file is exactly what this
    agent last read; refusals are RetriableErrors carrying a diff and the next step.
    """

    workspace_id: str | None = None
    workspace_metadata_keys: list[str] = Field(default_factory=list)
    workspace_sharable: bool = False
    read_only: bool = False
    workspace_read: WorkspaceRead | bool = True
    workspace_view: WorkspaceView | bool = True
    workspace_list: WorkspaceList | bool = True
    workspace_glob: WorkspaceGlob | bool = True
    workspace_grep: WorkspaceGrep | bool = True
    expand_media_refs: ExpandMediaRefs | bool = True
    workspace_write: WorkspaceWrite | bool = True
    workspace_delete: WorkspaceDelete | bool = True
    workspace_edit: WorkspaceEdit | bool = True
    workspace_multi_edit: WorkspaceMultiEdit | bool = True
    workspace_patch: WorkspacePatch | bool = True
    workspace_mkdir: WorkspaceMkdir | bool = True
    workspace_rmdir: WorkspaceRmdir | bool = True
    workspace_exec: WorkspaceExec | bool = False
    git_journal: bool = False
    resources: list[Resource] = Field(default_factory=list)
    max_observations_per_agent: int = Field(default=256, ge=1)
    workspace_rag_index: WorkspaceRagIndex | bool = False
    workspace_rag_list: WorkspaceRagList | bool = False
    workspace_rag_search: WorkspaceRagSearch | bool = False
    vector_store: VectorStoreParam | bool = True
    max_documents: int | None = Field(default=None, ge=1)
    max_document_chars: int | None = Field(default=None, ge=1)

    _rag: Any = PrivateAttr(default=None)
    _session: WorkspaceSession | None = PrivateAttr(default=None)
    _exec_local: ExecService | None = PrivateAttr(default=None)
    _exec_actor: Any = PrivateAttr(default=None)

    @field_validator("workspace_id")
    @classmethod
    def _valid_id(cls, value: str | None) -> str | None:
        return None if value is None else validate_workspace_id(value)

    @model_validator(mode="after")
    def _one_layout(self) -> WorkspaceTool:
        if self.workspace_id is not None and self.workspace_metadata_keys:
            raise ValueError("workspace_id and workspace_metadata_keys are exclusive: set one")
        return self

    # ------------------------------------------------------------ binding

    def _exec_param(self) -> WorkspaceExec | None:
        if self.read_only:
            return None
        return self._param(self.workspace_exec, WorkspaceExec)

    def _exec_served(self) -> bool:
        param = self._exec_param()
        return param is not None and bool(param.expose & {TOOL_CALL, COMMAND})

    def _rag_on(self) -> bool:
        """Retrieval is on when any of its three capabilities resolves."""
        return any(
            self._param(value, cls) is not None
            for value, cls in (
                (self.workspace_rag_index, WorkspaceRagIndex),
                (self.workspace_rag_list, WorkspaceRagList),
                (self.workspace_rag_search, WorkspaceRagSearch),
            )
        )

    def _bind_rag(self, observer: Any, location: WorkspaceLocation) -> None:
        from akgentic_workspace.rag.service import StaleMarker, bind_retrieval

        session = self._session
        if session is None:
            return
        if not self._rag_on():
            session.mutation_hooks.append(StaleMarker(location.meta_dir))
            return
        actor = self._exec_actor
        orchestrator = getattr(observer, "orchestrator", None)
        if actor is None and orchestrator is not None:
            actor_config = WorkspaceConfig(
                name=f"{ACTOR_PREFIX}{location.relative}",
                role=TOOL_ACTOR_ROLE,
                workspace_path=str(location.tree),
            )
            created = observer.proxy_ask(orchestrator).getChildrenOrCreate(
                WorkspaceActor, config=actor_config
            )
            actor = observer.proxy_ask(created)
        reader = self._reader().document_reader
        self._rag = bind_retrieval(
            observer=observer,
            location=location,
            index=self._param(self.workspace_rag_index, WorkspaceRagIndex) or WorkspaceRagIndex(),
            search_param=self._param(self.workspace_rag_search, WorkspaceRagSearch)
            or WorkspaceRagSearch(),
            listing=self._param(self.workspace_rag_list, WorkspaceRagList) or WorkspaceRagList(),
            vector_store=self.vector_store,
            read_only=self.read_only,
            docs_enabled=reader is not False,
            actor_address=actor,
        )
        session.mutation_hooks.append(StaleMarker(location.meta_dir, self._rag))

    def observer(self, observer: Any) -> WorkspaceTool:
        """Bind to the tree: resolve it, gate sharing, create it, seed it, set up exec."""
        super().observer(observer)
        location = self._locate(observer)
        location.tree.mkdir(parents=True, exist_ok=True, mode=0o700)
        # private to this user: a sandbox run writes here as this user (root, in CI)
        tree_stat = location.tree.lstat()
        if stat.S_ISDIR(tree_stat.st_mode) and tree_stat.st_uid == os.geteuid():
            location.tree.chmod(0o700)
        files = TreeFiles(location.tree)
        files.sweep_staging()
        exec_spec = None
        param = self._exec_param()
        if self._exec_served() and param is not None:
            from akgentic.plugin_api import current_registry, resolve_sandbox_backend

            exec_spec = resolve_sandbox_backend(
                param.backend, specs=current_registry().sandbox_backends()
            )
        for resource in self.resources:
            if files.entry(resource.file_name).kind == "missing":
                files.publish(files.stage(resource.file_name, resource.data))
        address = observer.myAddress
        agent_id, agent_name = str(address.agent_id), address.name
        observer.notify_event(
            WorkspaceAttached(agent_id=address.agent_id, workspace_path=location.relative)
        )
        self._session = WorkspaceSession(
            location,
            agent_id=agent_id,
            agent_name=agent_name,
            journal=self.git_journal,
            max_observations=self.max_observations_per_agent,
        )
        if exec_spec is not None and param is not None:
            config = ExecConfig(
                backend_name=exec_spec.name,
                factory=exec_spec.factory,
                budget_s=param.budget_s,
                limits=param.limits,
                env=dict(param.env),
                journal=self._session.journal,
            )
            orchestrator = getattr(observer, "orchestrator", None)
            if orchestrator is not None:
                actor_config = WorkspaceConfig(
                    name=f"{ACTOR_PREFIX}{location.relative}",
                    role=TOOL_ACTOR_ROLE,
                    workspace_path=str(location.tree),
                )
                proxy = observer.proxy_ask(orchestrator)
                actor = proxy.getChildrenOrCreate(WorkspaceActor, config=actor_config)
                self._exec_actor = observer.proxy_ask(actor)
                self._exec_actor.configure_exec(config)
                self._exec_actor.attach(agent_id, agent_name)
            else:
                # No team to host an actor (unit tests, the contract kit): the card owns it.
                service = ExecService(location)
                service.configure(config)
                service.attach(agent_id, agent_name)
                self._exec_local = service
        self._bind_rag(observer, location)
        return self

    def _locate(self, observer: Any) -> WorkspaceLocation:
        user = getattr(observer, "user_id", None)
        scope = "anonymous" if user is None else str(user)
        check_scope(scope)
        if self.workspace_id is not None:
            kind, leaf = "_id", self.workspace_id
        elif self.workspace_metadata_keys:
            orchestrator = getattr(observer, "orchestrator", None)
            metadata = None
            if orchestrator is not None:
                metadata = observer.proxy_ask(orchestrator).get_metadata()
            kind, leaf = "_meta", metadata_leaf(self.workspace_metadata_keys, metadata)
        else:
            kind, leaf = "_team", str(observer.team_id)
        check_leaf(leaf)
        permitted = permitted_shared_kinds()  # an invalid value fails every bind
        if self.workspace_sharable:
            if kind not in permitted:
                raise ValueError(
                    f"this workspace asks to be shared, but AKGENTIC_WORKSPACE_SHARED_KINDS "
                    f"does not permit '{kind[1:]}' workspaces on this platform"
                )
            scope = SHARED_SCOPE
        return WorkspaceLocation(workspaces_root(), scope, kind, leaf)

    def _engine(self) -> WorkspaceSession:
        _ = self._observer  # raises ToolObserverGone before binding and once the agent is gone
        if self._session is None:
            raise RuntimeError("WorkspaceTool used before observer() bound it to a tree")
        return self._session

    # ------------------------------------------------------------ read side

    def _reader(self) -> WorkspaceRead:
        return self._param(self.workspace_read, WorkspaceRead) or WorkspaceRead()

    def _read(self, path: str, offset: int, limit: int, force: bool, *, documents_ok: bool) -> str:
        engine = self._engine()
        ext = os.path.splitext(path)[1].lower()
        if documents_ok and ext in DocumentReader.extensions:
            key = engine.key(path)
            try:
                data = engine.files.read_bytes(key, MAX_FILE_BYTES)
            except (FileNotFoundError, NotADirectoryError):
                raise RetriableError(f"File not found: {key}") from None
            except IsADirectoryError:
                raise RetriableError(f"'{key}' is a directory; use workspace_list") from None
            except TooLarge:
                raise RetriableError(f"{key} is over the 16 MiB read limit") from None
            reader = self._reader().document_reader
            text = documents.extract_document(
                engine.meta.path / "cache", key, ext, data, enabled=reader is not False, force=force
            )
            from akgentic_workspace.reading import render_window, split_lines

            return render_window(split_lines(text), offset, limit).text
        return engine.read_text(path, offset, limit)

    def _view(self, path: str) -> Any:
        from pydantic_ai.messages import BinaryContent

        engine = self._engine()
        ext = os.path.splitext(path)[1].lower()
        if ext not in documents.IMAGE_TYPES:
            raise RetriableError(
                f"Unsupported image format '{ext or path}': workspace_view shows "
                f"{', '.join(sorted(documents.IMAGE_TYPES))}; use workspace_read for other files"
            )
        key = engine.key(path)
        try:
            data = engine.files.read_bytes(key, documents.MAX_IMAGE_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            raise RetriableError(f"File not found: {key}") from None
        except TooLarge:
            raise RetriableError(f"{key} is over the 20 MiB image limit") from None
        view = self._param(self.workspace_view, WorkspaceView) or WorkspaceView()
        data = documents.resized_image(engine.meta.path / "cache", ext, data, view.max_dimension)
        return BinaryContent(data=data, media_type=documents.IMAGE_TYPES[ext])

    # ------------------------------------------------------------ capabilities

    def capabilities(self) -> list[Capability]:
        """Every tool and command, in the documented order, each gated by its param.

        The two surfaces of a capability differ on purpose: a tool takes the model's
        arguments and raises RetriableError; a command reads a short line a person typed
        and answers refusals as text (:meth:`_as_text`).
        """
        capabilities = [
            Capability("workspace_read", self._read_tool, self._read_command),
            Capability("workspace_list", self._list_tool, self._list_command),
            Capability("workspace_glob", self._glob_tool, self._glob_command),
            Capability("workspace_grep", self._grep_tool, self._grep_command),
            Capability("workspace_view", self._view_tool),
            Capability("expand_media_refs", command=self._media_command),
        ]
        if self._rag_on():
            from akgentic_workspace.rag.card_tools import rag_capabilities

            capabilities.extend(rag_capabilities(self))
        if self.read_only:
            return capabilities
        capabilities.extend(
            [
                Capability("workspace_write", self._write_tool, self._write_command),
                Capability("workspace_delete", self._delete_tool, self._delete_command),
                Capability("workspace_edit", self._edit_tool),
                Capability("workspace_multi_edit", self._multi_edit_tool),
                Capability("workspace_patch", self._patch_tool),
                Capability("workspace_mkdir", self._mkdir_tool, self._mkdir_command),
                Capability("workspace_rmdir", self._rmdir_tool, self._rmdir_command),
                Capability("workspace_exec", self._exec_tool, self._exec_command),
                # One field, two commands: the second is keyed by a subclass of its param.
                Capability(
                    "workspace_exec",
                    self._exec_result_tool,
                    self._exec_result_command,
                    name="workspace_exec_result",
                    command_key=_ExecResultCommand,
                ),
            ]
        )
        return capabilities

    def get_tools(self) -> list[Callable[..., Any]]:
        """The model's tools; each maps the host's OSErrors to RetriableErrors."""
        return [oserrors.tool_errors(tool) for tool in super().get_tools()]  # the one mapping

    @staticmethod
    def _as_text(func: Callable[[], str]) -> str:
        try:
            return func()
        except RetriableError as error:
            return str(error)
        except OSError as error:
            return oserrors.describe_os_error(error)

    # ------------------------------------------------------------ read side: builders

    def _read_tool(self, param: WorkspaceRead) -> Callable[..., str]:
        limit_default, force_default = param.default_limit, param.force_document_regeneration

        def workspace_read(
            path: str,
            offset: int = 1,
            limit: int = limit_default,
            force_document_regeneration: bool = force_default,
        ) -> str:
            """Read a file of the workspace as numbered lines.

            Read a file before changing it: writes, edits and deletes of a file you
            have not read (or that changed since) are refused. PDF and Office files
            come back as Markdown.

            Args:
                path: Path relative to the workspace root.
                offset: First line to show (1-based).
                limit: How many lines to show.
                force_document_regeneration: Re-extract a document even if cached.
            """
            return self._read(path, offset, limit, force_document_regeneration, documents_ok=True)

        return workspace_read

    def _read_command(self, param: WorkspaceRead) -> Callable[..., str]:
        limit = param.default_limit

        def workspace_read(filepath: str) -> str:
            """Show a text file of the workspace (first lines)."""
            return self._as_text(lambda: self._read(filepath, 1, limit, False, documents_ok=False))

        return workspace_read

    def _list_tool(self, param: WorkspaceList) -> Callable[..., str]:
        depth_default, page_size = param.max_depth, param.max_entries

        def workspace_list(path: str = "", depth: int = depth_default, offset: int = 0) -> str:
            """List a directory of the workspace (depth 0 = the whole tree).

            Long listings come in pages; the last line of a page says which offset
            shows the next one. Unusual names are shown quoted, with escapes.

            Args:
                path: Directory relative to the workspace root ("" is the root).
                depth: Levels to show; 1 lists the directory itself.
                offset: Entries to skip (the offset a capped listing gives).
            """
            engine = self._engine()
            return render_list(engine.files, engine.key(path), depth, offset, page_size)

        return workspace_list

    def _list_command(self, param: WorkspaceList) -> Callable[..., str]:
        depth, page_size = param.max_depth, param.max_entries

        def workspace_list(path: str = "") -> str:
            """List a directory of the workspace."""
            engine = self._engine()
            return self._as_text(
                lambda: render_list(engine.files, engine.key(path), depth, 0, page_size)
            )

        return workspace_list

    def _glob_tool(self, param: WorkspaceGlob) -> Callable[..., str]:
        glob_max = param.max_results

        def workspace_glob(pattern: str, path: str = "") -> str:
            """Find files by glob pattern (``**/*.py``, ``src/{a,b}/*.md``), newest first.

            Args:
                pattern: Glob relative to ``path``; case-insensitive.
                path: Directory to search from.
            """
            engine = self._engine()
            return render_glob(engine.files, pattern, engine.key(path), glob_max)

        return workspace_glob

    def _glob_command(self, param: WorkspaceGlob) -> Callable[..., str]:
        glob_max = param.max_results

        def workspace_glob(pattern: str) -> str:
            """Find workspace files by glob pattern."""
            engine = self._engine()
            return self._as_text(lambda: render_glob(engine.files, pattern, "", glob_max))

        return workspace_glob

    def _grep_tool(self, param: WorkspaceGrep) -> Callable[..., str]:
        grep_max, grep_line = param.max_results, param.max_line_length

        def workspace_grep(pattern: str, path: str = "", include: str = "") -> str:
            """Search file contents with a regular expression (RE2 syntax, linear time).

            Args:
                pattern: The regular expression, matched per line; no backreferences
                    or lookaround.
                path: File or directory to search.
                include: Only files matching this glob (``*.py``).
            """
            engine = self._engine()
            return render_grep(
                engine.files, pattern, engine.key(path), include, grep_max, grep_line
            )

        return workspace_grep

    def _grep_command(self, param: WorkspaceGrep) -> Callable[..., str]:
        grep_max, grep_line = param.max_results, param.max_line_length

        def workspace_grep(pattern: str) -> str:
            """Search workspace file contents with a regular expression."""
            engine = self._engine()
            return self._as_text(
                lambda: render_grep(engine.files, pattern, "", "", grep_max, grep_line)
            )

        return workspace_grep

    def _view_tool(self, param: WorkspaceView) -> Callable[..., Any]:
        def workspace_view(path: str) -> Any:
            """Look at an image of the workspace (png, jpg, jpeg, gif, webp, bmp).

            Args:
                path: Image path relative to the workspace root.
            """
            return self._view(path)

        return workspace_view

    def _media_command(self, param: ExpandMediaRefs) -> Callable[..., list[Any]]:
        def expand_media_refs(prompt: str) -> list[Any]:
            """Replace ``!!pattern`` tokens of a prompt with the matching workspace images."""
            return self._expand_media(prompt)

        return expand_media_refs

    # ------------------------------------------------------------ write side: builders

    def _write_tool(self, param: WorkspaceWrite) -> Callable[..., str]:
        def workspace_write(path: str, content: str) -> str:
            """Create or overwrite a whole file (parents are created).

            Overwriting needs a full, current read of the file first.

            Args:
                path: Path relative to the workspace root.
                content: The complete new content.
            """
            return self._engine().write(path, content)

        return workspace_write

    def _write_command(self, param: WorkspaceWrite) -> Callable[..., str]:
        def workspace_write(filepath: str, content: RestOfLine) -> str:
            """Write a file of the workspace with the rest of the line as its content."""
            engine = self._engine()

            def run() -> str:
                engine.write(filepath, content, human=True)
                return f"Written: {engine.key(filepath)} ({len(content.encode())} bytes)"

            return self._as_text(run)

        return workspace_write

    def _delete_tool(self, param: WorkspaceDelete) -> Callable[..., str]:
        def workspace_delete(path: str) -> str:
            """Delete a file (a link is removed, never its target).

            Args:
                path: Path relative to the workspace root.
            """
            return self._engine().delete(path)

        return workspace_delete

    def _delete_command(self, param: WorkspaceDelete) -> Callable[..., str]:
        def workspace_delete(filepath: str) -> str:
            """Delete a file of the workspace."""
            return self._as_text(lambda: self._engine().delete(filepath, human=True))

        return workspace_delete

    def _edit_tool(self, param: WorkspaceEdit) -> Callable[..., str]:
        def workspace_edit(
            path: str, old_string: str, new_string: str, replace_all: bool = False
        ) -> str:
            """Replace ``old_string`` by ``new_string`` in a file you have read.

            ``old_string`` must identify one place (add surrounding lines), or pass
            ``replace_all=true``. Returns the unified diff.

            Args:
                path: Path relative to the workspace root.
                old_string: The text to replace, as in the file.
                new_string: The replacement.
                replace_all: Replace every occurrence.
            """
            return self._engine().edit(path, old_string, new_string, replace_all)

        return workspace_edit

    def _multi_edit_tool(self, param: WorkspaceMultiEdit) -> Callable[..., str]:
        def workspace_multi_edit(edits: list[EditItem]) -> str:
            """Apply several edits, over one or more files, all or nothing.

            Later edits see the result of earlier ones.

            Args:
                edits: Each with path, old_string, new_string, replace_all.
            """
            return self._engine().multi_edit([EditItem.model_validate(e) for e in edits])

        return workspace_multi_edit

    def _patch_tool(self, param: WorkspacePatch) -> Callable[..., str]:
        def workspace_patch(patch_text: str) -> str:
            """Apply a unified diff (``--- a/x`` / ``+++ b/x`` / ``@@`` hunks), all or nothing.

            ``--- /dev/null`` creates a file, ``+++ /dev/null`` deletes one.

            Args:
                patch_text: The unified diff.
            """
            return self._engine().patch(patch_text)

        return workspace_patch

    def _mkdir_tool(self, param: WorkspaceMkdir) -> Callable[..., str]:
        def workspace_mkdir(path: str) -> str:
            """Create a directory and its parents.

            Args:
                path: Directory relative to the workspace root.
            """
            return self._engine().mkdir(path)

        return workspace_mkdir

    def _mkdir_command(self, param: WorkspaceMkdir) -> Callable[..., str]:
        def workspace_mkdir(path: str) -> str:
            """Create a directory of the workspace."""
            return self._as_text(lambda: self._engine().mkdir(path))

        return workspace_mkdir

    def _rmdir_tool(self, param: WorkspaceRmdir) -> Callable[..., str]:
        if param.allow_recursive:

            def workspace_rmdir(path: str, recursive: bool = False, force: bool = False) -> str:
                """Remove a directory (``recursive`` for a non-empty one).

                Pass ``force`` only when the user explicitly asked for it: it removes
                files changed since you read them.

                Args:
                    path: Directory relative to the workspace root.
                    recursive: Remove everything under it too.
                    force: Skip the check of files you read (user's explicit request).
                """
                return self._engine().rmdir(path, recursive, force)

            return workspace_rmdir

        def workspace_rmdir_flat(path: str) -> str:  # served as workspace_rmdir
            """Remove an empty directory.

            Args:
                path: Directory relative to the workspace root.
            """
            return self._engine().rmdir(path, False, False)

        return workspace_rmdir_flat

    def _rmdir_command(self, param: WorkspaceRmdir) -> Callable[..., str]:
        recursive = param.allow_recursive

        def workspace_rmdir(path: str) -> str:
            """Remove a directory of the workspace."""
            return self._as_text(lambda: self._engine().rmdir(path, recursive, False, human=True))

        return workspace_rmdir

    # ------------------------------------------------------------ exec

    def _exec(self, command: str, cwd: str, *, human: bool) -> str:
        engine = self._engine()
        param = self._exec_param() or WorkspaceExec()
        key = engine.key(cwd)
        check_cwd(engine.location.tree, key)
        started = self._exec_call("request_exec", engine.agent_id, command, key, human)
        if isinstance(started, str):
            return started
        return wait_for_run(started, param.poll_attempts, param.poll_delay_seconds)

    def _exec_result(self, run_id: str) -> str:
        engine = self._engine()
        return status_of(self._exec_call("exec_status", engine.agent_id, run_id))

    def _exec_call(self, method: str, *args: Any) -> RunHandle | str:
        if self._exec_local is not None:
            local = self._exec_local
            call = local.request if method == "request_exec" else local.handle
            return call(*args)
        if self._exec_actor is None:
            raise RetriableError("workspace exec is not available for this agent")
        result: RunHandle | str = getattr(self._exec_actor, method)(*args)
        return result

    def _exec_tool(self, param: WorkspaceExec) -> Callable[..., str]:
        def workspace_exec(cmd: str, cwd: str = "") -> str:
            """Run one command in a sandbox over the workspace (mounted at /workspace).

            The command is split like a shell would quote it but NO shell runs it:
            ``&&``, ``|``, ``>`` and ``$VAR`` stay literal — wrap them in
            ``bash -c '...'``. Allowed programs: python, python3, pytest, ruff, mypy, uv,
            pip, node, npm, npx, sh, bash, cat, echo, ls, cp, mv, rm, rmdir, mkdir, find,
            grep, sed, awk, jq, wc, xargs, touch, make, git, kill, curl, wget. No network
            unless the team enabled it. While it runs, nobody can change the workspace.

            Args:
                cmd: The command line.
                cwd: Working directory relative to the workspace root.
            """
            return self._exec(cmd, cwd, human=False)

        return workspace_exec

    def _exec_command(self, param: WorkspaceExec) -> Callable[..., str]:
        def workspace_exec(command: RestOfLine) -> str:
            """Run a shell line in the sandbox (as ``bash -c <line>``)."""
            import shlex

            return self._as_text(
                lambda: self._exec(f"bash -c {shlex.quote(command)}", "", human=True)
            )

        return workspace_exec

    def _exec_result_tool(self, param: WorkspaceExec) -> Callable[..., str]:
        def workspace_exec_result(run_id: str) -> str:
            """Collect the output of one of your runs that was still in progress.

            Args:
                run_id: The id the in-progress message gave.
            """
            return self._exec_result(run_id)

        return workspace_exec_result

    def _exec_result_command(self, param: WorkspaceExec) -> Callable[..., str]:
        def workspace_exec_result(run_id: str) -> str:
            """Collect the output of a run still in progress."""
            return self._as_text(lambda: self._exec_result(run_id))

        return workspace_exec_result

    def _expand_media(self, prompt: str) -> list[Any]:
        import re

        engine = self._engine()
        out: list[Any] = []
        pos = 0
        for match in re.finditer(r'!!(?:"([^"]+)"|(\S+))', prompt):
            out.append(prompt[pos : match.start()])
            pattern = match.group(1) or match.group(2)
            token = match.group(0)
            pos = match.end()
            try:
                checked_patterns(pattern)
            except RetriableError as error:
                out.append(f"{token} [Error: {error}]")
                continue
            found = render_glob(engine.files, pattern, "", 1000)
            keys = [] if found == "No files found." else sorted(found.splitlines())
            images = [k for k in keys if os.path.splitext(k)[1].lower() in documents.IMAGE_TYPES]
            if images:
                out.extend(self._view(k) for k in images)
            elif any(os.path.splitext(k)[1].lower() in DocumentReader.extensions for k in keys):
                out.append(f"{token} [=> Use workspace_read tool]")
            else:
                out.append(f"{token} [Error: no image found in the workspace]")
        out.append(prompt[pos:])
        return [piece for piece in out if piece != ""]

    # ------------------------------------------------------------ hooks

    def get_system_prompts(self) -> list[Callable[[], str]]:
        """None: the tools' docstrings teach the model."""
        return []

    def get_context_states(self) -> list[Callable[[], Any]]:
        """The retrieval index's state (``workspace_rag_list`` on LLM_CONTEXT)."""
        listing = self._param(self.workspace_rag_list, WorkspaceRagList, LLM_CONTEXT)
        if listing is None:
            return []
        rows = listing.max_rows_shown

        def workspace_rag_list() -> Any:
            front = self._rag
            if front is None:
                return None
            try:
                from akgentic_workspace.rag.searching import index_state

                return index_state(front.ctx, rows)
            except Exception:  # a provider never raises
                return None

        return [workspace_rag_list]
