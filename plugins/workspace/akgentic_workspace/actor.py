"""The ``#Workspace-<scope>/<kind>/<leaf>`` tool actor: exec's and retrieval's owner in a team.

Created by a card whose exec or retrieval is enabled, one per (team, tree). It holds no
workspace state of its own (an empty ``BaseState``, no events): the tree, its journal
and its index are the durable state, and the lease orders two actors over one tree.
Every method is O(1) on the actor's thread; commands run on the service's worker.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from akgentic.plugin_api import Akgent, BaseConfig, BaseState
from akgentic_workspace.execution import ExecConfig, ExecService, RunHandle
from akgentic_workspace.paths import WorkspaceLocation

__all__ = ["ACTOR_PREFIX", "TOOL_ACTOR_ROLE", "WorkspaceActor", "WorkspaceConfig", "location_of"]

ACTOR_PREFIX = "#Workspace-"
TOOL_ACTOR_ROLE = "ToolActor"


class WorkspaceConfig(BaseConfig):
    """Name, role and the absolute path of the tree the actor serves."""

    workspace_path: str = ""


def location_of(tree: str) -> WorkspaceLocation:
    """The location of an absolute tree path ``<root>/<scope>/<kind>/<leaf>``."""
    path = Path(tree)
    return WorkspaceLocation(path.parents[2], path.parents[1].name, path.parent.name, path.name)


class WorkspaceActor(Akgent[WorkspaceConfig, BaseState]):
    """Owns the :class:`~akgentic_workspace.execution.ExecService` of one tree."""

    def on_start(self) -> None:
        """Build the service for the configured tree."""
        super().on_start()
        self._service = ExecService(location_of(self.config.workspace_path))

    def on_stop(self) -> None:
        """Kill a running command, close the backend, release the lease."""
        pipeline = getattr(self, "_rag", None)
        if pipeline is not None:
            pipeline.close()
        service = getattr(self, "_service", None)
        if service is not None:
            service.close()
        super().on_stop()

    def configure_exec(self, config: ExecConfig) -> None:
        """Per-card exec settings (a tell; last writer wins)."""
        self._service.configure(config)

    def attach(self, agent_id: str, name: str) -> bool:
        """Register an agent's display name (an ask)."""
        self._service.attach(agent_id, name)
        return True

    def request_exec(
        self, agent_id: str, command: str, cwd: str, as_human: bool
    ) -> RunHandle | str:
        """Start a run or say why not (see ExecService.request)."""
        return self._service.request(agent_id, command, cwd, as_human)

    def exec_status(self, agent_id: str, run_id: str) -> RunHandle | str:
        """The caller's own run, or the unknown-id message."""
        return self._service.handle(agent_id, run_id)

    # ------------------------------------------------------------ retrieval

    def rag_configure(self, settings: Any) -> None:
        """Per-card retrieval settings (a tell; last writer wins); drains at once."""
        from akgentic_workspace.rag.context import RagContext
        from akgentic_workspace.rag.pipeline import RagPipeline

        ctx = RagContext(settings)
        pipeline = getattr(self, "_rag", None)
        if pipeline is None:
            me = self.proxy_tell(self.myAddress, WorkspaceActor)
            self._rag = RagPipeline(ctx, me.rag_post, owner=self)
        else:
            pipeline.ctx = ctx
        self._rag.drain()

    def rag_post(self, work: Any) -> None:
        """Run a worker's report on this actor's thread."""
        work()

    def rag_drain(self) -> None:
        """Claim pending files and feed the workers (a tell)."""
        pipeline = getattr(self, "_rag", None)
        if pipeline is not None:
            pipeline.drain()

    def rag_written(self, keys: list[str]) -> None:
        """``reindex_on_write``: re-index these paths after the quiet period."""
        pipeline = getattr(self, "_rag", None)
        if pipeline is not None:
            pipeline.written(list(keys))

    def rag_busy(self) -> bool:
        """Whether the pipeline has work in flight (an ask)."""
        pipeline = getattr(self, "_rag", None)
        return pipeline is not None and pipeline.busy()

    def new_files(self, message: Any) -> None:
        """An upload handler's :class:`NewFileMessage` (told): queue and drain, never raise."""
        from akgentic_workspace.rag.uploads import queue_upload

        queue_upload(getattr(self, "_rag", None), self.config.workspace_path, message)
