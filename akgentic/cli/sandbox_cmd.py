"""``akgentic sandbox``: check what a host's sandbox backends contain; run one command.

``check`` runs the escape probes of :mod:`akgentic.sandbox.probes` on every usable
backend (or the one named) and prints a table; it exits 0 when every probe was
contained, 1 when one was not, 2 when no backend could run. ``run`` runs one command
in a temporary tree on the backend the selection rules choose and exits with its code.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

__all__ = ["sandbox_app"]

_BACKEND_HELP = "Backend name (default: AKGENTIC_SANDBOX_BACKEND, else the first usable)."
BackendOption = Annotated[str | None, typer.Option("--backend", "-b", help=_BACKEND_HELP)]


def sandbox_app() -> typer.Typer:
    """The ``sandbox`` command group."""
    app = typer.Typer(help="Check and use the command sandboxes.", no_args_is_help=True)

    @app.command("check")
    def check(backend: BackendOption = None) -> None:
        """Run hostile escape probes on this host's sandbox backends and show what held."""
        from akgentic.plugins import get_host
        from akgentic.sandbox import backend_statuses
        from akgentic.sandbox.probes import PROBES, run_probes

        out, err = Console(), Console(stderr=True)
        specs = get_host().registry.sandbox_backends()
        statuses = backend_statuses(specs)
        if backend is not None:
            statuses = [s for s in statuses if s.name == backend] or [
                s for s in backend_statuses({}) if s.name == backend
            ]
            if not statuses:
                err.print(f"[red]error:[/red] no sandbox backend named {backend!r}")
                raise typer.Exit(2)
        ran = 0
        escaped = 0
        for status in statuses:
            if not status.usable:
                out.print(
                    f"[yellow]{status.name}[/yellow]: not checked: {status.reason}"
                    + (f" (to use it: {status.install_hint})" if status.install_hint else ""),
                    highlight=False,
                )
                continue
            table = Table(title=f"{status.name}: {status.isolation}", title_justify="left")
            table.add_column("probe")
            table.add_column("attempt")
            table.add_column("result")
            table.add_column("detail")
            threats = {p.name: p.threat for p in PROBES}
            for outcome in run_probes(specs[status.name].factory):
                escaped += not outcome.contained
                verdict = (
                    "[green]contained[/green]" if outcome.contained else "[red]NOT CONTAINED[/red]"
                )
                table.add_row(outcome.name, threats[outcome.name], verdict, outcome.detail)
            out.print(table)
            ran += 1
        if ran == 0:
            err.print("[red]error:[/red] no sandbox backend can run on this host")
            raise typer.Exit(2)
        out.print(
            "every probe was contained" if not escaped else f"{escaped} probe(s) NOT contained"
        )
        raise typer.Exit(1 if escaped else 0)

    @app.command(
        "run", context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True}
    )
    def run(
        command: Annotated[
            list[str], typer.Argument(help="The command and its arguments (after --).")
        ],
        backend: BackendOption = None,
        timeout: Annotated[float, typer.Option(help="Time budget in seconds.")] = 20.0,
        network: Annotated[bool, typer.Option(help="Turn the network on.")] = False,
    ) -> None:
        """Run one command, with no shell, in a temporary tree; exit with its code."""
        from akgentic.cli.timeouts import timeout_problem
        from akgentic.sandbox import ResourceLimits, SandboxError, resolve_sandbox_backend

        err = Console(stderr=True)
        problem = timeout_problem(timeout)
        if problem:
            err.print(f"[red]error:[/red] {problem}", highlight=False, soft_wrap=True)
            raise typer.Exit(2)
        try:
            spec = resolve_sandbox_backend(backend)
        except SandboxError as exc:
            err.print(f"[red]error:[/red] {exc}", highlight=False)
            raise typer.Exit(2) from None
        instance = spec.factory()
        with tempfile.TemporaryDirectory(prefix="akgentic-run-") as tmp:
            tree = Path(tmp) / "tree"
            tree.mkdir()
            try:
                instance.prepare(tree, limits=ResourceLimits(network=network), timeout_s=120)
                result = instance.run(command, cwd="", env={}, timeout_s=timeout)
            except SandboxError as exc:
                err.print(f"[red]error:[/red] {exc}", highlight=False)
                raise typer.Exit(2) from None
            finally:
                instance.close()
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        if result.timed_out:
            err.print(f"[yellow]timed out after {timeout:g}s and was killed[/yellow]")
        for stream, cut in (
            ("stdout", result.stdout_truncated),
            ("stderr", result.stderr_truncated),
        ):
            if cut:
                err.print(f"[yellow]{stream} was truncated by the sandbox[/yellow]")
        raise typer.Exit(result.exit_code)

    return app
