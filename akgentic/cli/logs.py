"""Where the commands that run teams send the log: one line per problem, or all of it.

A failed turn is reported where the conversation is printed, in one line (its
``TurnFailed`` cause); its traceback is kept in the team's event log (the
``ErrorMessage``'s ``traceback``, see ``akgentic team inspect --events``). On the
screen, without ``--debug``, warnings and errors are one line each, with no
traceback, and the turn failures the conversation already shows are not repeated.
With ``--debug``, every record from INFO up is shown with its full traceback.
A non-interactive command whose last turn failed exits with :data:`TURN_FAILED_EXIT`
(:func:`exit_if_turn_failed`), once the team is stopped and saved.
"""

from __future__ import annotations

import logging
import sys
from typing import Annotated

import typer

__all__ = ["TURN_FAILED_EXIT", "DebugOption", "configure_logging", "exit_if_turn_failed"]

#: Exit code of a non-interactive run whose last turn failed.
TURN_FAILED_EXIT = 3

DebugOption = Annotated[
    bool,
    typer.Option(
        "--debug",
        help="Show the log on stderr, tracebacks included (failed turns are one line otherwise).",
    ),
]

# The record the actor runtime writes for a turn that raised (the conversation shows it).
_TURN_FAILURE_LOGGER = "akgentic.core.agent"
_HANDLER_NAME = "akgentic-cli"


class _OneLine(logging.Formatter):
    """``level logger: message``, with no traceback or stack."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.name}: {record.getMessage()}"


def _not_a_turn_failure(record: logging.LogRecord) -> bool:
    return not (record.name == _TURN_FAILURE_LOGGER and record.exc_info)


def configure_logging(debug: bool) -> None:
    """Install the stderr handler of a team-running command (idempotent)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler.get_name() == _HANDLER_NAME:
            root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_HANDLER_NAME)
    if debug:
        handler.setLevel(logging.INFO)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.setLevel(min(root.level or logging.WARNING, logging.INFO))
    else:
        handler.setLevel(logging.WARNING)
        handler.setFormatter(_OneLine())
        handler.addFilter(_not_a_turn_failure)
    root.addHandler(handler)


def exit_if_turn_failed(interactive: bool, last_turn_failed: bool) -> None:
    """Exit with :data:`TURN_FAILED_EXIT` when a non-interactive run's last turn failed.

    In a chat the human saw the failure and went on (or left); only a scripted run,
    whose caller reads the exit code, is told this way.
    """
    if not interactive and last_turn_failed:
        raise typer.Exit(TURN_FAILED_EXIT)
