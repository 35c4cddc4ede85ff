"""The ``#Workspace-<scope>/<kind>/<leaf>`` tool actor: exec's owner within a team.

Created only by a card whose exec is enabled, one per (team, tree). It holds no
workspace state of its own (an empty ``BaseState``, no events): the tree, its journal
and its index are the durable state, and the lease orders two actors over one tree.
Every method is O(1) on the actor's thread; commands run on the service's worker.
"""

from __future__ import annotations

from pathlib import Path

from akgentic.core.agent import Akgent
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
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
