"""Pieces shared by the commands that run teams (``team``, ``run``, ``demo``).

- option types (``--store``, ``--path``, ``--send``, ``--timeout``...);
- :func:`cli_errors`: expected failures become one ``error:`` line and an exit code
  (2 invalid input, 1 operation impossible);
- :func:`import_roots` / :func:`open_store`: where agent classes and the store come from;
- :class:`ConversationPrinter`: an event subscriber printing what members say, live;
- :func:`managed_teams`: an actor system and a ``TeamManager`` that are always shut down,
  with SIGTERM and SIGHUP stopping the teams as cleanly as Ctrl+C (SIGINT) does;

Everything heavy (actors, stores, pydantic) is imported inside the functions, so
building the command-line application stays cheap.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn
from uuid import UUID

import typer
from rich.console import Console
from rich.text import Text

from akgentic.cli.progress import TurnProgress

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message
    from akgentic.team.card import TeamCard
    from akgentic.team.manager import TeamManager
    from akgentic.team.runtime import TeamRuntime
    from akgentic.team.store import EventStore

__all__ = [
    "DEFAULT_TIMEOUT",
    "LEAVE",
    "PATH_ENV_VAR",
    "CliError",
    "ConversationPrinter",
    "InteractiveOption",
    "MetadataOption",
    "PathOption",
    "SendOption",
    "StoreOption",
    "TimeoutOption",
    "cli_errors",
    "err_console",
    "fail",
    "import_roots",
    "managed_teams",
    "missing_store",
    "open_store",
    "pairs",
    "print_error",
    "print_help",
    "run_alone",
    "stop_signals_interrupt",
    "store_path_problem",
    "store_url",
]

DEFAULT_TIMEOUT = 120.0
#: Lines that end a chat session at once.
LEAVE = ("/quit", "/exit")
#: Directories (``os.pathsep``-separated) to import agent classes from, like PYTHONPATH.
PATH_ENV_VAR = "AKGENTIC_PATH"

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Event store URL (default: $AKGENTIC_STORE, else sqlite:///.akgentic/akgentic.db).",
        show_default=False,
    ),
]
PathOption = Annotated[
    list[Path] | None,
    typer.Option("--path", help="Extra directory to import agent classes from (repeatable)."),
]
SendOption = Annotated[
    list[str] | None, typer.Option("--send", help="Message to send to the team (repeatable).")
]
InteractiveOption = Annotated[
    bool | None,
    typer.Option(
        "--interactive/--no-interactive",
        help="Chat with the team on stdin (default: when stdin is a terminal).",
        show_default=False,
    ),
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout", help="Seconds to wait for the team to become idle (--no-interactive)."
    ),
]
MetadataOption = Annotated[
    list[str] | None, typer.Option("--metadata", help="Metadata KEY=VALUE (repeatable).")
]

err_console = Console(stderr=True, highlight=False, soft_wrap=True)

#: Signals that stop a command's teams cleanly; SIGTERM is also how ``akgentic team
#: stop`` in another process asks this one to stop its team. SIGINT is among them
#: although Python maps it to KeyboardInterrupt by itself, because it does so only
#: when the parent left SIGINT alone: a process started in the background by a
#: non-interactive shell (a CI script, ``cmd &``) inherits SIGINT ignored, and Ctrl+C
#: sent to it later by a supervisor or a test would do nothing at all.
STOP_SIGNALS: tuple[int, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def print_error(message: object) -> None:
    """``error: <message>`` on stderr, one logical line, the message taken literally."""
    err_console.print(Text.assemble(("error:", "red"), " ", str(message)))


class CliError(Exception):
    """An expected failure: printed as one ``error:`` line, exits with ``code``."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def fail(message: str, code: int = 1) -> NoReturn:
    raise CliError(message, code)


def run_alone(
    name: str, command: Callable[..., None], about: str, *, no_args_is_help: bool = True
) -> None:
    """Run one command as ``akgentic NAME ...`` without building the whole application.

    Tests start commands this way in a subprocess: no plugin's commands are
    collected, and the command line is the same as under the full application.
    """
    root = typer.Typer(
        add_completion=False, pretty_exceptions_enable=False, no_args_is_help=no_args_is_help
    )
    root.command(name)(command)

    def group() -> None:
        pass

    group.__doc__ = about
    root.callback()(group)
    root(prog_name="akgentic")


def check_models(team_card: TeamCard) -> None:
    """Exit 2 with one error line when a member's model cannot be built (nothing starts)."""
    from akgentic.agent.session import model_problem

    problem = model_problem(team_card)
    if problem is not None:
        fail(problem, code=2)


@contextmanager
def cli_errors() -> Iterator[None]:
    """Turn expected failures into one ``error:`` line and an exit code."""
    from pydantic import ValidationError

    from akgentic.plugins import PluginError, UnknownPluginNameError
    from akgentic.team.card_yaml import TeamCardValidationError
    from akgentic.team.errors import (
        ActivationTimeoutError,
        EventStoreError,
        TeamError,
        TeamNotFoundError,
        TeamStateError,
    )

    try:
        yield
    except CliError as exc:
        print_error(exc)
        raise typer.Exit(exc.code) from None
    except TeamCardValidationError as exc:
        if len(exc.problems) == 1 and not exc.problems[0].location and exc.problems[0].line is None:
            # About the file as a whole (its size, unreadable): one line says it.
            print_error(f"{exc.source}: {exc.problems[0].message}")
            raise typer.Exit(2) from None
        print_error(f"{exc.source}: invalid team card")
        for problem in exc.problems:
            err_console.print(f"  {problem}", markup=False)
        raise typer.Exit(2) from None
    except ValidationError as exc:
        print_error(f"invalid value: {exc}")
        raise typer.Exit(2) from None
    except UnknownPluginNameError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    except PluginError as exc:
        # Two plugins claiming one name, strict mode: the installation, not the input.
        print_error(exc)
        raise typer.Exit(1) from None
    except (TeamNotFoundError, TeamStateError, ActivationTimeoutError) as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    except (EventStoreError, TeamError) as exc:  # a fork refused, or its point out of range...
        code = 2 if isinstance(exc, ValueError) else 1
        print_error(exc)
        raise typer.Exit(code) from None
    except OSError as exc:  # the file system refused something no store translated
        where = f" ({exc.filename})" if exc.filename else ""
        print_error(f"{exc.strerror or exc}{where}")
        raise typer.Exit(1) from None


def import_roots(card: Path | None, extra: list[Path] | None) -> None:
    """Put the card's directory, ``--path`` dirs, ``$AKGENTIC_PATH`` and the cwd on sys.path."""
    env = [Path(p) for p in os.environ.get(PATH_ENV_VAR, "").split(os.pathsep) if p.strip()]
    roots = [*(extra or []), *env, Path.cwd()]
    if card is not None:
        roots.insert(0, card.resolve().parent)
    for root in reversed(roots):
        text = str(root.resolve())
        if text not in sys.path:
            sys.path.insert(0, text)


def pairs(items: list[str] | None, what: str) -> dict[str, str]:
    """``KEY=VALUE`` options as a dict (exit code 2 on a malformed item)."""
    found: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"{what} must be KEY=VALUE, got {item!r}", 2)
        found[key.strip()] = value
    return found


def store_url(url: str | None) -> str:
    from akgentic.team.urls import default_store_url

    return url or default_store_url()


def _file_store_path(url: str) -> tuple[str, Path] | None:
    from akgentic.team.urls import file_store_path

    return file_store_path(url)


def missing_store(url: str) -> str | None:
    """For a file-backed store, a message when its file or directory does not exist."""
    from akgentic.team.urls import missing_store as missing

    return missing(url)


def store_path_problem(url: str, *, must_exist: bool) -> str | None:
    """What makes a file-backed store's path unusable, before anything touches it.

    A path under an existing file can never hold a store; an existing empty
    file is refused by commands that only read (``must_exist``), so that
    listing or inspecting never turns somebody's file into a database.
    """
    found = _file_store_path(url)
    if found is None:
        return None
    scheme, path = found
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"no store can be at {path}: {parent} is a file, not a directory"
            break
    if scheme == "sqlite" and must_exist and path.is_file() and path.stat().st_size == 0:
        return (
            f"{path} is an empty file, not an akgentic store; nothing was written to it "
            f"(run `akgentic store init {url}` to make it one)"
        )
    if scheme == "yaml" and path.exists() and not path.is_dir():
        return f"{path} is a file, but a YAML store is a directory; name a directory"
    return None


def open_store(url: str | None, *, must_exist: bool) -> EventStore:
    from akgentic.team.urls import open_event_store, store_scheme

    target = store_url(url)
    store_scheme(target)  # a URL without a scheme fails here, before anything is created
    problem = store_path_problem(target, must_exist=must_exist)
    if problem is not None:
        fail(problem, 1)
    if must_exist:
        missing = missing_store(target)
        if missing is not None:
            fail(missing, 1)
    return open_event_store(target)


# ------------------------------------------------------------------ printing

_PALETTE = ("cyan", "magenta", "green", "yellow", "blue", "bright_red", "bright_cyan")


class ConversationPrinter:
    """Event subscriber printing what the team's members say to each other, live.

    ``rich=False`` prints ``@Sender -> @Recipient: text`` lines (what ``akgentic team``
    shows). ``rich=True`` colours each member, shows the intent of agent messages and
    announces members who join (hires included). Nothing is printed while a team is
    being restored: the replayed history is not news. The slash commands agents
    announce at start are collected in :attr:`commands` (agent name -> command names).
    """

    def __init__(self, console: Console, *, rich: bool = False) -> None:
        self.console = console
        self.rich = rich
        self.commands: dict[str, list[str]] = {}
        #: Whether the last turn the team finished failed (a non-interactive run's exit code).
        self.last_turn_failed = False
        self._failed_turns: set[UUID] = set()
        self._restoring = False
        self._lock = threading.Lock()
        self._colours: dict[str, str] = {}
        self.progress = TurnProgress(console) if rich else None

    # -- subscriber protocol ------------------------------------------------
    def on_message(self, msg: Message) -> None:
        from akgentic.core.messages.orchestrator import EventMessage, SentMessage, StartMessage
        from akgentic.tool.core.event import CommandsAnnouncedEvent

        if isinstance(msg, EventMessage) and isinstance(msg.event, CommandsAnnouncedEvent):
            with self._lock:
                self.commands[msg.event.agent.name] = [d.name for d in msg.event.commands]
            return
        if self._restoring:
            return
        if self.progress is not None:
            self.progress.on_message(msg)
        if self._turn_outcome(msg):
            return
        if isinstance(msg, SentMessage):
            content = getattr(msg.message, "content", None)
            if isinstance(content, str):
                sender = msg.sender.name if msg.sender is not None else "?"
                intent = getattr(msg.message, "type", None)
                self._said(sender, msg.recipient.name, content, intent)
        elif isinstance(msg, StartMessage) and self.rich:
            name, role = msg.config.name, msg.config.role
            if name.startswith(("#", "@Orchestrator")):
                return
            parent = msg.parent.name if msg.parent is not None else None
            by = f", started by {parent}" if parent and parent != "@Orchestrator" else ""
            with self._lock:
                line = Text("+ ", style="dim")
                line.append(name, style=self._colour(name))
                line.append(f" joined the team as {role}{by}", style="dim")
                self.console.print(line, soft_wrap=True)

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        self._restoring = restoring

    def on_stop_request(self, team_id: UUID) -> None:
        return None

    def on_stop(self, team_id: UUID) -> None:
        return None

    def _turn_outcome(self, msg: Message) -> bool:
        """Track how turns end; print a failed turn's cause on one line. True: handled."""
        from akgentic.core.messages.orchestrator import (
            ErrorMessage,
            EventMessage,
            ProcessedMessage,
            WarningMessage,
        )
        from akgentic.llm.events import TurnFailed

        sender = msg.sender.name if msg.sender is not None else "?"
        if isinstance(msg, ProcessedMessage):
            # A failed turn's report comes before the turn closes: the turn failed
            # when a report named it.
            self.last_turn_failed = msg.message_id in self._failed_turns
            self._failed_turns.discard(msg.message_id)
        elif isinstance(msg, EventMessage) and isinstance(msg.event, TurnFailed):
            self._failed(sender, msg.event.cause)
        elif isinstance(msg, ErrorMessage | WarningMessage):
            self.last_turn_failed = True
            if msg.current_message is not None:
                self._failed_turns.add(msg.current_message.id)
            # A TurnFailedError's line was printed from its TurnFailed event; a warning
            # (a usage limit) was told to the human in a message already.
            if isinstance(msg, ErrorMessage) and msg.content_type != "TurnFailedError":
                self._failed(sender, msg.content)
        else:
            return False
        return True

    def _failed(self, sender: str, cause: str) -> None:
        with self._lock:
            line = Text()
            if self.rich:
                line.append(sender, style=f"bold {self._colour(sender)}")
                line.append(" ✗ turn failed: ", style="bold red")
            else:
                line.append(f"{sender} turn failed: ")
            line.append(" ".join(cause.split()))
            self.console.print(line, soft_wrap=True)

    # -- rendering ----------------------------------------------------------
    def _colour(self, name: str) -> str:
        if name not in self._colours:
            self._colours[name] = _PALETTE[len(self._colours) % len(_PALETTE)]
        return self._colours[name]

    def _said(self, sender: str, recipient: str, content: str, intent: object) -> None:
        with self._lock:
            if not self.rich:
                self.console.print(
                    Text(f"{sender} -> {recipient}: {content}"), soft_wrap=True, markup=False
                )
                return
            line = Text()
            line.append(sender, style=f"bold {self._colour(sender)}")
            line.append(" → ", style="dim")
            line.append(recipient, style=self._colour(recipient))
            if isinstance(intent, str):
                line.append(f" ({intent})", style="dim")
            line.append(": ")
            line.append(content)
            self.console.print(line, soft_wrap=True)


# ------------------------------------------------------------------ running


@contextmanager
def managed_teams(
    store: EventStore, printer: ConversationPrinter | None = None
) -> Iterator[TeamManager]:
    """A ``TeamManager`` on a fresh actor system; on exit every team is stopped, all closed."""
    from akgentic.core.actor_system import ActorSystem
    from akgentic.team.manager import TeamManager

    system = ActorSystem()
    manager = TeamManager(
        system,
        store,
        subscribers=[printer] if printer is not None else [],
        stop_signal=int(signal.SIGTERM),
        on_claim_lost=_interrupt_on_claim_lost,
        # A session holds its team until it ends: idle, the team stops (the idle
        # delay) rather than passivating under the session's feet.
        passivate_after=None,
    )
    with stop_signals_interrupt(), stack_dumps_on_sigusr1():
        try:
            yield manager
        finally:
            from akgentic.agent.session import shut_down

            shut_down(manager, system, store)


@contextmanager
def stack_dumps_on_sigusr1() -> Iterator[None]:
    """While inside, SIGUSR1 prints every thread's stack to stderr; the process goes on.

    A command that seems stuck (a stop that does not end) can then be asked where
    it is: ``kill -USR1 PID``. Written by :mod:`faulthandler` from C, so it works
    even when the interpreter's threads are deadlocked.
    """
    import faulthandler

    usr1 = getattr(signal, "SIGUSR1", None)
    if usr1 is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    faulthandler.register(usr1, all_threads=True)
    try:
        yield
    finally:
        faulthandler.unregister(usr1)


def _interrupt_on_claim_lost(team_id: UUID, error: Exception) -> None:
    """Another process took the team over: end the command's session (its main thread).

    A real SIGINT aimed at the main thread also breaks a blocking read of stdin,
    which ``_thread.interrupt_main`` alone would not.
    """
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


@contextmanager
def stop_signals_interrupt() -> Iterator[None]:
    """While inside, SIGINT, SIGTERM and SIGHUP raise ``KeyboardInterrupt``.

    So a team run from the command line stops cleanly (recorded as stopped,
    every event written) whichever of these signals ends it. Only the main
    thread can install handlers; elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    previous = {sig: signal.signal(sig, interrupt) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def print_help(console: Console, printer: ConversationPrinter, runtime: TeamRuntime) -> None:
    """The chat banner (also ``/help``): how lines are routed, and each agent's commands."""
    lead = next(iter(runtime.supervisor_addrs), "-")
    console.print(
        "Type a message for the team, [bold]@Name text[/bold] for one member, "
        f"[bold]/command[/bold] for the lead ({lead}), [bold]/quit[/bold] to stop.",
        soft_wrap=True,
    )
    for agent, names in sorted(printer.commands.items()):
        console.print(f"  {agent}: " + " ".join(f"/{n}" for n in names), soft_wrap=True)
    if not printer.commands:
        console.print("  (no agent has announced its commands yet; /help again to see them)")
