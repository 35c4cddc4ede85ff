"""The ``core`` built-in plugin: what the kernel itself contributes.

It is essential (it cannot be disabled): team cards and stored logs name the
kernel's message types and its user proxy by the short names registered here,
and ``akgentic version`` comes from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from akgentic.plugins import AgentClassSpec, MessageTypeSpec, RuntimeSpec, hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def akgentic_cli(app: typer.Typer) -> None:
    """Add ``akgentic version``."""
    import typer

    @app.command("version")
    def version() -> None:
        """Print the kernel version."""
        from akgentic import __version__

        typer.echo(__version__)


@hookimpl
def akgentic_message_types() -> Iterable[MessageTypeSpec]:
    """The business messages of the core and the team layer, by class name."""
    from akgentic.core.messages import CancelMessage, ResultMessage, UserMessage
    from akgentic.team.messages import WelcomeMessage

    return [
        MessageTypeSpec(name=cls.__name__, message_class=cls, description=_first_line(cls))
        for cls in (UserMessage, ResultMessage, CancelMessage, WelcomeMessage)
    ]


@hookimpl
def akgentic_agent_classes() -> Iterable[AgentClassSpec]:
    """The core's user proxy (the human's seat in a team)."""
    from akgentic.core import UserProxy

    return [
        AgentClassSpec(name="UserProxy", agent_class=UserProxy, description=_first_line(UserProxy))
    ]


@hookimpl
def akgentic_runtimes() -> Iterable[RuntimeSpec]:
    """The ``local`` runtime: teams in the calling process, behind the cluster client API."""
    from akgentic.cluster.local import connect_local

    return [
        RuntimeSpec(
            name="local",
            description="Teams run in this process (the default; no fleet)",
            schemes=("local",),
            connect=connect_local,
            in_process=True,
        )
    ]


def _first_line(obj: object) -> str:
    lines = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    return lines[0] if lines else ""
