"""``akgentic run CARD.yaml``: create a team from a card and chat with it.

Every message a member sends is printed as it happens (Rich, one colour per member).
What you type goes to the team:

- plain text reaches every supervisor (the first layer of ``members``), sent by the
  card's entry point;
- ``@Name text`` reaches only that member;
- ``/command args`` is run by the lead (the first supervisor) through its command
  registry, e.g. ``/team_members`` or ``/hire_member Researcher``; ``@Name /command``
  runs it on another member. The result comes back as a notification;
- ``/help`` lists the commands each agent announced; ``/quit`` leaves at once, the end
  of input (Ctrl+D, or a piped script) once the team is idle.

Leaving, Ctrl+C included, stops the team; the store keeps it, so
``akgentic team resume ID`` brings it back. With ``--send`` (repeatable) and no
terminal, the messages are delivered, the command waits until the team is idle
(at most ``--timeout`` seconds), then stops: the scripted, non-interactive form.
A turn that fails is one line where the conversation is printed (the cause in plain
words; the traceback is in the team's event log, or on the screen with ``--debug``).
A non-interactive run whose last turn failed exits with code 3
(:data:`TURN_FAILED_EXIT`), once the team is stopped and saved.
``--scripted SCRIPT.yaml`` answers for the members a team script names (see
:mod:`akgentic.cli.team_script`), so a team runs with no model and no key.
"""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from akgentic.cli.card_input import card_to_start
from akgentic.cli.logs import TURN_FAILED_EXIT, DebugOption, configure_logging, exit_if_turn_failed
from akgentic.cli.models import BaseUrlOption, ModelOption
from akgentic.cli.scripted import ScriptedOption
from akgentic.cli.session import (
    DEFAULT_TIMEOUT,
    LEAVE,
    ConversationPrinter,
    InteractiveOption,
    MetadataOption,
    PathOption,
    SendOption,
    StoreOption,
    TimeoutOption,
    cli_errors,
    fail,
    managed_teams,
    open_store,
    print_help,
    run_alone,
)
from akgentic.cli.timeouts import timeout_problem

if TYPE_CHECKING:
    from akgentic.team.manager import TeamManager
    from akgentic.team.runtime import TeamRuntime

__all__ = ["TURN_FAILED_EXIT", "chat", "run_command"]


def chat(
    console: Console,
    printer: ConversationPrinter,
    runtime: TeamRuntime,
    sends: list[str],
    interactive: bool,
    timeout: float,
) -> None:
    """Deliver ``sends``; then read lines from stdin (interactive) or wait until idle.

    Returns on ``/quit`` at once, at the end of input or with ``interactive=False`` once
    the team is idle (at most ``timeout`` seconds). KeyboardInterrupt propagates.
    """
    from akgentic.agent.session import route_line

    for text in sends:
        problem = route_line(runtime, text)
        if problem:
            console.print(f"[red]not sent:[/red] {problem}", soft_wrap=True)
    if not interactive:
        if not runtime.wait_idle(timeout):
            console.print(
                f"[yellow]warning:[/yellow] team still busy after {timeout:g} s; stopping"
            )
        return
    print_help(console, printer, runtime)
    while True:
        line = sys.stdin.readline()
        if not line:  # end of input (a piped script): let the team finish first
            if not runtime.wait_idle(timeout):
                console.print(f"[yellow]warning:[/yellow] team still busy after {timeout:g} s")
            return
        text = line.strip()
        if text in LEAVE:
            return
        if text == "/help":
            print_help(console, printer, runtime)
            continue
        problem = route_line(runtime, text)
        if problem:
            console.print(f"[red]not sent:[/red] {problem}", soft_wrap=True)


def _stop(manager: TeamManager, runtime: TeamRuntime, console: Console) -> None:
    manager.stop_team(runtime.id)
    console.print(
        f"team {runtime.id} stopped and saved; resume it with: akgentic team resume {runtime.id}",
        soft_wrap=True,
        highlight=False,
    )


def run_command(
    card: Annotated[Path, typer.Argument(help="Team card YAML file.")],
    send: SendOption = None,
    interactive: InteractiveOption = None,
    timeout: TimeoutOption = DEFAULT_TIMEOUT,
    store: StoreOption = None,
    path: PathOption = None,
    metadata: MetadataOption = None,
    scripted: ScriptedOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    debug: DebugOption = False,
) -> None:
    """Create a team from CARD and chat with it; leaving (or Ctrl+C) stops and saves it."""
    configure_logging(debug)
    console = Console(highlight=False)
    with cli_errors(), ExitStack() as stack:
        problem = timeout_problem(timeout)
        if problem:
            fail(problem, 2)
        team_card, value = card_to_start(card, path, metadata, scripted, stack, model, base_url)
        talk = sys.stdin.isatty() and not send if interactive is None else interactive
        printer = ConversationPrinter(console, rich=True)
        with managed_teams(open_store(store, must_exist=False), printer) as manager:
            runtime = manager.create_team(team_card, metadata=value)
            console.print(
                f"[bold]{team_card.name or 'team'}[/bold] is running (id {runtime.id})",
                soft_wrap=True,
            )
            try:
                chat(console, printer, runtime, list(send or []), talk, timeout)
            except KeyboardInterrupt:
                console.print("\ninterrupted: stopping the team")
            finally:
                _stop(manager, runtime, console)
        exit_if_turn_failed(talk, printer.last_turn_failed)


def _main() -> None:  # pragma: no cover - exercised through subprocesses
    run_alone(
        "run",
        run_command,
        "akgentic run, on its own (before it is mounted in the main application).",
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    _main()
