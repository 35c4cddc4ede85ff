"""The ``a2a`` plugin's hook implementations (kept cheap to import)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from akgentic.plugin_api import AgentClassSpec, MessageTypeSpec, WebRoutesSpec, hookimpl

if TYPE_CHECKING:
    from akgentic.plugin_api import ConsoleService


def _build(service: ConsoleService) -> object:
    from akgentic_a2a.server import build_app

    return build_app(service)


@hookimpl
def akgentic_web_routes() -> Iterable[WebRoutesSpec]:
    """Every team running in ``akgentic serve`` as an A2A agent, under ``/a2a/{team_id}``."""
    return [WebRoutesSpec(name="a2a", prefix="/a2a", build=_build)]


@hookimpl
def akgentic_agent_classes() -> Iterable[AgentClassSpec]:
    """``RemoteAgent``: a remote A2A agent as a member of a team."""
    from akgentic_a2a.remote import RemoteAgent

    return [
        AgentClassSpec(
            name="RemoteAgent",
            agent_class=RemoteAgent,
            description="A remote A2A agent as a team member",
        )
    ]


@hookimpl
def akgentic_message_types() -> Iterable[MessageTypeSpec]:
    """``A2ATurn``: an A2A client's message, as the team's log keeps it."""
    from akgentic_a2a.messages import A2ATurn

    return [
        MessageTypeSpec(
            name="A2ATurn",
            message_class=A2ATurn,
            description="A message an A2A client sent to the team",
        )
    ]
