"""Hook implementation of the otel plugin: ``akgentic team trace ID``.

OpenTelemetry is imported only when the command runs, so discovering this plugin
costs Typer alone.
"""

from __future__ import annotations

from collections.abc import Mapping

import typer

from akgentic.plugin_api import hookimpl


@hookimpl
def akgentic_cli(app: typer.Typer, groups: Mapping[str, typer.Typer]) -> None:
    """Add ``akgentic team trace ID`` to the kernel's ``team`` group."""
    from akgentic_otel.cli import trace_command

    team = groups.get("team")
    if team is not None:
        team.command("trace")(trace_command)
