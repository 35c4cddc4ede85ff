"""Hook implementation of the ag-ui plugin: its routes in ``akgentic serve``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from akgentic.plugin_api import WebRoutesSpec, hookimpl

if TYPE_CHECKING:
    from akgentic.plugin_api import ConsoleService


def build(service: ConsoleService) -> Any:
    """The AG-UI routes' application (the SDK is imported only when the console starts)."""
    from akgentic_ag_ui.app import build_app

    return build_app(service)


@hookimpl
def akgentic_web_routes() -> Iterable[WebRoutesSpec]:
    """``POST /ag-ui/{team_id}``: a run of the team as an AG-UI event stream."""
    return [
        WebRoutesSpec(
            name="ag-ui",
            prefix="/ag-ui",
            build=build,
            description="AG-UI 1.0 event streams of the teams, read from their event logs",
        )
    ]
