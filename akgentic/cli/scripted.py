"""``--scripted SCRIPT.yaml``: run a team on a scripted model instead of the card's.

The script says what each member's model answers, step by step (tool calls, messages,
text; see :mod:`akgentic.cli.team_script`). The replies are served by a local
OpenAI-compatible server for as long as the command runs, so a plugin author can
watch a card's tool being called by a real agent with no API key and no network.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from akgentic.cli.session import fail

if TYPE_CHECKING:
    from akgentic.team.card import TeamCard

__all__ = ["ScriptedOption", "scripted_models"]

ScriptedOption = Annotated[
    Path | None,
    typer.Option(
        "--scripted",
        help="Team script YAML: each member's model replies, in order (no API key needed).",
        show_default=False,
    ),
]


@contextmanager
def scripted_models(team_card: TeamCard, script: Path | None) -> Iterator[None]:
    """Serve ``script`` to the members it names while the block runs (nothing when None).

    A script that cannot be read, or names no member of the card, is an input error
    (exit 2) raised before anything starts.
    """
    if script is None:
        yield
        return
    from akgentic.cli.team_script import TeamScriptError, load_team_script, scripted_team

    try:
        served = scripted_team(team_card, load_team_script(script))
        served.__enter__()
    except TeamScriptError as exc:
        fail(str(exc), 2)
    try:
        yield
    finally:
        served.__exit__(None, None, None)
