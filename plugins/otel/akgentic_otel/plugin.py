"""Hook implementations of the otel plugin: ``akgentic team trace ID`` and live export.

OpenTelemetry is imported only when the command runs or a team exports live, so
discovering this plugin costs Typer alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import typer

from akgentic.plugin_api import hookimpl

if TYPE_CHECKING:
    from uuid import UUID

    from akgentic.plugin_api import EventSubscriber, TeamCard


@hookimpl
def akgentic_cli(app: typer.Typer, groups: Mapping[str, typer.Typer]) -> None:
    """Add ``akgentic team trace ID`` to the kernel's ``team`` group."""
    from akgentic_otel.cli import trace_command

    team = groups.get("team")
    if team is not None:
        team.command("trace")(trace_command)


@hookimpl
def akgentic_team_subscribers(team_card: TeamCard, team_id: UUID) -> Iterable[EventSubscriber]:
    """An ``OtelSubscriber`` when the card's ``telemetry:`` block or the environment asks.

    A malformed ``telemetry:`` block raises ``TeamCardError`` (its location first),
    which refuses the team's creation.
    """
    from akgentic_otel.switch import live_subscriber

    subscriber = live_subscriber(team_card, team_id)
    return [] if subscriber is None else [subscriber]
